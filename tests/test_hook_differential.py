"""The guard against real bash (issue #8 item 2, design §6 "Soundness").

A hypothesis generator composes shell programs from the constructs agents and bypass attempts use
(quoting, parameter expansion, substitutions, functions, loops, heredocs, pipes, xargs, find -exec,
wrappers, python3 -c, brace expansion, arithmetic, arrays, set --/"$@", IFS, git aliases) around
merge and non-merge invocations of ``gh pr merge``, ``gh api`` (REST and GraphQL), ``curl`` and
``git push``. Each program runs under real bash in a throwaway checkout with recording stand-ins
first on PATH (tests/shell_oracle.py); what they received is the truth. The test fails on any
*determined* answer of the guard that disagrees with it, and reports how often the guard said
``undetermined``. Deterministic (derandomized) and bounded (MAX_EXAMPLES programs).
"""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hook.detect.toolcall import detect
from tests.differential_rows import ROWS
from tests.needs import available, needs, programs_in
from tests.shell_oracle import Sandbox, environment, guard_keys

MAX_EXAMPLES = 200
MAX_UNDETERMINED = 0.5  # above this the guard blocks too much: a regression even when sound
REPOS = ("acme/widgets", "acme/other")
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-")

Draw = st.DrawFn


class Invocation:
    """One program run: argv (``words[0]`` the program) and prefix assignments."""

    def __init__(self, words: list[str], prefix: str = "", shellable: bool = True) -> None:
        self.words, self.prefix, self.shellable = words, prefix, shellable


# --- what is invoked ---------------------------------------------------------------------------------

@st.composite
def gh_pr_merge(draw: Draw) -> Invocation:
    repo = draw(st.sampled_from(REPOS))
    selector = draw(st.sampled_from([None, "5", "#5", "7", f"https://github.com/{repo}/pull/5", "feature/login",
                                     "other-branch"]))
    form = draw(st.sampled_from(["none", "-R", "--repo", "--repo=", "-R=", "-Rx", "before", "GH_REPO", "twice"]))
    flags = draw(st.lists(st.sampled_from(["--squash", "-s", "--merge", "--rebase", "-d", "--delete-branch",
                                           "--auto", "--admin", "--body", "-sd", "--disable-auto", "--help"]),
                          max_size=2))
    words = ["gh", "pr", "merge"]
    prefix = ""
    if form == "before":
        words = ["gh", "-R", repo, "pr", "merge"]
    rest: list[str] = [selector] if selector else []
    for flag in flags:
        rest += [flag, "merged by the bot"] if flag == "--body" else [flag]
    repo_words = {"-R": ["-R", repo], "--repo": ["--repo", repo], "--repo=": [f"--repo={repo}"],
                  "-R=": [f"-R={repo}"], "-Rx": [f"-R{repo}"], "twice": ["-R", "acme/other", "-R", repo]}
    given = repo_words.get(form, [])
    at = draw(st.integers(0, len(rest)))
    rest[at:at] = given
    if form == "GH_REPO":
        prefix = f"GH_REPO={repo} "
    return Invocation(words + rest, prefix)


@st.composite
def gh_api(draw: Draw) -> Invocation:
    repo = draw(st.sampled_from(REPOS))
    kind = draw(st.sampled_from(["put", "method", "xput", "placeholder", "field", "get", "graphql-merge",
                                 "graphql-query", "update-branch"]))
    endpoint = f"repos/{repo}/pulls/5/merge"
    if kind == "put":
        return Invocation(["gh", "api", "-X", "PUT", endpoint])
    if kind == "method":
        return Invocation(["gh", "api", endpoint, "--method", "PUT", "-f", "merge_method=squash"])
    if kind == "xput":
        return Invocation(["gh", "api", "-XPUT", endpoint])
    if kind == "placeholder":
        return Invocation(["gh", "api", "-X", "PUT", "repos/{owner}/{repo}/pulls/7/merge"])
    if kind == "field":  # -f without -X: a POST, which the merge endpoint refuses
        return Invocation(["gh", "api", endpoint, "-f", "merge_method=squash"])
    if kind == "get":
        return Invocation(["gh", "api", endpoint])
    if kind == "update-branch":
        return Invocation(["gh", "api", "-X", "PUT", f"repos/{repo}/pulls/5/update-branch"])
    mutation = ('mutation { mergePullRequest(input: {pullRequestId: "PR_kwDO"}) { clientMutationId } }'
                if kind == "graphql-merge" else "query { viewer { login } }")
    return Invocation(["gh", "api", "graphql", "-f", f"query={mutation}"])


