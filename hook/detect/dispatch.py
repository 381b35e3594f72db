"""One expanded command line: see through wrappers (``timeout``, ``sudo``, ``env``, ``xargs`` ...),
shells (``bash -c``, heredocs and pipes fed to a shell, ``eval``), then hand ``gh``, ``git``, ``curl``
and friends to their detectors. Commands that only print text (``echo``, ``grep``) are not run.
"""

from __future__ import annotations

from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

# name -> (short options taking a value, long options taking a value, operands before the command)
_WRAPPERS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "gtimeout": ("sk", ("--signal", "--kill-after"), 1),
    "nohup": ("", (), 0),
    "exec": ("a", (), 0),
    "builtin": ("", (), 0),
    "command": ("", (), 0),
    "sudo": ("ugpCDrtTU", ("--user", "--group", "--prompt", "--chdir", "--role", "--type", "--other-user"), 0),
    "doas": ("uC", (), 0),
    "time": ("of", ("--output", "--format"), 0),
    "nice": ("n", ("--adjustment",), 0),
    "ionice": ("cnp", ("--class", "--classdata"), 0),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0),
    "chronic": ("", (), 0),
    "unbuffer": ("", (), 0),
    "setsid": ("", (), 0),
    "caffeinate": ("tw", (), 0),
    "taskset": ("", (), 1),
    "flock": ("wE", ("--timeout", "--conflict-exit-code"), 1),
    "torsocks": ("", (), 0),
    "coproc": ("", (), 0),
    "proxychains": ("f", (), 0),
    "proxychains4": ("f", (), 0),
}
# runner tools that execute the command after their subcommand (and after `--` when given)
_RUNNERS = {"op": "run", "doppler": "run", "infisical": "run", "aws-vault": "exec", "uv": "run",
            "poetry": "run", "pipenv": "run", "direnv": "exec", "mise": "exec", "rtx": "exec",
            "pnpm": "exec", "dotenv": "", "npx": "", "bunx": "", "devbox": "run"}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "fish", "rbash", "yash"})
_PWSH = frozenset({"pwsh", "powershell", "pwsh-preview"})
_DECODERS = frozenset({"base64", "base32", "basenc", "xxd", "openssl", "gunzip", "zcat", "gzip", "bzip2",
                       "xz", "rev", "tr", "uudecode", "certutil"})
_EXPORTERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
# name -> "module:function" of its detector, imported on first use: a `git push` loads no HTTP or gh
# reader (start-up budget, design §7)
_DETECTORS = {
    "gh": "gh:gh", "hub": "gh:hub", "git": "git:git", "curl": "http:curl",
    "wget": "http:wget", "http": "http:httpie", "https": "http:httpie",
    "xh": "http:httpie", "xhs": "http:httpie", "invoke-restmethod": "http:invoke_rest",
    "irm": "http:invoke_rest", "invoke-webrequest": "http:invoke_rest",
    "iwr": "http:invoke_rest", "make": "make:make", "gmake": "make:make",
    **dict.fromkeys(("just", "task", "npm", "yarn", "pnpm", "bun", "rake", "mage"), "make:runner"),
    **dict.fromkeys(("echo", "printf", "cat", "tee"), "script:writes"),
    **dict.fromkeys(("node", "nodejs", "ruby", "perl", "php", "osascript", "deno"), "script:interpreter"),
    **dict.fromkeys(("codex", "gemini", "aider", "opencode", "cursor-agent", "goose", "amp", "crush"),
                    "script:agent"),
    **dict.fromkeys(("start-process", "saps", "start"), "script:start_process"),
    "trap": "shellrun:trap", "hash": "shellrun:hash_p", "source": "shellrun:source", ".": "shellrun:source",
    "alias": "shellenv:alias", "unalias": "shellenv:unalias", "sed": "textprog:sed", "gsed": "textprog:sed",
    "parallel": "textprog:parallel", **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), "textprog:awk"),
}
_MAX_UNWRAP = 16


def dispatch(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    for _ in range(_MAX_UNWRAP):
        if not args:
            return
        name = command_name(args[0][0])
        if DYN in name:
            _detector("gh:dynamic_command")(ctx, args, cmd, overlay)
            return
        unwrapped = _unwrap(ctx, name, args, cmd, overlay)
        if unwrapped is None:
            return
        if unwrapped is args:
            break
        args = unwrapped
    handler = _HANDLERS.get(name)
    written = ctx.files.get(ctx.path(args[0][0])) if "/" in args[0][0] else None
    if written is None and ctx.files and "/" not in args[0][0]:
        from hook.detect.shellrun import on_path

        written = on_path(ctx, args[0][0], overlay)
    if written is not None:  # `echo 'gh pr merge 5' > x.sh && chmod +x x.sh && ./x.sh`
        ctx.run_text(written, powershell=False)
    elif handler is not None:
        handler(ctx, args, cmd, overlay)
    elif name in _DECODERS:
        ctx.decoder_seen = True
    elif name in _SHELLS or name in _PWSH or name == "cmd":
        _shell(ctx, name, args, cmd, overlay)
    elif (spec := _route(name)) is not None:
        _detector(spec)(ctx, args, cmd, overlay)


def _route(name: str) -> str | None:
    if name in _DETECTORS:
        return _DETECTORS[name]
    if name.startswith(("python", "pypy")):
        return "script:interpreter"
    if "claude" in name:
        return "script:agent"
    return None


def _detector(spec: str) -> Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]:
    module, _, function = spec.partition(":")
    found: Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None] = getattr(
        __import__(f"hook.detect.{module}", fromlist=[function]), function)
    return found


