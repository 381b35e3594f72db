"""What a command sets up for another program to run later (design §6, issue 26 item 1), judged by what it writes.

A file is *planted* when this command writes it (a redirection, ``echo``/``printf``/``cat``/``tee``, ``cp``/``mv``/
``install``/``ln``/``dd``, ``sed -i``: `Ctx.plants`) at a place another program runs on its own, then or at any
later time:

- git hooks: the repository's hooks directory (``.git/hooks/*``, a worktree's common one), ``core.hooksPath``
  (from git's files, ``git config``, ``-c``), ``.husky/``, ``.githooks/``; git's own config files (aliases and the
  commands its settings run);
- shell start-up files: ``~/.bashrc``, ``~/.profile``, ``~/.zshrc``, ``~/.bash_logout`` and their kin,
  ``/etc/profile.d/*``, fish's and PowerShell's profiles, ``.envrc``, and whatever ``BASH_ENV``/``ENV`` name;
- schedulers: cron tables and ``cron.*`` directories, ``at`` spools, systemd units, launchd agents, autostart
  entries, ``/etc/rc.local``;
- task files a later ``make``, ``just``, ``npm``, ``task``, ``pre-commit``, ``lefthook`` or ``pytest`` runs:
  Makefiles, justfiles, ``package.json`` scripts, Taskfiles, hook managers' configs, ``conftest.py``, ``setup.py``,
  ``sitecustomize.py``, ``*.pth``;
- a library a later program preloads (``LD_PRELOAD``, ``LD_AUDIT``, ``DYLD_INSERT_LIBRARIES``).

Its text is read the way that program reads it (hook/detect/plantformats.py) and what it would run is judged
like any command: a merge there is undetermined (it runs at another time, in another directory and
environment, or never). Text only the run knows (``curl … > .git/hooks/pre-push``) is undetermined; text that
names no merge (``export PATH=…``, ``pytest -q``) stays clean. Code compiled from text in the command
(``gcc -x c -``, ``go run``, ``rustc -``) is read like interpreter code (`compile`).
"""

from __future__ import annotations

from hook.shell import paths
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_STARTUP = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".xprofile", ".xinitrc",
    ".xsession", ".xsessionrc", ".envrc", ".bash_aliases", "bash.bashrc", "bashrc", "zshrc", "zshenv", "zprofile",
    "zlogin", "profile", "rc.local"})
_ETC_SHELL = ("/etc/profile.d/", "/etc/zsh/", "/etc/bash_completion.d/", "/etc/init.d/", "/etc/rc")
_CRON_DIRS = ("/etc/cron.hourly/", "/etc/cron.daily/", "/etc/cron.weekly/", "/etc/cron.monthly/")
_TABLES = {"Makefile": "make", "makefile": "make", "GNUmakefile": "make", "justfile": "just", "Justfile": "just",
           ".justfile": "just", "package.json": "package", "composer.json": "package", "deno.json": "package",
           "deno.jsonc": "package", "Taskfile.yml": "yaml", "Taskfile.yaml": "yaml", "taskfile.yml": "yaml",
           "taskfile.yaml": "yaml", "Taskfile.dist.yml": "yaml", "Taskfile.dist.yaml": "yaml", "lefthook.yml": "yaml",
           ".lefthook.yml": "yaml", "lefthook-local.yml": "yaml", ".pre-commit-config.yaml": "yaml",
           "tasks.json": "yaml", "Rakefile": "code", "magefile.go": "code", "conftest.py": "code", "setup.py": "code",
           "noxfile.py": "code", "fabfile.py": "code", "sitecustomize.py": "code", "usercustomize.py": "code",
           "dodo.py": "code"}
_GIT_CONFIGS = ("/.gitconfig", "/.config/git/config", "/etc/gitconfig")