@st.composite
def curl(draw: Draw) -> Invocation:
    repo = draw(st.sampled_from(REPOS))
    url = f"https://api.github.com/repos/{repo}/pulls/5/merge"
    method = draw(st.sampled_from([["-X", "PUT"], ["-XPUT"], ["--request", "PUT"], [], ["-X", "GET"]]))
    headers = draw(st.sampled_from([[], ["-H", "Authorization: token t0ken"], ["-sS"]]))
    target = draw(st.sampled_from([url, url.replace("/merge", "/update-branch")]))
    return Invocation(["curl", *headers, *method, target])


@st.composite
def git_push(draw: Draw) -> Invocation:
    refspec = draw(st.sampled_from(["HEAD:main", "feature/login:main", "feature/login", "HEAD:refs/heads/main",
                                    "feature/login:feature/login"]))
    flags = draw(st.sampled_from([[], ["-q"], ["--no-verify"]])) if "main" not in refspec else []
    # where it goes: the checkout's origin, or a remote made for this one invocation (issue 26 item 5)
    url = f"https://github.com/{draw(st.sampled_from(REPOS))}.git"
    form = draw(st.sampled_from(["origin", "origin", "url", "-c url", "-c pushurl", "-c url twice"]))
    configs = {"-c url": ["-c", f"remote.x.url={url}"], "-c pushurl": ["-c", f"remote.origin.pushurl={url}"],
               "-c url twice": ["-c", f"remote.x.url={url}", "-c", "remote.x.url=https://github.com/acme/widgets"]}
    remote = {"url": url, "-c url": "x", "-c url twice": "x"}.get(form, "origin")
    return Invocation(["git", *configs.get(form, []), "push", *flags, remote, refspec])


@st.composite
def other(draw: Draw) -> Invocation:
    return Invocation(draw(st.sampled_from([["gh", "pr", "view", "5"], ["gh", "pr", "checks", "5"],
                                            ["gh", "pr", "list"], ["gh", "api", "user"]])))


INVOCATIONS = st.one_of(gh_pr_merge(), gh_pr_merge(), gh_api(), curl(), git_push(), other())


# --- how it is written -------------------------------------------------------------------------------

def quote(word: str, style: str) -> str:
    if style == "plain" and word and all(c in _SAFE for c in word):
        return word
    if style == "double":
        return '"' + "".join("\\" + c if c in '"\\$`' else c for c in word) + '"'
    if style == "split" and len(word) > 1:
        return shlex.quote(word[:1]) + "''" + quote(word[1:], "double")
    if style == "backslash" and word and "\n" not in word:
        return "".join(c if c.isalnum() else "\\" + c for c in word)
    if style == "ansi":
        return "$'" + "".join(f"\\x{ord(c):02x}" if c in "gm" else ("\\" + c if c in "\\'" else c)
                              for c in word) + "'"
    return shlex.quote(word) if word else "''"


@st.composite
def rendered(draw: Draw, words: list[str]) -> str:
    styles = st.sampled_from(["plain", "plain", "plain", "single", "double", "split", "backslash", "ansi"])
    return " ".join(quote(w, draw(styles)) for w in words)


def line(inv: Invocation, text: str) -> str:
    return inv.prefix + text


