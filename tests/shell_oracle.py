"""The truth for the guard's differential test: run a shell program with real bash in a throwaway git
checkout, with recording stand-ins for ``gh``, ``curl`` and ``wget`` first on PATH, and read back what
they received. Nothing reaches a network: the stand-ins only record, and git's GitHub URLs are
rewritten (``url.<dir>.insteadOf``) to a local bare repository whose pre-push hook records and refuses.

`Sandbox.run(program)` returns the `Call`s made; `truth(calls)` turns them into merge keys with a
small reference reading of gh's, curl's and git's argv (independent of hook/, the code under test):
``("pr", repo, number)``, ``("branch", repo, branch)``, ``("graphql",)`` and ``("push", repo, branch)``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = "acme/widgets"
BRANCH = "feature/login"
MERGE_MUTATIONS = ("mergePullRequest", "enablePullRequestAutoMerge", "enqueuePullRequest", "mergeBranch",
                   "updateRef")

_STAND_IN = """#!/bin/sh
f=$(mktemp "$MH_ORACLE_LOG/call.XXXXXX") || exit 97
{ printf '%s\\0' "${0##*/}" "$PWD" "${GH_REPO-}" "$#"; printf '%s\\0' "$@"; } > "$f"
case " $* " in  # read stdin only when told to: a script fed to bash on stdin must stay bash's
  *" --input "*|*"@-"*) cat > "$f.stdin" 2>/dev/null ;;