def judge(ctx: Ctx) -> None:
    """At the end of the tool call: every file this command planted where another program runs it. Text that
    cannot spell a merge (the prefilter's sound "no") is skipped unread, so an ordinary write costs nothing."""
    from hook.detect.prefilter import might_merge

    plants = [(key, value) for key, value in ctx.plants.items() if DYN in value[0] or might_merge(value[0])]
    for key, (text, exact) in plants:  # git's configuration first: it may name a hooks directory
        if kind_of(ctx, key, []) == "gitconfig":
            read(ctx, key, "gitconfig", text, exact=exact)
    for directory in sorted(ctx.hooks_paths):
        _hooks_dir(ctx, directory)
    for key, text in ctx.set_up:  # `npm pkg set scripts.X=CMD`: commands written for a later run
        read(ctx, key, "shell", text)
    hooks: list[str] | None = None
    for key, (text, exact) in plants:
        kind = kind_of(ctx, key, sorted(ctx.hooks_paths))
        if kind is None and _may_be_hook(key):  # a configured hooks directory: read git's files only then
            hooks = _hook_dirs(ctx) if hooks is None else hooks
            kind = kind_of(ctx, key, hooks)
        if kind is not None and kind != "gitconfig":
            read(ctx, key, kind, text, exact=exact)


def _may_be_hook(key: str) -> bool:
    """A file whose directory may be ``core.hooksPath`` (by name: ``hooks``, ``.githooks``, ``git-hooks``)."""
    parent = key.rsplit("/", 2)[-2] if key.count("/") >= 1 else ""
    return "hook" in parent.lower()


def kind_of(ctx: Ctx, key: str, hooks: list[str] | None = None) -> str | None:
    """How another program runs the file at ``key`` (an absolute path): ``shell``, ``fish``, ``powershell``,
    ``cron``, ``crontab``, ``systemd``, ``plist``, ``make``, ``just``, ``package``, ``yaml``, ``code``, ``pth``,
    ``gitconfig``, ``library``; None when no program runs it on its own."""
    if DYN in key:
        return None
    base = key.rsplit("/", 1)[-1]
    parent = key[: len(key) - len(base)]
    if key in ctx.preloads:
        return "library"
    if any(parent == d.rstrip("/") + "/" for d in (_hook_dirs(ctx) if hooks is None else hooks)):
        return "shell"
    if "/.git/hooks/" in key or "/.husky/" in key or "/.githooks/" in key:
        return "shell"
    if key.endswith(_GIT_CONFIGS) or key.endswith(("/.git/config", "/config.worktree")):
        return "gitconfig"
    if base in _STARTUP or key.startswith(_ETC_SHELL) or key in _startup_targets(ctx) or _startup_unknown(ctx):
        return "shell"
    if "/fish/" in key and key.endswith(".fish"):
        return "fish"
    if base.lower().endswith("profile.ps1"):
        return "powershell"
    if key.startswith(_CRON_DIRS) or key.startswith(("/var/spool/at/", "/var/spool/cron/atjobs/")):
        return "shell"
    if key in ("/etc/crontab", "/etc/anacrontab") or key.startswith("/etc/cron.d/"):
        return "cron"
    if key.startswith(("/var/spool/cron/", "/var/cron/tabs/")):
        return "crontab"
    if "/systemd/" in key and base.endswith((".service", ".timer", ".path", ".socket")):
        return "systemd"
    if base.endswith(".desktop") and "/autostart/" in key:
        return "systemd"  # Exec= lines, as a unit's
    if base.endswith(".plist") and ("/LaunchAgents/" in key or "/LaunchDaemons/" in key):
        return "plist"
    if base.endswith(".mk"):
        return "make"
    if base.endswith(".pth"):
        return "pth"
    if base.endswith(".rake"):
        return "code"
    if base == "tasks.json" and "/.vscode/" not in key:
        return None
    return _TABLES.get(base)