def through(inv: Invocation, k: int, value: str, expr: str) -> str:
    """``v=VALUE; … "EXPR" …``: word ``k`` of the invocation spelled as a parameter operation on ``v``."""
    words = inv.words
    return f"v={shlex.quote(value)}; " + line(inv, shlex.join(words[:k]) + f' "{expr}" ' + shlex.join(words[k + 1 :]))


@st.composite
def statement(draw: Draw) -> str:
    """One invocation written through one construct."""
    inv: Invocation = draw(INVOCATIONS)
    words = inv.words
    plain = line(inv, shlex.join(words))
    k = draw(st.integers(1, len(words) - 1)) if len(words) > 1 else 0
    construct = draw(st.sampled_from([
        "direct", "direct", "var", "var-unquoted", "array", "set", "function", "loop", "subst", "arith",
        "braces", "ifs", "param", "eval", "bash-c", "heredoc", "heredoc-pipe", "pipe-sh", "xargs", "find",
        "wrapper", "python", "git-alias", "command-var", "subshell", "group",
        "case", "case", "case-assign", "pipe-compound", "alias", "patsub", "case-conv", "substr", "runtime",
        "runtime", "setup", *(["family", "family"] if FAMILIES else [])]))
    q = draw(rendered(words))
    if construct == "direct":
        return line(inv, q)
    if construct in ("var", "var-unquoted"):
        value = words[k]
        if construct == "var-unquoted" and all(c in _SAFE for c in value):
            return f"v={shlex.quote(value)}; " + line(inv, shlex.join(words[:k]) + " $v " + shlex.join(words[k + 1 :]))
        return f"v={shlex.quote(value)}; " + line(inv, shlex.join(words[:k]) + ' "$v" ' + shlex.join(words[k + 1 :]))
    if construct == "array":
        return f"a=({shlex.join(words[k:])}); " + line(inv, shlex.join(words[:k]) + ' "${a[@]}"')
    if construct == "set":
        return f"set -- {shlex.join(words[k:])}; " + line(inv, shlex.join(words[:k]) + ' "$@"')
    if construct == "function":
        return f'f() {{ {line(inv, shlex.join(words[:k]))} "$@"; }}; f {shlex.join(words[k:])}'
    if construct == "loop":
        return f"for x in {shlex.quote(words[k])}; do {line(inv, shlex.join(words[:k]))} \"$x\" " \
               f"{shlex.join(words[k + 1 :])}; done"
    if construct == "subst":
        printer = draw(st.sampled_from(["echo", "printf %s"]))
        return line(inv, shlex.join(words[:k]) + f' "$({printer} {shlex.quote(words[k])})" ' +
                    shlex.join(words[k + 1 :]))
    if construct == "arith" and words[k].isdigit():
        n = int(words[k])
        return f"n={n - 2}; " + line(inv, shlex.join(words[:k]) + " $((n + 2)) " + shlex.join(words[k + 1 :]))
    if construct == "braces" and words[k].isdigit():
        return line(inv, shlex.join(words[:k]) + f" {{{words[k]}..{words[k]}}} " + shlex.join(words[k + 1 :]))
    if construct == "ifs" and all(c in _SAFE and c != "," for w in words[k:] for c in w) and all(words[k:]):
        return f"IFS=,; v={shlex.quote(','.join(words[k:]))}; " + line(inv, shlex.join(words[:k]) + " $v")
    if construct == "param":
        value = words[k]
        how = draw(st.sampled_from(["default", "prefix", "suffix"]))
        if how == "default":
            if not all(c in _SAFE for c in value):
                return line(inv, plain)
            return "unset v; " + line(inv, shlex.join(words[:k]) + f' "${{v:-{value}}}" ' + shlex.join(words[k + 1 :]))
        if how == "prefix":
            return f"v={shlex.quote('x' + value)}; " + line(inv, shlex.join(words[:k]) + ' "${v#x}" ' +
                                                            shlex.join(words[k + 1 :]))
        return f"v={shlex.quote(value + '.y')}; " + line(inv, shlex.join(words[:k]) + ' "${v%.y}" ' +
                                                        shlex.join(words[k + 1 :]))
    if construct == "eval":
        return "eval " + shlex.quote(plain)
    if construct == "bash-c":
        return draw(st.sampled_from(["bash", "sh"])) + " -c " + shlex.quote(plain)
    if construct == "heredoc" and "$" not in plain and "`" not in plain and "\\" not in plain:
        return f"bash <<EOF\n{plain}\nEOF"
    if construct == "heredoc-pipe":
        return f"cat <<'EOF' | bash\n{plain}\nEOF"
    if construct == "pipe-sh":
        return f"echo {shlex.quote(plain)} | sh"
    if construct == "xargs" and not inv.prefix:
        if draw(st.booleans()):
            return f"printf '%s\\n' {shlex.quote(words[-1])} | xargs {shlex.join(words[:-1])}"
        return f"echo {shlex.quote(words[k])} | xargs -I{{}} {shlex.join(words[:k])} {{}} {shlex.join(words[k + 1 :])}"
    if construct == "find" and not inv.prefix:
        return f"find . -maxdepth 0 -exec {shlex.join(words)} \\;"
    if construct == "wrapper":
        wrapper = draw(st.sampled_from(["timeout 10", "env", "command", "nohup", "time", "env -u X"]))
        tail = " >/dev/null 2>&1" if wrapper == "nohup" else ""
        if inv.prefix and wrapper.startswith("env"):
            return f"{wrapper} {inv.prefix}{q}{tail}"
        return line(inv, f"{wrapper} {q}{tail}") if not inv.prefix else f"{inv.prefix}{wrapper} {q}{tail}"
    if construct == "python" and not inv.prefix:
        return "python3 -c " + shlex.quote(f"import subprocess; subprocess.run({words!r})")
    if construct == "git-alias" and not inv.prefix:
        return f"git -c alias.m={shlex.quote('!' + shlex.join(words))} m"
    if construct == "command-var" and all(c in _SAFE for w in words for c in w):
        return f"c={shlex.quote(' '.join(words))}; " + line(inv, "$c")
    if construct == "case":
        body = line(inv, q)
        return draw(st.sampled_from([
            f"case go in go) {body};; *) true;; esac",
            f"s=go-5; case $s in g?-*) {body};; esac",
            f'p=ship; case "$p" in merge|ship) {body};; esac',
            f"case a in a) true;& b) {body};; esac",
            f"case a in a) true;;& *) {body};; esac",
            f'case "$1" in "") {body};; esac',  # $1 is unknown to the guard: undetermined
            f"case x in y) {body};; *) true;; esac",  # never runs
            f"case X in x) {body};; esac",  # nocasematch in the agent's shell would run it: undetermined
        ]))
    if construct == "pipe-compound":  # the compound runs in a subshell: `v` keeps its value
        compound = draw(st.sampled_from(["{ v=9; }", "case a in a) v=9;; esac", "for i in 1; do v=9; done",
                                         "if true; then v=9; fi"]))
        tail = draw(st.sampled_from([" | cat", " 2>&1 | cat", " & wait"]))
        return (f"v={shlex.quote(words[k])}; {compound}{tail}; " +
                line(inv, shlex.join(words[:k]) + ' "$v" ' + shlex.join(words[k + 1 :])))
    if construct == "case-assign":
        return (f"case k in k) v={shlex.quote(words[k])};; *) v=9;; esac; " +
                line(inv, shlex.join(words[:k]) + ' "$v" ' + shlex.join(words[k + 1 :])))
    if construct == "alias" and not inv.prefix:  # defined on an earlier line: bash expands it
        return (f"shopt -s expand_aliases\nalias m={shlex.quote(shlex.join(words[:k]))}\nm "
                + shlex.join(words[k:]))
    if construct == "patsub" and "@" not in words[k] and words[k]:
        how = draw(st.sampled_from(["one", "all", "prefix", "suffix"]))
        value, expr = {"one": ("@" + words[k], "${v/@/}"), "all": ("@".join(words[k]), "${v//@/}"),
                       "prefix": ("@@" + words[k], "${v/#@@/}"), "suffix": (words[k] + "@", "${v/%@/}")}[how]
        return through(inv, k, value, expr)
    if construct == "case-conv" and words[k].isascii():
        if words[k] == words[k].lower():
            value, expr = words[k].upper(), "${v,,}"
        elif words[k] == words[k].upper():
            value, expr = words[k].lower(), "${v^^}"
        else:
            return line(inv, q)
        return through(inv, k, value, expr)
    if construct == "substr":
        expr = f"${{v:2:{len(words[k])}}}" if draw(st.booleans()) else f"${{v: -{len(words[k]) + 2}:{len(words[k])}}}"
        return f"v={shlex.quote('xy' + words[k] + 'zz')}; " + line(inv, shlex.join(words[:k]) + f' "{expr}" ' +
                                                                   shlex.join(words[k + 1 :]))
    if construct == "runtime":  # text only the run produces (`emit` prints its arguments): undetermined
        return draw(st.sampled_from([
            f'eval "$(emit {shlex.quote(plain)})"',
            f"emit {shlex.quote(plain)} | bash",
            f'bash -c "$(emit {shlex.quote(plain)})"',
            f"source <(emit {shlex.quote(plain)})",
            f"emit {shlex.quote(plain)} | . /dev/stdin",
            line(inv, f"$(emit {shlex.quote(words[0])}) " + shlex.join(words[1:])),
            f"c=$(emit {shlex.quote(words[0])}); " + line(inv, '"$c" ' + shlex.join(words[1:])),
        ]))
    if construct == "setup":  # set-up output the guard models: the merge stays determined unless it reads it
        printer = draw(st.sampled_from(["ssh-agent -s", "brew shellenv", "direnv export bash"]))
        return f'eval "$({printer})"; ' + line(inv, q)
    if construct == "family":  # a real program of another family runs it (tests/shell_oracle.py runs them)
        return family(inv, plain, draw(st.sampled_from(FAMILIES)))
    if construct == "subshell":
        return f"( {line(inv, q)} )"
    if construct == "group":
        return f"{{ {line(inv, q)}; }}"
    return line(inv, q)


