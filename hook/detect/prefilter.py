"""The cheap first look: can this text merge at all? `might_merge` runs on every Bash call, so it is
plain ``str`` work and this module imports nothing at load time; hook/detect/toolcall.py loads the
shell readers only for text that passed it, and tree-sitter only for syntax the fast reader does not
model (design §7).

Soundness (design §6): "no merge" here is a determined answer, so it is given only for text that
cannot *spell* a merge word it does not show. Quotes and backslashes between letters are removed
before the keywords are looked for (``mer""ge``); any expansion that builds words at run time (``$``,
backquotes, backslash escapes such as ``$'\\155'`` or ``printf '\\155'``, brace expansion, globs) or a
program that runs text it reads (a shell, ``eval``/``source``/``.``, ``xargs``, ``sed``/``awk``, an
interpreter handed code: ``python3 -c``, ``node -e``, code on stdin) sends the text to the full reader
instead, which answers exactly or `undetermined`.
"""

from __future__ import annotations

# Words without which no merge can happen: merge commands and endpoints (``merge``, ``enqueue``),
# pushes and ref moves, GraphQL, merge-sounding task names, HTTP clients (a merge URL may sit in a
# variable), the usual ways of hiding text from a reader (eval of decoded text), and what lifts a hold
# (a label removed, a comment or review, a dismissal: lifting is judged like a merge).
_KEYWORDS = ("merge", "push", "graphql", "mutation", "enqueue", "updateref", "refs", "ship", "land", "curl", "wget",
             "eval", "base64", "xxd", "\\x", "rot13", "n-za-m", "encodedcommand", "frombase64", "iex",
             "hold", "label", "comment", "review", "dismiss",
             # GitHub's REST API by path (a write that weakens the gate: protection, rulesets, statuses, the
             # App's installation), wherever a program is handed it
             "repos/", "repositories/", "/pulls/", "api.github", "/api/v3", "installations", "ruleset", "/properties",
             # places another program runs a file from, on its own (hook/detect/planted.py): what is written there
             # is read, whoever writes it (`cp x .git/hooks/pre-commit`)
             "hooks/", "hookspath", "husky", "bashrc", "zshrc", "zshenv", "zprofile", "zlogin", "bash_profile",
             "bash_login", "bash_logout", "/.profile", "profile.d", "config.fish", ".envrc", "cron", "atjobs",
             "systemd/", "launchagents", "launchdaemons", "autostart", "rc.local", "ld_preload", "ld_audit",
             "dyld_insert", "bash_env", "makefile", ".mk", "justfile", "package.json", "taskfile", "lefthook",
             "pre-commit-config", "conftest", "sitecustomize", "usercustomize", ".pth", ".gitconfig", ".git/config")
_QUOTING = str.maketrans("", "", "'\"\\`")
# gh's built-in commands; any other `gh NAME` is an alias or extension that may merge
GH_BUILTINS = frozenset("""
    a11y accessibility agent agent-task agent-tasks agents alias api at attestation auth browse cache co
    codespace completion config copilot cs ext extension extensions gist gpg-key help issue label licenses org
    pr preview project release repo rs ruleset run search secret skill skills ssh-key status variable version
    workflow
""".split())  # noqa: SIM905 -- one string: the cheapest literal to load
# git's own commands: any other name is an alias or a third-party git-NAME program
GIT_BUILTINS = frozenset("""
    add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap
    check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph
    commit-tree config count-objects credential describe diff diff-files diff-index diff-tree difftool
    fast-export fast-import fetch fetch-pack filter-branch fmt-merge-msg for-each-ref format-patch fsck gc
    get-tar-commit-id grep gui hash-object help init instaweb interpret-trailers lfs log ls-files ls-remote
    ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-one-file merge-tree
    mergetool mktag mktree mv notes pack-objects pack-refs prune pull push range-diff read-tree rebase reflog
    remote repack replace request-pull rerere reset restore rev-list rev-parse revert rm send-email shortlog
    show show-branch show-ref sparse-checkout stash status submodule switch symbolic-ref tag update-index
    update-ref var verify-commit verify-pack verify-tag whatchanged worktree write-tree
""".split())  # noqa: SIM905 -- one string: the cheapest literal to load
_COMMAND_START = frozenset(" \t\n;|&({$/=")
# characters that make bash build words the text does not show: parameters, substitutions and $'…'
# ($), backquotes, escapes a program decodes (\155), brace expansion, pathname expansion
_CONSTRUCTORS = "$`\\{*?["
# The prefilter's view of the program table (hook/detect/programs.py, pinned to it by
# tests/test_hook_programs.py; the table itself is not imported here: start-up, design §7).
# CONSUMERS run text they are handed or read, always: shells, awk/sed/xargs/parallel, the interpreters
# whose language is not read, the runners that read commands later (`at`, `crontab`, `tmux`) or around
# options not modelled. `source` and `.` count as the command word only (`pip install -e .` runs nothing).
CONSUMERS = frozenset("""
    ansible ansible-playbook ash at awk bash batch bwrap cgexec chroot cmd cpulimit crontab daemonize dash dc
    duckdb ed emacs emacsclient entr ex fab firejail fish forever gawk gdb ghc gnuplot gsed helm hush hyperfine
    invoke invoke-expression ksh latexmk launchctl lftp lksh lldb ltrace lualatex m4 mariadb matlab mawk maxima
    mksh mlr mysql nawk nodemon nq nsenter numactl nvim octave parallel pdflatex perf pkexec pm2 powershell
    prlimit psql pueue pulumi pwsh pwsh-preview rbash reflex retry runuser salt screen sed service setpriv sg sh
    socat sops sqlite3 start-stop-daemon strace supervisorctl systemctl systemd-inhibit systemd-run terraform
    tmux tofu trap tsp unshare valgrind vi vim watchexec xargs xelatex xvfb-run yash zsh
""".split())  # noqa: SIM905 -- one string: the cheapest literal to load
_SOURCES = ("source", ".")
# INTERPRETERS run code when handed some: a code flag (`python3 -c`, `node -e`, `deno eval`), code on stdin,
# or a script file, which the reader reads (hook/detect/script.py: the merges a file names); `-m MODULE`
# runs an installed module, the user's program
INTERPRETERS = frozenset("""
    bb bun clisp clojure deno elixir erl expect fennel ghci groovy guile ipython irb janet jimsh jshell julia
    jython kotlin lua luajit node nodejs ocaml osascript perl php pypy python r racket raku rscript ruby runghc
    runhaskell sbcl scala tclsh ts-node tsx wish
""".split())  # noqa: SIM905 -- one string: the cheapest literal to load
_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print", "-", "eval", "-x", "-eval", "-f"})
_SEPARATORS = str.maketrans({**dict.fromkeys(";|&()<>", "\n"), "\t": " "})
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "Monitor"})