def command_name(word: str) -> str:
    """``/usr/bin/gh`` -> ``gh``; ``gh.exe`` -> ``gh``; lower case (PowerShell and macOS ignore case)."""
    name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in (".exe", ".cmd", ".bat"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _unwrap(ctx: Ctx, name: str, args: list[Arg], cmd: Command,
            overlay: dict[str, str | None]) -> list[Arg] | None:
    """The command a wrapper runs (``args`` itself when ``name`` is no wrapper; None: runs nothing)."""
    if name in _WRAPPERS:
        shorts, longs, operands = _WRAPPERS[name]
        i = _skip_options(args, 1, shorts, longs)
        if name == "builtin" and i < len(args) and DYN not in args[i][0]:
            from hook.detect.shellrun import BUILTINS

            if args[i][0] not in BUILTINS:
                return None  # `builtin gh …` fails: gh is no shell builtin
        if name == "command" and any(a[0] in ("-v", "-V") for a in args[1:i]):
            return None  # `command -v gh` only looks the name up
        if name == "sudo":
            i = _assignments(args, i, overlay)
        i += operands
        if name == "flock" and i < len(args) and args[i][0] in ("-c", "--command"):
            run_string(ctx, args[i + 1 :], env=overlay)
            return None
        return args[i:]
    if name == "env":
        return _env(ctx, args, overlay)
    if name in ("xargs", "find"):  # loaded only when one runs (start-up budget, design §7)
        from hook.detect import xargs

        if name == "find":
            for inner in xargs.find_exec(args):
                dispatch(ctx, inner, cmd, overlay)
            return None
        if xargs.known_input(ctx, args, cmd, overlay):
            return None
        return xargs.unknown_input(args)
    if name in ("watch", "ssh", "su", "script"):
        _shell_string_wrapper(ctx, name, args)
        return None
    if name in ("eval", "iex", "invoke-expression"):
        run_string(ctx, args[1:], same_shell=True, env=overlay)
        return None
    if name in _RUNNERS and (not _RUNNERS[name] or (len(args) > 1 and args[1][0] == _RUNNERS[name])):
        start = 2 if _RUNNERS[name] else 1
        rest = args[start:]
        dashes = [i for i, a in enumerate(rest) if a[0] == "--"]
        if dashes:
            return rest[dashes[0] + 1 :]
        i = _skip_options(rest, 0, "", ())
        return rest[i + (1 if name in ("direnv", "aws-vault") else 0) :]
    return args


def _skip_options(args: list[Arg], i: int, shorts: str, longs: tuple[str, ...]) -> int:
    while i < len(args):
        a = args[i][0]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-" or DYN in a:
            return i
        if a.startswith("--"):
            i += 2 if a in longs else 1
        elif a[1:].isdigit():  # nice -10
            i += 1
        else:
            flags = a[1:]
            taken = next((k for k, f in enumerate(flags) if f in shorts), -1)
            i += 2 if taken == len(flags) - 1 else 1
    return i


def _assignments(args: list[Arg], i: int, overlay: dict[str, str | None]) -> int:
    while i < len(args) and "=" in args[i][0] and args[i][0].split("=", 1)[0].isidentifier():
        name, value = args[i][0].split("=", 1)
        overlay[name] = value
        i += 1
    return i


def _env(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None]) -> list[Arg] | None:
    i = 1
    while i < len(args):
        a = args[i][0]
        if a in ("-i", "--ignore-environment", "-"):
            overlay["GH_REPO"] = None
        elif a in ("-u", "--unset"):
            overlay[args[i + 1][0] if i + 1 < len(args) else ""] = None
            i += 1
        elif a.startswith("--unset="):
            overlay[a.split("=", 1)[1]] = None
        elif a in ("-C", "--chdir") or a.startswith("--chdir="):
            target = a.split("=", 1)[1] if "=" in a else (args[i + 1][0] if i + 1 < len(args) else None)
            i += 0 if "=" in a else 1
            ctx.chdir(target)
        elif a in ("-S", "--split-string") or a.startswith("--split-string="):
            text = a.split("=", 1)[1] if "=" in a else " ".join(x[0] for x in args[i + 1 : i + 2])
            rest = args[i + (1 if "=" in a else 2) :]
            return [(t, None) for t in text.split()] + rest
        elif a == "--":
            i += 1
            break
        elif not a.startswith("-"):
            break
        i += 1
    i = _assignments(args, i, overlay)
    return args[i:] or None