def family(inv: Invocation, plain: str, name: str) -> str:
    """``plain`` run by a program of another family: a shell (busybox sh, an applet), an interpreter whose code
    runs it (lua, tclsh, expect), or a terminal multiplexer that runs it later (tmux)."""
    argv = (["env", inv.prefix.strip()] if inv.prefix else []) + inv.words
    braced = " ".join("{" + w + "}" for w in argv)
    simple = not any(c in w for w in argv for c in "{}\\")
    if name == "busybox-sh":
        return f"busybox sh -c {shlex.quote(plain)}"
    if name == "busybox-env":
        return f"busybox env {inv.prefix}{shlex.join(inv.words)}"
    if name == "lua" and "]==]" not in plain:
        return "lua -e " + shlex.quote(f"os.execute([==[{plain}]==])")
    if name == "tclsh" and simple:
        return f"tclsh <<'EOF'\nexec {braced}\nEOF"
    if name == "expect" and simple:
        return "expect -c " + shlex.quote(f"spawn {braced}; expect eof") + " >/dev/null"
    if name == "tmux":
        return f"tmux new-session -d {shlex.quote(plain)}"
    return f"busybox sh -c {shlex.quote(plain)}"


FAMILY_PROGRAMS = (("busybox-sh", "busybox"), ("busybox-env", "busybox"), ("lua", "lua"), ("tclsh", "tclsh"),
                   ("expect", "expect"), ("tmux", "tmux"))