esac
exit 0
"""
_PRE_PUSH = """#!/bin/sh
f=$(mktemp "$MH_ORACLE_LOG/push.XXXXXX") || exit 97
{ printf '%s\\0' git-push "$PWD" "$1" "$2"; cat; } > "$f"
exit 1
"""


# Programs whose output a generated program runs (text produced at run time). `emit` prints its
# arguments: nothing in the guard knows that, so whatever is run from it must come back undetermined.
# The others print what their real programs are documented to print (hook/detect/shellenv.py trusts
# that); direnv's exports GH_REPO, as an .envrc may.
_PRINTERS = {
    "emit": '#!/bin/sh\nprintf "%s\\n" "$*"\n',
    "ssh-agent": "#!/bin/sh\necho 'SSH_AUTH_SOCK=/tmp/ssh-x/agent.1; export SSH_AUTH_SOCK;'\n"
                 "echo 'SSH_AGENT_PID=1; export SSH_AGENT_PID;'\necho 'echo Agent pid 1;'\n",
    "brew": "#!/bin/sh\necho 'export HOMEBREW_PREFIX=\"/opt/homebrew\";'\n"
            "echo 'export PATH=\"/opt/homebrew/bin${PATH+:$PATH}\";'\n",
    "direnv": "#!/bin/sh\necho 'export GH_REPO=acme/other;'\n",
}


class Call:
    """One run of a stand-in: program name, working directory, ``GH_REPO``, argv, stdin."""

    __slots__ = ("argv", "cwd", "gh_repo", "program", "stdin")

    def __init__(self, program: str, cwd: str, gh_repo: str, argv: list[str], stdin: str) -> None:
        self.program, self.cwd, self.gh_repo, self.argv, self.stdin = program, cwd, gh_repo, argv, stdin

    def __repr__(self) -> str:
        return f"Call({self.program} {self.argv!r} cwd={self.cwd} GH_REPO={self.gh_repo!r})"


class Sandbox:
    """A checkout of acme/widgets on branch feature/login, a home, stand-ins first on PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin, self.home, self.log = root / "bin", root / "home", root / "log"
        self.checkout = root / "widgets"
        for directory in (self.bin, self.home, self.log, self.checkout):
            directory.mkdir(parents=True, exist_ok=True)
        for name in ("gh", "curl", "wget"):
            path = self.bin / name
            path.write_text(_STAND_IN)
            path.chmod(0o755)
        for name, text in _PRINTERS.items():
            path = self.bin / name
            path.write_text(text)
            path.chmod(0o755)
        (self.bin / "python3").symlink_to(sys.executable)
        remotes = root / "remotes"
        (self.home / ".gitconfig").write_text(
            "[user]\n\tname = t\n\temail = t@example.com\n"
            f'[url "{remotes}/"]\n\tinsteadOf = https://github.com/\n\tinsteadOf = git@github.com:\n'
            "[init]\n\tdefaultBranch = main\n"
            # aliases the text of a command does not show: the guard must read them where git does
            "[alias]\n\tmm = !gh pr merge 9 -R acme/other\n[include]\n\tpath = extra.gitconfig\n")
        (self.home / "extra.gitconfig").write_text("[alias]\n\tpp = push origin HEAD:main\n")
        self.tmux = root / "tmux"  # a tmux server of its own: sessions a program starts run here, later
        self.tmux.mkdir(exist_ok=True)
        # The machine's programs as the tests look them up (tests/needs.py): a row the probe lets run finds
        # its program here too, and a machine without one skips the row instead of running it blind.
        self.env = {"PATH": f"{self.bin}:{os.environ.get('PATH') or os.defpath}", "HOME": str(self.home),
                    "MH_ORACLE_LOG": str(self.log), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
                    "LC_ALL": "C.UTF-8", "TMPDIR": str(root), "TMUX_TMPDIR": str(self.tmux),
                    "SHELL": "/bin/sh", "TERM": "dumb"}
        git = {"check": True, "capture_output": True, "env": self.env}
        for bare in (REPO, "acme/other"):  # a push to either is recorded (and refused) by the checkout's hook
            subprocess.run(["git", "init", "-q", "--bare", str(remotes / f"{bare}.git")], **git)  # type: ignore[call-overload]
        subprocess.run(["git", "init", "-q", "-b", BRANCH, str(self.checkout)], **git)  # type: ignore[call-overload]
        subprocess.run(["git", "-C", str(self.checkout), "remote", "add", "origin",  # type: ignore[call-overload]
                        f"https://github.com/{REPO}.git"], **git)
        subprocess.run(["git", "-C", str(self.checkout), "commit", "-q", "--allow-empty", "-m", "one"],  # type: ignore[call-overload]
                       **git)
        (self.checkout / "sub").mkdir()
        with (self.checkout / ".git" / "config").open("a") as config:
            config.write("[alias]\n\tlm = !gh pr merge 11\n\tnm = log -1 --oneline\n")
        hook = self.checkout / ".git" / "hooks" / "pre-push"
        hook.write_text(_PRE_PUSH)
        hook.chmod(0o755)

    def run(self, program: str, timeout: float = 20) -> tuple[list[Call], subprocess.CompletedProcess[bytes]]:
        shutil.rmtree(self.log)
        self.log.mkdir()
        done = subprocess.run(["bash", "--noprofile", "--norc", "-c", program], cwd=self.checkout, env=self.env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False)
        self._wait_for_tmux(timeout)
        return self.calls(), done

    def _wait_for_tmux(self, timeout: float) -> None:
        """A tmux session the program started runs its command after the program ended: wait until the
        server has no session left (it exits then), so what it ran is in this program's log."""
        if not any(self.tmux.glob("tmux-*/*")):
            return  # no server was ever started
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive = subprocess.run(["tmux", "has-session"], env=self.env, capture_output=True, check=False)
            if alive.returncode != 0:
                return
            time.sleep(0.05)  # polling a condition (the server's sessions), with a deadline
        subprocess.run(["tmux", "kill-server"], env=self.env, capture_output=True, check=False)

    def calls(self) -> list[Call]:
        out = []
        for path in sorted(self.log.iterdir()):
            if path.name.endswith(".stdin"):
                continue
            fields = path.read_bytes().decode("utf-8", "surrogateescape").split("\0")
            if path.name.startswith("push."):
                program, cwd, remote, url = fields[:4]
                out.append(Call(program, cwd, "", [remote, url, *"\0".join(fields[4:]).split()], ""))
                continue
            program, cwd, gh_repo, count = fields[:4]
            argv = fields[4 : 4 + int(count)]
            stdin_path = path.with_name(path.name + ".stdin")
            stdin = stdin_path.read_text(errors="replace") if stdin_path.exists() else ""
            out.append(Call(program, cwd, gh_repo, argv, stdin))
        return out

    # --- the reference reading of what the stand-ins received -------------------------------------
    def truth(self, calls: list[Call]) -> set[tuple[object, ...]]:
        keys: set[tuple[object, ...]] = set()
        for call in calls:
            if call.program == "gh":
                keys |= self._gh(call)
            elif call.program in ("curl", "wget"):
                keys |= _http(call)
            elif call.program == "git-push":
                keys |= self._push(call)
        return keys

    def cwd_repo(self, cwd: str) -> str | None:
        inside = Path(cwd) == self.checkout or self.checkout in Path(cwd).parents
        return REPO if inside else None

    def _gh(self, call: Call) -> set[tuple[object, ...]]:
        argv = call.argv
        if argv[:1] == ["api"]:
            return _gh_api(argv[1:], call.gh_repo or self.cwd_repo(call.cwd) or "", call.stdin)
        repo_flag, words, i = None, [], 0
        bools = {"--squash", "-s", "--merge", "-m", "--rebase", "-r", "--delete-branch", "-d", "--auto", "--admin"}
        while i < len(argv):
            a = argv[i]
            if a in ("-R", "--repo"):
                repo_flag, i = argv[i + 1], i + 2
                continue
            if a.startswith(("--repo=", "-R=")):
                repo_flag = a.split("=", 1)[1]
            elif a.startswith("-R"):
                repo_flag = a[2:]
            elif a in ("--body", "-b", "--subject", "-t", "--body-file", "-F"):
                i += 1
            elif a in ("--help", "-h", "--disable-auto") or a in ("--help=true", "--disable-auto=true"):
                return set()
            elif a.partition("=")[0] in ("--help", "--disable-auto", *bools) and a.endswith(("=true", "=false")):
                pass  # a bool spelled out; only --help=true and --disable-auto=true stop the merge
            elif a.startswith("-") and not a.startswith("--") and len(a) > 2 and all(f"-{c}" in bools for c in a[1:]):
                pass  # a cluster of bool flags (-sd)
            elif a.startswith("-") and a not in bools:
                raise AssertionError(f"the reference reading does not know {a!r}: extend it")
            elif not a.startswith("-"):
                words.append(a)
            i += 1
        if words[:2] != ["pr", "merge"] or len(words) > 3:
            return set()
        repo = repo_flag or call.gh_repo or self.cwd_repo(call.cwd)
        if repo is None:
            return set()
        selector = words[2] if len(words) == 3 else None
        if selector is None:
            return {("branch", repo.lower(), BRANCH)}
        if selector.startswith("https://github.com/"):
            owner, name, _, number = selector.removeprefix("https://github.com/").split("/")[:4]
            return {("pr", f"{owner}/{name}".lower(), int(number))}
        number = selector.removeprefix("#")
        if number.isdigit():
            return {("pr", repo.lower(), int(number))}
        return {("branch", repo.lower(), selector)}

    def _push(self, call: Call) -> set[tuple[object, ...]]:
        _remote, url, *refs = call.argv
        repo = url.removeprefix(str(self.root / "remotes") + "/").removesuffix(".git")
        keys: set[tuple[object, ...]] = set()
        for k in range(0, len(refs) - 3, 4):
            local, _sha, remote_ref, _old = refs[k : k + 4]
            target = remote_ref.removeprefix("refs/heads/")
            if target != local.removeprefix("refs/heads/"):
                keys.add(("push", repo.lower(), target))
        return keys