def _shell_string_wrapper(ctx: Ctx, name: str, args: list[Arg]) -> None:
    if name == "watch":
        i = _skip_options(args, 1, "nqd", ("--interval", "--differences"))
        run_string(ctx, args[i:])
    elif name == "ssh":
        i = _skip_options(args, 1, "BbcDEeFIiJLlmOoPpQRSWw", ())
        saved = ctx.cwd
        ctx.cwd = None  # the remote side's directory and repository are unknown here
        run_string(ctx, args[i + 1 :])
        ctx.cwd = saved
    else:  # su -c CMD, script -c CMD
        for i, a in enumerate(args):
            if a[0] in ("-c", "--command", "-qc") and i + 1 < len(args):
                run_string(ctx, args[i + 1 : i + 2])
                break


def _shell(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    if name in _PWSH:
        from hook.detect.script import powershell

        powershell(ctx, args, cmd)
        return
    if name == "cmd":
        flags = [i for i, a in enumerate(args) if a[0].lower() in ("/c", "/k", "/s/c")]
        if flags:
            run_string(ctx, args[flags[0] + 1 :], powershell=False)
        return
    from hook.detect.shellrun import startup_texts  # BASH_ENV, ENV, --rcfile: read before the script

    texts = startup_texts(ctx, name, args, overlay)
    if not texts:
        _posix_shell(ctx, args, cmd, overlay)
        return
    ctx.run(["("])  # the start-up files and the script share one shell
    saved = ctx.push_env(overlay)
    for text in texts:
        run_string(ctx, [(text, None)], same_shell=True)
    _posix_shell(ctx, args, cmd, overlay)
    ctx.pop_env(saved)
    ctx.run([")"])


def _posix_shell(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    i = 1
    while i < len(args):
        a = args[i][0]
        if a == "--" or a == "-s":
            i += 1
            break
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C", "--init-command"):
            i += 2
            continue
        if a.startswith(("-", "+")) and not a.startswith("--") and "c" in a[1:] and DYN not in a:
            if i + 1 < len(args):
                run_string(ctx, args[i + 1 : i + 2], positional=args[i + 2 :], env=overlay)
            return
        if not a.startswith(("-", "+")):  # `bash FILE`, `bash <(…)`, `bash /dev/stdin <<< …`
            from hook.detect.shellrun import script

            script(ctx, args[i], cmd, positional=args[i:], env=overlay)
            return
        i += 1
    if i < len(args) and args[i - 1][0] != "-s":
        return
    text = ctx.stdin_text(cmd)
    if text is None and (cmd.piped or any(r.op.startswith("<") for r in cmd.redirects)):
        if not ctx.decoder_seen:  # `curl … | bash`: the script is that program's output
            ctx.runtime("a shell reads a script produced at run time")
            return
        text = DYN  # `... | base64 -d | sh`: the script is hidden on purpose
    if text is not None:
        run_string(ctx, [(text, None)], env=overlay)


def _cd(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    rest = [a[0] for a in args[1:] if not (a[0].startswith("-") and a[0] != "-")]
    ctx.chdir(rest[0] if rest else "~")


def _popd(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    ctx.cwd = None


def _export(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    exporting = command_name(args[0][0]) == "export" or any(a[0].startswith("-") and "x" in a[0] for a in args)
    for text, _ in args[1:]:
        if text.startswith("-"):
            continue
        name, eq, value = text.partition("=")
        if eq:
            ctx.setvar(name, value)
        if exporting:
            ctx.exported.add(name)


def _unset(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    names = [a[0] for a in args[1:] if not a[0].startswith("-")]
    if any(a[0] not in ("-v", "-f", "--") and a[0].startswith("-") for a in args[1:]) or any(
            DYN in n for n in names):
        ctx.poison()  # `unset -n`, a name only the run knows: not followed
        return
    if any(a[0] == "-f" for a in args[1:]):
        for name in names:
            ctx.functions.pop(name, None)
        return
    for name in names:  # unset NAME removes a variable, or else a function of that name
        known = name in ctx.vars or name in ctx.arrays or name in ctx.env or name not in ctx.functions
        ctx.vars.pop(name, None)
        ctx.arrays.pop(name, None)
        if known:
            ctx.unset.add(name)
        else:
            ctx.functions.pop(name, None)


_HANDLERS: dict[str, Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]] = {
    "cd": _cd, "pushd": _cd, "chdir": _cd, "set-location": _cd, "sl": _cd, "popd": _popd,
    "unset": _unset, **{name: _export for name in _EXPORTERS},
}