FAMILIES = [name for name, program in FAMILY_PROGRAMS if available(program)]
"""Programs of other families Debian ships (.ci/run installs them when missing); a missing one is left out
of the generated programs, and the run's summary says so (tests/needs.py)."""
ORACLE_PROGRAMS = ("busybox", "lua", "lua5.4", "tclsh", "expect", "tmux")
"""The rows of tests/needs.py a fixed row may run: a row that runs a missing one is skipped, saying why."""

DECOYS = st.sampled_from([
    'echo "gh pr merge 5 -R acme/widgets"', "printf '%s\\n' 'gh pr merge 7'", "true", "x=3",
    'grep -c "gh pr merge" /dev/null || true', "cd sub && cd ..", ": gh pr merge 5",
    "cat <<'EOF' >/dev/null\ngh pr merge 5\nEOF", "v=9",
    'case x in x) echo "gh pr merge 5";; esac', "alias g='gh pr view'", 'v=merge; echo "${v^^}"',
    'eval "$(ssh-agent -s)"', "gh pr view 5 | cat", 'git commit --allow-empty -qm "gh pr merge 7"',
])


# aliases the sandbox defines in ~/.gitconfig (mm), a file it includes (pp) and .git/config (lm, nm)
CONFIGURED_ALIASES = st.sampled_from(["git mm", "git pp", "git lm", "git nm", "git -C sub lm", "git lm 2>/dev/null"])