def _gh_api(args: list[str], default_repo: str, stdin: str) -> set[tuple[object, ...]]:
    method, endpoint, body, fields = None, None, "", False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-X", "--method"):
            method, i = args[i + 1], i + 2
            continue
        if a.startswith("-X") and len(a) > 2:
            method = a[2:]
        elif a.startswith("--method="):
            method = a.split("=", 1)[1]
        elif a in ("-f", "-F", "--raw-field", "--field"):
            fields, body, i = True, body + args[i + 1], i + 2
            continue
        elif a == "--input":
            fields, body, i = True, body + stdin, i + 2
            continue
        elif a.startswith("-"):
            raise AssertionError(f"the reference reading of gh api does not know {a!r}: extend it")
        elif endpoint is None:
            endpoint = a
        i += 1
    method = (method or ("POST" if fields else "GET")).upper()
    if endpoint == "graphql":
        return {("graphql",)} if any(m in body for m in MERGE_MUTATIONS) else set()
    owner, name = default_repo.split("/") if "/" in default_repo else ("", "")
    path = (endpoint or "").replace("{owner}", owner).replace("{repo}", name).strip("/").split("/")
    if method == "PUT" and len(path) == 6 and path[0] == "repos" and path[3] == "pulls" and path[5] == "merge":
        return {("pr", f"{path[1]}/{path[2]}".lower(), int(path[4]))}
    return set()


def _http(call: Call) -> set[tuple[object, ...]]:
    method, url, i, argv = None, None, 0, call.argv
    while i < len(argv):
        a = argv[i]
        if a in ("-X", "--request", "--method"):
            method, i = argv[i + 1], i + 2
            continue
        if a.startswith("-X") and len(a) > 2:
            method = a[2:]
        elif a.startswith("--method="):
            method = a.split("=", 1)[1]
        elif a in ("-H", "--header", "-d", "--data", "-o"):
            i += 1
        elif a.startswith("-") and a not in ("-s", "-S", "-sS", "-f", "-q", "-L"):
            raise AssertionError(f"the reference reading of {call.program} does not know {a!r}: extend it")
        elif not a.startswith("-"):
            url = a
        i += 1
    prefix = "https://api.github.com/repos/"
    if method != "PUT" or url is None or not url.startswith(prefix):
        return set()
    path = url.removeprefix(prefix).split("?")[0].split("/")
    if len(path) == 5 and path[2] == "pulls" and path[4] == "merge" and path[3].isdigit():
        return {("pr", f"{path[0]}/{path[1]}".lower(), int(path[3]))}
    return set()


def guard_keys(merges: object) -> tuple[set[tuple[object, ...]], bool]:
    """The guard's determined merge keys, and whether any merge was undetermined."""
    keys: set[tuple[object, ...]] = set()
    undetermined = False
    for m in merges:  # type: ignore[attr-defined]
        if m.undetermined:
            undetermined = True
            continue
        repo = (m.repo or "").lower()
        if m.via == "git_push":
            keys.add(("push", repo, m.push_target))
        elif m.pr is not None:
            keys.add(("pr", repo, m.pr))
        elif m.branch is not None:
            keys.add(("branch", repo, m.branch))
        else:
            keys.add(("unknown", m.via))
    return keys, undetermined


def environment(sandbox: Sandbox) -> dict[str, str]:
    """The environment the guard is told about (what the agent's shell would have)."""
    return {k: v for k, v in sandbox.env.items() if k in ("HOME", "PATH")} | {"PWD": str(sandbox.checkout)}


__all__ = ["BRANCH", "REPO", "Call", "Sandbox", "environment", "guard_keys", "os"]
