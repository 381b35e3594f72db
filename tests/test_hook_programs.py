"""The program table (hook/detect/programs.py, design §6 "Soundness"): every known program has a kind, a
reading and a reason; every program that is not *data* has a row here that merges through it (the guard
must answer as the kind promises), and the prefilter's and the dispatcher's views of the table are pinned
to it. An unknown program, or an interpreter whose code is not read, handed merge-shaped text makes the
answer undetermined; harmless look-alikes stay clean.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from hook.detect import prefilter, programs, shaped, wrappers
from hook.detect.dispatch import UNWRAPPED
from hook.detect.model import Detection
from hook.detect.toolcall import detect

M = "gh pr merge 5 -R acme/widgets"
MQ = f"'{M}'"
DET, UND, CLEAN = "determined", "undetermined", "clean"

# program -> (a command that merges acme/widgets#5 through it, what the guard must answer)
ROWS: dict[str, tuple[str, str]] = {
    # wrappers: read exactly
    **{w: (f"{w} {M}", DET) for w in (
        "nohup", "exec", "command", "sudo", "doas", "time", "nice", "ionice", "stdbuf", "chronic", "unbuffer",
        "setsid", "caffeinate", "torsocks", "coproc", "proxychains", "proxychains4", "env", "busybox", "toybox",
        "ifne", "catchsegv", "dbus-run-session", "eatmydata", "fakeroot", "tini", "dumb-init", "with-contenv",
        "ssh-agent")},
    "builtin": (f"builtin eval {MQ}", DET),
    "timeout": (f"timeout 30 {M}", DET), "gtimeout": (f"gtimeout -s TERM 30 {M}", DET),
    "taskset": (f"taskset 0x1 {M}", DET), "flock": (f"flock /tmp/l -c {MQ}", DET),
    "chrt": (f"chrt 10 {M}", DET), "faketime": (f"faketime '2020-01-01' {M}", DET),
    "s6-setuidgid": (f"s6-setuidgid bob {M}", DET), "lckdo": (f"lckdo /tmp/l {M}", DET),
    "xargs": ("echo 5 | xargs gh pr merge -R acme/widgets", DET), "find": (f"find . -maxdepth 0 -exec {M} \\;", DET),
    "watch": (f"watch -n 5 {MQ}", DET), "su": (f"su bob -c {MQ}", DET), "script": (f"script -qc {MQ} /dev/null", DET),
    **{r: (f"{r} {sub} {M}", DET) for r, sub in (
        ("op", "run --"), ("doppler", "run --"), ("infisical", "run --"), ("aws-vault", "exec prof --"),
        ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("direnv", "exec ."), ("mise", "exec --"),
        ("rtx", "exec --"), ("dotenv", "--"), ("npx", "--"), ("bunx", "--"), ("devbox", "run --"),
        ("pipx", "run --"), ("uvx", "--"), ("conda", "run -n env"), ("mamba", "run -n env"),
        ("micromamba", "run -n env"), ("hatch", "run"), ("pdm", "run"), ("rye", "run"), ("bundle", "exec"),
        ("asdf", "exec"), ("rbenv", "exec"), ("pyenv", "exec"), ("nodenv", "exec"), ("goenv", "exec"),
        ("opam", "exec --"), ("flox", "activate --"), ("chamber", "exec svc --"), ("envchain", "ns"),
        ("teller", "run --"), ("summon", ""), ("berglas", "exec --"), ("dotenvx", "run --"))},
    "nix-shell": (f"nix-shell -p gh --run {MQ}", DET),
    "start-process": ("Start-Process gh -ArgumentList 'pr','merge','5','-R','acme/widgets'", DET),
    "saps": ("saps gh -ArgumentList 'pr','merge','5','-R','acme/widgets'", DET),
    "start": ("start gh -ArgumentList 'pr','merge','5','-R','acme/widgets'", DET),
    # shells and the shell's own readers
    **{s: (f"{s} -c {MQ}", DET) for s in ("bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "rbash", "yash",
                                         "hush", "lksh", "fish")},
    **{p: (f"{p} -Command {MQ}", DET) for p in ("pwsh", "powershell", "pwsh-preview")},
    "cmd": (f"cmd /c {M}", DET), "eval": (f"eval {MQ}", DET), "iex": (f"iex {MQ}", DET),
    "invoke-expression": (f"Invoke-Expression {MQ}", DET),
    "source": (f"source <(echo {MQ})", DET), ".": (f". <(echo {MQ})", DET),
    "trap": (f"trap {MQ} EXIT", UND),
    # interpreters whose code is read by heuristics: what they name is undetermined
    **{i: (f"{i} -c 'import os; os.system(\"{M}\")'", UND) for i in ("python", "pypy", "ipython", "jython")},
    **{i: (f"{i} -e 'require(\"child_process\").execSync(\"{M}\")'", UND) for i in (
        "node", "nodejs", "ts-node", "tsx", "bun")},
    "deno": ("deno eval 'new Deno.Command(\"gh\", {args: [\"pr\",\"merge\",\"5\"]}).outputSync()'", UND),
    **{i: (f"{i} -e 'system(\"{M}\")'", UND) for i in ("ruby", "perl", "raku", "r", "rscript", "julia",
                                                       "elixir", "groovy", "scala", "kotlin", "janet", "bb",
                                                       "clojure", "ghci", "fennel")},
    "php": (f"php -r 'system(\"{M}\");'", UND), "osascript": (f"osascript -e 'do shell script \"{M}\"'", UND),
    **{i: (f"{i} -e 'os.execute(\"{M}\")'", UND) for i in ("lua", "luajit")},
    **{i: (f"{i} <<< 'exec {M}'", UND) for i in ("tclsh", "wish", "jimsh")},
    "expect": (f"expect -c 'spawn {M}; expect eof'", UND), "erl": (f"erl -eval 'os:cmd(\"{M}\")'", UND),
    "guile": (f"guile -c '(system \"{M}\")'", UND), "racket": (f"racket -e '(system \"{M}\")'", UND),
    "sbcl": (f"sbcl --eval '(sb-ext:run-program \"{M}\")'", UND),
    "clisp": (f"clisp -x '(ext:shell \"{M}\")'", UND),
    **{i: (f"echo 'system(\"{M}\")' | {i}", UND) for i in ("jshell", "irb", "ocaml", "runghc", "runhaskell")},
    # interpreters whose code is not read: merge-shaped text is undetermined
    **{i: (f"{i} -c '!{M}'", UND) for i in ("vim", "vi", "nvim", "ex", "gdb", "lldb", "psql", "lftp", "ed")},
    "emacs": (f"emacs --batch --eval '(shell-command \"{M}\")'", UND),
    "emacsclient": (f"emacsclient -e '(shell-command \"{M}\")'", UND),
    **{i: (f"{i} -e '{M}'", UND) for i in ("dc", "mysql", "mariadb", "octave", "matlab",
                                          "maxima", "gnuplot", "ghc")},
    **{i: (f"{i} db.sqlite '.shell {M}'", UND) for i in ("sqlite3", "duckdb")},
    **{i: (f"{i} 'system({M})'", UND) for i in ("m4", "mlr", "socat", "pdflatex", "latexmk", "lualatex",
                                                "xelatex", "ansible", "ansible-playbook", "terraform", "tofu",
                                                "pulumi", "helm", "salt", "fab", "invoke")},
    # compilers: the source text the command hands them is read like interpreter code (issue 26 item 1)
    **{c: (f"printf 'int main(){{return system(\"{M}\");}}' | {c} -x c - -o /tmp/m && /tmp/m", UND)
       for c in ("gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "gfortran")},
    **{c: (f"cat > m.{ext} <<'EOF'\nrun(\"{M}\")\nEOF\n{c} {sub}m.{ext}", UND) for c, ext, sub in (
        ("go", "go", "run "), ("rustc", "rs", ""), ("zig", "zig", "run "), ("javac", "java", ""),
        ("java", "java", ""), ("kotlinc", "kt", ""), ("swift", "swift", ""), ("swiftc", "swift", ""),
        ("nim", "nim", "r "), ("crystal", "cr", "run "), ("dart", "dart", "run "), ("as", "s", ""),
        ("nasm", "asm", ""), ("yasm", "asm", ""))},
    # task runners, text tools, agents
    **{t: (f"printf 'ship:\\n\\t{M}\\n' > Makefile && {t} ship", DET) for t in ("make", "gmake")},
    **{t: (f"{t} merge", UND) for t in ("just", "task", "rake", "mage")},
    **{t: (f"echo '{{\"scripts\":{{\"ship\":\"{M}\"}}}}' > package.json && {t} run ship", DET)
       for t in ("npm", "yarn", "pnpm")},
    **{s: (f"echo 5 | {s} 's|.*|{M}|e'", UND) for s in ("sed", "gsed")},
    **{a: (f"echo 5 | {a} '{{system(\"{M}\")}}'", UND) for a in ("awk", "gawk", "mawk", "nawk")},
    "parallel": (f"parallel ::: {MQ}", UND),
    **{a: (f"{a} -p 'merge PR 5 of acme/widgets'", UND) for a in (
        "codex", "gemini", "aider", "opencode", "cursor-agent", "goose", "amp", "crush", "claude", "qwen",
        "copilot", "droid", "kiro-cli", "cline")},
    # runners: later, or around options not modelled
    "tmux": (f"tmux new-session -d {MQ}", UND), "screen": (f"screen -dm {M}", UND),
    "at": (f"at now <<< {MQ}", UND), "batch": (f"echo {MQ} | batch", UND),
    "crontab": (f"echo '* * * * * {M}' | crontab -", UND), "systemd-run": (f"systemd-run --user {M}", UND),
    "launchctl": (f"launchctl submit -l x -- {M}", UND), "entr": (f"ls | entr {M}", UND),
    "watchexec": (f"watchexec -e py -- {M}", UND), "nodemon": (f"nodemon --exec {MQ}", UND),
    "reflex": (f"reflex -r x -- {M}", UND), "pueue": (f"pueue add -- {M}", UND), "nq": (f"nq {M}", UND),
    "tsp": (f"tsp {M}", UND), "daemonize": ("daemonize /usr/bin/gh pr merge 5 -R acme/widgets", UND),
    "start-stop-daemon": ("start-stop-daemon --start --exec /usr/bin/gh -- pr merge 5 -R acme/widgets", UND),
    **{s: (f"{s} start {MQ}", UND) for s in ("systemctl", "service", "supervisorctl", "pm2", "forever")},
    **{w: (f"{w} {M}", UND) for w in ("xvfb-run", "systemd-inhibit", "pkexec", "setpriv", "nsenter", "unshare",
                                      "strace", "ltrace", "valgrind", "numactl", "firejail", "bwrap", "retry")},
    "runuser": (f"runuser -u bob -- {M}", UND), "sg": (f"sg staff -c {MQ}", UND), "chroot": (f"chroot / {M}", UND),
    "cpulimit": (f"cpulimit -l 50 -- {M}", UND), "prlimit": (f"prlimit --nofile=10 {M}", UND),
    "cgexec": (f"cgexec -g cpu:x {M}", UND), "perf": (f"perf stat -- {M}", UND), "hyperfine": (f"hyperfine {MQ}", UND),
    "sops": (f"sops exec-env secrets.env {MQ}", UND),
    # elsewhere: containers, machines, clouds
    **{c: (f"{c} run --rm -e GH_TOKEN ghcr.io/cli/cli pr merge 5 -R acme/widgets", UND) for c in (
        "docker", "podman", "nerdctl", "finch", "docker-compose", "podman-compose", "apptainer", "singularity")},
    **{c: (f"{c} exec -it box -- {M}", UND) for c in ("kubectl", "oc", "lxc", "incus", "multipass", "crictl",
                                                      "ctr", "k3s", "limactl", "lima", "colima", "orb",
                                                      "distrobox", "toolbox", "machinectl", "devcontainer")},
    **{s: (f"{s} host {MQ}", UND) for s in ("ssh", "rsh", "autossh")},
    "mosh": (f"mosh host -- {M}", UND), "vagrant": (f"vagrant ssh -c {MQ}", UND),
    "distrobox-enter": (f"distrobox-enter box -- {M}", UND), "wsl": (f"wsl -- {M}", UND),
    "systemd-nspawn": (f"systemd-nspawn -D /srv/c {M}", UND), "virsh": (f"virsh {MQ}", UND),
    "qemu-system-x86_64": (f"qemu-system-x86_64 -append {MQ}", UND), "nix": (f"nix run nixpkgs#gh -- {M[3:]}", UND),
    **{c: (f"{c} ssh vm --command {MQ}", UND) for c in ("gcloud", "az", "aws", "fly", "flyctl", "heroku",
                                                        "railway", "render", "vercel", "netlify")},
    # clients
    "gh": (M, DET), "hub": ("hub api -X PUT repos/acme/widgets/pulls/5/merge", DET),
    "git": ("git -c alias.m='!gh pr merge 5 -R acme/widgets' m", DET),
    "sl": ("sl ghstack land https://github.com/acme/widgets/pull/5", UND),  # Sapling (PowerShell: Set-Location)
    **{c: (f"{c} -X PUT https://api.github.com/repos/acme/widgets/pulls/5/merge", DET) for c in ("curl",)},
    **{c: (f"{c} --method=PUT https://api.github.com/repos/acme/widgets/pulls/5/merge", DET)
       for c in ("wget", "wget2")},
    **{c: (f"{c} PUT https://api.github.com/repos/acme/widgets/pulls/5/merge", DET) for c in ("http", "https", "xh",
                                                                                              "xhs")},
    **{c: (f"{c} -Method Put -Uri https://api.github.com/repos/acme/widgets/pulls/5/merge", DET) for c in (
        "invoke-restmethod", "irm", "invoke-webrequest", "iwr")},
    # unknown, listed for a property
    "openssl": (f"openssl s_client -connect api.github.com:443 <<< {MQ}", UND),
    "certutil": (f"certutil -decode {MQ}", UND),
}

# harmless uses of programs that run things: nothing merge-shaped is handed, nothing merges
LOOK_ALIKES = [
    "echo 'gh pr merge 5'", "printf '%s\\n' 'gh pr merge 5'", "git commit -m 'fix: gh pr merge 5 later'",
    "grep -rn 'gh pr merge' .", "rg 'merge-async' src", "jq '.merge' x.json", "cat merge.txt | wc -l",
    "tmux ls", "tmux attach -t work", "tmux new-session -d 'make test'", "screen -ls", "docker ps",
    "docker run --rm alpine echo hi", "docker logs web", "kubectl get pods", "ssh host uptime", "at -l",
    "crontab -l", "systemctl status nginx", "lua -e 'print(1)'", "tclsh <<< 'puts hi'", "expect -c 'puts hi'",
    "busybox ls", "busybox sh -c 'echo hi'", "python3 -c 'print(1)'", "node -e 'console.log(1)'",
    "timeout 5 ls", "strace -f ls", "pytest -k merge tests/", "frobnicate --verbose src/", "ls merge/",
    "vim README.md", "vim src/merge.py", "emacs merge-notes.org", "sqlite3 db.sqlite 'select 1'", "terraform plan",
    "gh api repos/acme/widgets/pulls/5/merge",
    "curl https://api.github.com/repos/acme/widgets/pulls/5/merge-async/0b8d1c", "make -n ship",
    "gh api repos/acme/widgets/branches/main/protection", "gh api repos/acme/widgets/commits/abc/statuses",
    "openssl rand -hex 8", "tar -czf merge-backup.tgz src",
    "echo merge-pr", "ls ./scripts/merge-pr", "cat merge-pr", "npx prettier --write .",
    "hub status", "hub pull-request -m 'merge the fix'", "hub browse", "hub ci-status", "spr status",
    "grep -rn land .", "echo ship it", "gt log",
    # scripts whose name and arguments name no merge
    "python3 tools/lint.py", "python3 tools/lint.py --fix src", "node scripts/build.js", "bash tools/lint.sh -q",
    "source ./env.sh", "python3 landing_page.py",
    # Sapling without its merge words
    "sl status", "sl log -l 5", "sl goto main",
]


@pytest.mark.parametrize("wrapper", ["git", "hub"])
def test_hub_wraps_git_so_its_push_is_judged_as_git_s(wrapper: str, checkout: Path) -> None:
    found = detect("Bash", {"command": f"{wrapper} push origin main"}, cwd=str(checkout),
                   env={"HOME": str(checkout.parent / "home"), "PATH": "/usr/bin:/bin"})
    assert [(m.via, m.repo, m.push_target) for m in found.gated] == [("git_push", "acme/widgets", "main")], found


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets.git\n')
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature\n")
    (tmp_path / "home").mkdir()
    return repo


def judge(command: str, cwd: Path) -> tuple[str, Detection]:
    found = detect("Bash", {"command": command}, cwd=str(cwd), env={"HOME": str(cwd.parent / "home"),
                                                                    "PATH": "/usr/bin:/bin"})
    merges = found.merges
    if not merges:
        return CLEAN, found
    if any(m.undetermined for m in merges):
        return UND, found
    return DET, found


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_program_merges_as_its_kind_says(name: str, checkout: Path) -> None:
    command, expected = ROWS[name]
    got, found = judge(command, checkout)
    assert got == expected, found
    if expected == DET:
        assert [(m.repo, m.pr) for m in found.merges] == [("acme/widgets", 5)], found
    if expected == UND:  # whatever the text names is kept as a hint, never another target
        assert {m.repo for m in found.merges} <= {"acme/widgets", None}, found


def test_every_program_but_data_has_a_row() -> None:
    others = {n for n, (kind, _, _) in programs.PROGRAMS.items() if kind != programs.DATA}
    assert others - set(ROWS) == set(), "add a row to ROWS for each"
    assert set(ROWS) - set(programs.PROGRAMS) == set(), "rows for programs the table does not list"


@pytest.mark.parametrize("name", sorted(n for n, r in programs.PROGRAMS.items() if r[0] == programs.DATA))
def test_a_data_program_never_runs_what_it_is_handed(name: str, checkout: Path) -> None:
    command = f"{name} {MQ} <<< {MQ}" if name not in ("[",) else f"[ {MQ} ]"
    assert judge(command, checkout)[0] == CLEAN


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_look_alikes_stay_clean(command: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == CLEAN, found


@pytest.mark.parametrize("command", [
    f"frobnicate {MQ}", f"echo {MQ} | frobnicate", f"frobnicate <<< {MQ}", f"frobnicate <<'EOF'\n{M}\nEOF",
    "frobnicate pr merge 5", "./tools/run --pr 5 merge", "frobnicate 'curl -X PUT $U'",
    "frobnicate repos/acme/widgets/pulls/5/merge-async",
    "x=$(echo Z2ggcHIgbWVyZ2UgNQ== | base64 -d); frobnicate \"$x\"",
    f"echo {MQ} > job.txt && frobnicate job.txt", "tar --to-command='gh pr merge 5' -xf x.tar",
    "rsync -e 'gh pr merge 5' a b:c", "fd -x gh pr merge", "less '+!gh pr merge 5' README.md",
    "scp -o 'ProxyCommand=gh pr merge 5' a b:c",
    # its own name says what it is for, though its arguments say nothing
    "merge-pr 5", "./scripts/merge-pr 5", "automerge", "npx some-merge-tool 5", "uvx merge-bot 5",
    # the stack tools' merge words
    "spr land", "ghstack land https://github.com/acme/widgets/pull/5", "git town ship", "tool ship 5",
    "./tools/land.sh", "./ship_it", "./push-docs",
    # a script an interpreter or a shell runs, not read: its name or its arguments are merge-shaped
    "python3 tools/land.py 5", "python3 merge.py", "node scripts/ship.js", "ruby land.rb 5", "php push-docs.php",
    "python3 tools/run.py gh pr merge 5", "bash tools/land.sh", "sh ./merge.sh", "source tools/land.sh",
    ". ./ship.sh", "bash run.sh gh pr merge 5", "source run.sh gh pr merge 5",
    # Sapling: its merge words
    "sl land", "sl ghstack land", "sl push --to main", "/usr/bin/sl land 5",
])
def test_an_unknown_program_handed_merge_shaped_text_is_undetermined(command: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == UND, found
    assert "acme/widgets" in {m.repo for m in found.merges}, found  # the current directory's repo is judged


def test_kinds_readings_and_reasons_are_well_formed() -> None:
    for name, (kind, reading, reason) in programs.PROGRAMS.items():
        assert kind in programs.KINDS, name
        assert reason.strip(), name
        assert name == name.lower() and " " not in name, name
        if ":" in reading:
            module, _, function = reading.partition(":")
            assert callable(getattr(importlib.import_module(f"hook.detect.{module}"), function)), name
        else:
            assert reading in ("", "decoder", "shell"), name
    assert set(programs.RUNS_WITH) <= {n for n, r in programs.PROGRAMS.items() if r[0] == programs.DATA}


def test_the_prefilter_reads_the_same_table() -> None:
    """Its view is a copy (the table is not imported on the fast path); this keeps the two equal."""
    table = programs.PROGRAMS
    interpreters = {n for n, (_, reading, _) in table.items() if reading == "script:interpreter"}
    consumers = {n for n, (kind, reading, _) in table.items()
                 if ((kind == programs.INTERPRETER and reading in ("", "shell")) or reading.startswith("textprog:"))
                 or (kind == programs.RUNNER and reading != "elsewhere:elsewhere")}
    consumers = (consumers | {"xargs"}) - {"eval", "iex"} - interpreters
    assert interpreters == prefilter.INTERPRETERS
    assert consumers == prefilter.CONSUMERS


def test_the_dispatcher_unwraps_exactly_the_table_s_wrappers() -> None:
    table_wrappers = {n for n, (kind, reading, _) in programs.PROGRAMS.items()
                      if kind == programs.WRAPPER and not reading}
    assert table_wrappers == wrappers.NAMES - UNWRAPPED
    assert UNWRAPPED <= wrappers.NAMES and set(programs.PROGRAMS) >= UNWRAPPED


@pytest.mark.parametrize(("text", "is_shaped"), [
    ("gh pr merge 5", True), ("pr merge 5", True), ("/usr/bin/gh pr view", True), ("git push origin main", True),
    ("repos/acme/widgets/statuses/abc", True), ("mutation { mergePullRequest }", True), ("/unhold", True),
    ("--remove-label hold", True), ("GH_REPO=acme/x", True), ("query { viewer { login } }", False),
    ("highlight the thigh", False), ("make test", False), ("hello world", False), ("ls -la src", False),
])
def test_merge_shaped(text: str, is_shaped: bool) -> None:
    assert shaped.merge_shaped(text) is is_shaped


def test_what_is_merge_shaped_passes_the_prefilter() -> None:
    """An unknown program is judged only when the prefilter lets the text through: every merge-shaped
    marker is one of its keywords, but for gh's own words (``gh pr view`` is gh's, read by its detector) and
    ``GH_REPO`` (it steers gh, and merges nothing by itself)."""
    for part in shaped.SHAPED:
        if part not in ("gh_repo", "gh_host"):
            assert prefilter.might_merge(f"frobnicate {part}"), part
    for word in shaped.SHAPED_WORDS - {"gh"}:
        assert prefilter.might_merge(f"frobnicate {word}"), word



@pytest.mark.parametrize(("tool", "command", "repos", "undetermined"), [
    ("PowerShell", "sl ..; gh pr merge 5", [None], True),  # Set-Location: out of the checkout
    ("PowerShell", "sl land", [], False),  # a directory named land
    ("Bash", "sl .. && gh pr merge 5", ["acme/widgets"], False),  # Sapling: bash's directory stays
    ("Bash", "pwsh -Command 'sl ..; gh pr merge 5'", [None], True),  # a nested host: a cd, or not
])
def test_sl_is_set_location_only_in_powershell(tool: str, command: str, repos: list[str | None],
                                               undetermined: bool, checkout: Path) -> None:
    found = detect(tool, {"command": command}, cwd=str(checkout), env={"HOME": str(checkout.parent / "home"),
                                                                      "PATH": "/usr/bin:/bin"})
    assert [m.repo for m in found.merges] == repos, found
    assert found.undetermined is undetermined, found