@st.composite
def programs(draw: Draw) -> str:
    parts = draw(st.lists(st.one_of(statement(), statement(), DECOYS, CONFIGURED_ALIASES), min_size=1, max_size=3))
    text = str(parts[0])
    for part in parts[1:]:
        after_heredoc = text.endswith("\nEOF")  # its terminator must stand alone on its line
        # the sandbox's pre-push hook refuses every push, so `git push … && X` would never run X here
        joins = ["; ", "\n"] if "push" in text.lower() or "git pp" in text else ["; ", " && ", "\n"]
        text += ("\n" if after_heredoc else str(draw(st.sampled_from(joins)))) + str(part)
    return text


# --- the test ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return Sandbox(Path(tmp_path_factory.mktemp("differential")))


def judge(sandbox: Sandbox, program: str) -> tuple[str, str]:
    """``(verdict, detail)``: verdict ``determined``, ``undetermined`` or ``WRONG``."""
    calls, _ = sandbox.run(program)
    truth = sandbox.truth(calls)
    detection = detect("Bash", {"command": program}, cwd=str(sandbox.checkout), env=environment(sandbox))
    keys, undetermined = guard_keys(detection.merges)
    detail = f"program:\n{program}\ntruth: {sorted(map(str, truth))}\nguard: {detection}\ncalls: {calls}"
    if undetermined:
        return ("undetermined" if keys <= truth else "WRONG"), detail
    return ("determined" if keys == truth else "WRONG"), detail


@needs(*sorted({program for _, program in FAMILY_PROGRAMS}), partial=True)
def test_the_guard_never_gives_a_determined_wrong_answer(sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    seen: Counter[str] = Counter()
    merges: Counter[str] = Counter()

    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(programs())
    def check(program: str) -> None:
        verdict, detail = judge(sandbox, program)
        seen[verdict] += 1
        if "truth: []" not in detail:
            merges[verdict] += 1
        assert verdict != "WRONG", detail

    check()
    total = sum(seen.values())
    rate = seen["undetermined"] / total
    with capsys.disabled():
        print(f"\n[differential] {total} programs: {seen['determined']} determined, {seen['undetermined']} "
              f"undetermined ({rate:.0%}); of {sum(merges.values())} that merged, {merges['undetermined']} "
              "undetermined")
    assert rate <= MAX_UNDETERMINED, seen


@pytest.mark.parametrize(("program", "verdict"), [
    pytest.param(program, verdict, marks=needs(*programs_in(program, ORACLE_PROGRAMS))) for program, verdict in ROWS])
def test_rows_that_once_came_back_wrong(sandbox: Sandbox, program: str, verdict: str) -> None:
    got, detail = judge(sandbox, program)
    assert got == verdict, detail