def read(ctx: Ctx, key: str, kind: str, text: str, *, exact: bool = True) -> None:
    """Judge ``text``, planted at ``key`` for a program that reads it as ``kind``: undetermined whatever it finds."""
    from hook.detect import opaque

    what = f"{key} ({_WHAT.get(kind, kind)}) runs later"
    if text.strip(DYN + " \n") == "" and DYN in text:
        ctx.runtime(f"{what}, and this command writes it with text only the run knows", via="planted")
        return
    if not exact or kind == "library":
        if opaque.shaped(ctx, text):
            ctx.runtime(f"{what}, and what this command puts there is merge-shaped", via="planted")
        return
    from hook.detect.plantformats import commands

    mark = ctx.mark()
    before = len(ctx.merges)
    found = commands(ctx, kind, text)
    if found is None:  # a format the reader cannot split: by its shape
        if opaque.shaped(ctx, text):
            ctx.runtime(f"{what}, and its text is merge-shaped", via="planted")
    else:
        saved = ctx.cwd
        if kind == "shell" and "/hooks/" in key:
            from hook.detect.gitconfig import worktree_top

            ctx.cwd = worktree_top(ctx.cwd) if ctx.cwd else None  # git runs hooks at the top of the working tree
        for line in found:
            ctx.run(["("])
            functions, aliases = set(ctx.functions), set(ctx.aliases)
            ctx.run_text(line, powershell=kind == "powershell")
            if kind in ("shell", "fish", "powershell"):
                _defined(ctx, functions, aliases)
            ctx.run([")"])
        ctx.cwd = saved
    ctx.uncertain(mark, what)
    if len(ctx.merges) > before and all(m.repo is None for m in ctx.merges[before:]):
        ctx.runtime(what, via="planted")  # judged where gh would look first too


def _defined(ctx: Ctx, functions: set[str], aliases: set[str]) -> None:
    """What a start-up file defines runs later too: an agent's shell snapshot keeps its functions and aliases, and a
    prompt runs ``PROMPT_COMMAND`` and the substitutions in ``PS1``…: each is read as if run."""
    for name in [n for n in ctx.functions if n not in functions]:
        ctx.call(name, [])
    for name in [n for n in ctx.aliases if n not in aliases]:
        ctx.run_text(ctx.aliases[name], powershell=False)
    for name in ("PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4"):
        value = ctx.vars.get(name)
        if value and (name == "PROMPT_COMMAND" or "$(" in value or "`" in value):
            ctx.run_text(value if name == "PROMPT_COMMAND" else f"echo {value}", powershell=False)


_WHAT = {"shell": "run by a shell on its own", "cron": "a cron table", "crontab": "a cron table",
         "systemd": "a service or autostart entry", "plist": "a launchd agent", "make": "make's recipes",
         "just": "just's recipes", "package": "package scripts", "yaml": "a task runner's commands",
         "code": "code a tool runs", "pth": "code Python runs at start-up", "gitconfig": "git's configuration",
         "library": "a library a program preloads", "fish": "fish's start-up", "powershell": "PowerShell's profile"}


def setting(ctx: Ctx, key: str, value: str) -> None:
    """``git config KEY VALUE`` (any file) or ``gh alias set``: a command set up to run whenever git (gh) runs
    it later — judged now, undetermined (``core.hooksPath`` names a hooks directory: `judge`)."""
    from hook.detect.plantformats import git_setting

    section, _, rest = key.partition(".")
    line = git_setting(ctx, section, rest.rpartition(".")[2], value)
    if line is None:
        return
    what = f"git config {key} sets up a command git runs later"
    if DYN in value:
        from hook.detect.opaque import shaped

        if not value.strip(DYN) or shaped(ctx, value):
            ctx.runtime(f"{what}, with text only the run knows", via="planted")
        return
    mark = ctx.mark()
    ctx.run(["("])
    ctx.run_text(line, powershell=False)
    ctx.run([")"])
    ctx.uncertain(mark, what)


def _hook_dirs(ctx: Ctx) -> list[str]:
    """The hooks directories of the current directory's repository: ``core.hooksPath`` (git's files, this
    command), else the common git directory's ``hooks``."""
    from hook.detect import gitconfig, gitrepo

    found = [d for d in ctx.hooks_paths if DYN not in d]
    configured = gitconfig.value("core", "hookspath", ctx.cwd, ctx.env) if ctx.cwd else None
    if configured and DYN not in configured:
        found.append(ctx.path(configured, _top(ctx)))
    dirs = gitrepo.git_dirs(ctx.cwd)
    if dirs is not None:
        found.append(paths.join(dirs[1], "hooks"))
    return found


def _top(ctx: Ctx) -> str | None:
    from hook.detect.gitconfig import worktree_top

    return worktree_top(ctx.cwd) if ctx.cwd else None