def might_merge(text: str, *, constructed: bool = True) -> bool:
    """False only when ``text`` (a command, or an MCP tool's name and arguments) cannot merge.
    ``constructed=False`` asks only whether the text *names* a merge (a hint in a program's code)."""
    lowered = text.lower()
    bare = lowered.translate(_QUOTING)  # g''h p"r" mer\ge -> gh pr merge
    for word in _KEYWORDS:
        if word in bare or word in lowered:
            return True
    if ("pwsh" in bare or "powershell" in bare) and " -e" in bare:
        return True
    if constructed and _constructs(text, bare):
        return True
    return _gh_alias(bare) or _git_alias(bare)


def _constructs(text: str, bare: str) -> bool:
    """The text may build a word it does not show, or hand computed text to a program that runs it."""
    for c in _CONSTRUCTORS:
        if c in text:
            return True
    for segment in bare.translate(_SEPARATORS).split("\n"):
        tokens = segment.split()
        if tokens and tokens[0] in _SOURCES:
            return True
        for k, token in enumerate(tokens):
            name = token.rsplit("/", 1)[-1]
            if name.endswith(".exe"):
                name = name[:-4]
            stem = name.rstrip("0123456789.-") or name  # lua5.4, tclsh8.6, python3.12
            if name in CONSUMERS or stem in CONSUMERS:
                return True
            if name in INTERPRETERS or stem in INTERPRETERS or name.startswith(("python", "pypy")):
                for flag in tokens[k + 1 :]:
                    if flag in _CODE_FLAGS or (flag.startswith("-") and flag[-1:] in "ce" and len(flag) <= 4):
                        return True
                    if flag == "-m":
                        break  # an installed module: the user's program
                    if not flag.startswith("-"):
                        return True  # a script file: read for the merges it names
                else:
                    return True  # code on stdin
    return False


def merge_shaped(text: str) -> bool:
    """`hook.detect.shaped.merge_shaped` (loaded when asked: no reader on the fast path needs it)."""
    from hook.detect.shaped import merge_shaped as shaped

    return shaped(text)


# `gh repo` commands that change nothing the gate relies on; any other (`sync` merges upstream into a fork's
# branch, `edit`/`delete`/`archive`/`rename` change what the gate protects: hook/detect/ghadmin.py) is read
_GH_REPO_READS = frozenset({"view", "clone", "list", "create", "fork", "unarchive", "gitignore",
                            "license", "credits", "garden"})


def _gh_alias(text: str) -> bool:
    """``gh NAME`` where NAME is not a gh built-in: a user alias or extension; or a ``gh repo`` command that
    is not a read (``gh repo sync``, ``gh -R o/r repo delete``)."""
    at = text.find("gh")
    while at >= 0:
        end = at + 2
        if text.startswith(".exe", end):
            end += 4
        if (at == 0 or text[at - 1] in _COMMAND_START) and text[end : end + 1] in (" ", "\t"):
            rest = text[end:].split(None, 4)
            name = rest[0] if rest else ""
            if name and not name.startswith("-") and name not in GH_BUILTINS:
                return True
            if name == "repo" and (len(rest) < 2 or rest[1] not in _GH_REPO_READS):
                return True
            if name.startswith("-") and "repo" in rest:
                return True
        at = text.find("gh", at + 2)
    return False


def _git_alias(text: str) -> bool:
    """``git NAME`` where NAME is not one of git's commands: an alias (its expansion may sit in a
    config file, out of the text) or a third-party ``git-NAME``."""
    at = text.find("git")
    while at >= 0:
        if (at == 0 or text[at - 1] in _COMMAND_START) and text[at + 3 : at + 4] in (" ", "\t"):
            words = text[at + 3 :].split(None, 8)
            k = 0
            while k < len(words) and words[k].startswith("-"):
                k += 2 if words[k] in ("-c", "-C", "--git-dir", "--work-tree", "--namespace") else 1
            if k < len(words) and words[k].rstrip(";&|)") not in GIT_BUILTINS:
                return True
        at = text.find("git", at + 3)
    return False