def _startup_targets(ctx: Ctx) -> set[str]:
    """The files ``BASH_ENV``/``ENV`` name, and ``ZDOTDIR``'s start-up files, as the command leaves them."""
    found = set()
    for name in ("BASH_ENV", "ENV"):
        value = ctx.getenv(name, {})
        if value and DYN not in value:
            found.add(ctx.path(value))
    zdot = ctx.getenv("ZDOTDIR", {})
    if zdot and DYN not in zdot:
        found.update(ctx.path(f"{zdot}/{n}") for n in (".zshenv", ".zshrc", ".zprofile", ".zlogin"))
    return found


def _startup_unknown(ctx: Ctx) -> bool:
    """``BASH_ENV``/``ENV`` set by this command to a path only the run knows: any file it wrote may be the one."""
    return any(name in ctx.exported and DYN in (ctx.vars.get(name) or "") for name in ("BASH_ENV", "ENV"))


def _hooks_dir(ctx: Ctx, directory: str) -> None:
    """``core.hooksPath`` set to ``directory`` by this command: the hooks already there run from now on (this
    command's own plants there are judged with the rest)."""
    import os

    if DYN in directory:
        ctx.runtime("git's hooks directory is set to a path only the run knows", via="planted")
        return
    from hook.detect.shaped import merge_shaped

    try:
        names = sorted(os.listdir(directory))[:32]
    except OSError:
        return
    for name in names:
        key = paths.join(directory, name)
        if key in ctx.plants:
            continue
        text = ctx.read_file(key)
        if text is not None and merge_shaped(text):
            read(ctx, key, "shell", text)


def copy(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``cp``, ``mv``, ``install``, ``ln``, ``dd``: the files they write hold what their sources hold."""
    from hook.detect.programs import command_name

    name = command_name(args[0][0])
    words = [a[0] for a in args[1:]]
    if name == "dd":
        ops = dict(w.split("=", 1) for w in words if "=" in w)
        if "of" in ops:
            source = ops.get("if")
            text = ctx.read_file(source) if source and DYN not in source else (
                ctx.stdin_text(cmd) if source is None else None)
            _put(ctx, ops["of"], text)
        return
    target, sources = _operands(name, words)
    if target is None or not sources:
        return
    into = target.endswith("/") or len(sources) > 1 or _is_dir(ctx, target)
    symbolic = name == "ln" and any((w.startswith("-") and not w.startswith("--") and "s" in w) or w == "--symbolic"
                                    for w in words)
    for source in sources:
        dest = paths.join(target, source.rstrip("/").rsplit("/", 1)[-1]) if into else target
        if symbolic and not source.startswith("/") and DYN not in dest:  # relative to the link's own directory
            source = paths.normpath(paths.join(ctx.path(dest).rsplit("/", 1)[0], source))
        _put(ctx, dest, None if DYN in source else ctx.read_file(source))


def _put(ctx: Ctx, dest: str, text: str | None) -> None:
    if DYN in dest:
        return
    key = ctx.path(dest)
    ctx.files[key] = DYN if text is None else text
    ctx.planted(key, text, append=False)


def _operands(name: str, words: list[str]) -> tuple[str | None, list[str]]:
    """``(target, sources)`` of ``cp``/``mv``/``install``/``ln`` (``-t DIR``/``--target-directory=DIR`` first)."""
    valued = {"cp": "St", "mv": "St", "install": "gmoStC", "ln": "St"}.get(name, "")
    target, operands, i = None, [], 0
    while i < len(words):
        w = words[i]
        if w == "--":
            operands += words[i + 1 :]
            break
        if w.startswith("--target-directory="):
            target = w.split("=", 1)[1]
        elif w.startswith("--") or w == "-":
            pass
        elif w.startswith("-") and len(w) > 1:
            letter = next((c for c in w[1:] if c in valued), "")
            if letter and w.endswith(letter):
                if letter == "t" and i + 1 < len(words):
                    target = words[i + 1]
                i += 1
        else:
            operands.append(w)
        i += 1
    if target is not None:
        return target, operands
    return (operands[-1], operands[:-1]) if len(operands) > 1 else (None, [])


def _is_dir(ctx: Ctx, target: str) -> bool:
    import os

    key = ctx.path(target)
    return DYN not in key and os.path.isdir(key)
