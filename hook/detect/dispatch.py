"""One expanded command line: see through wrappers (``timeout``, ``sudo``, ``env``, ``xargs`` ...:
hook/detect/wrappers.py), then read the program as the program table says (hook/detect/programs.py):
shells (``bash -c``, heredocs and pipes fed to a shell) by the shell model, ``gh``, ``git``, ``curl``,
interpreters and runners by their detectors, data programs (``echo``, ``grep``) not at all, and any
other program by the rule for programs the guard does not read (hook/detect/opaque.py).
"""

from __future__ import annotations

from hook.detect.programs import WRAPPER, command_name, row
from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_EXPORTERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
UNWRAPPED = frozenset({"eval", "iex", "invoke-expression", "pnpm"})
"""Programs hook/detect/wrappers.py unwraps that the table does not class as wrappers: eval runs shell text
(an interpreter), pnpm runs scripts too (a task runner); their rows say so."""
_MAX_UNWRAP = 16
_PRELOADS = ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES")


def dispatch(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    for _ in range(_MAX_UNWRAP):
        if not args:
            return
        name = command_name(args[0][0])
        if DYN in name:
            _detector("gh:dynamic_command")(ctx, args, cmd, overlay)
            return
        found = row(name)
        if name not in UNWRAPPED and (found is None or found[0] != WRAPPER):
            break
        from hook.detect.wrappers import unwrap  # loaded for a wrapper only (start-up budget, design §7)

        unwrapped = unwrap(ctx, name, args, cmd, overlay, dispatch)
        if unwrapped is None:
            return
        if unwrapped is args:
            break
        args = unwrapped
    if (overlay or ctx.exported) and any(n in overlay or n in ctx.exported for n in _PRELOADS):
        from hook.detect.compiled import preloads

        preloads(ctx, overlay)  # a library this command wrote runs before the program (hook/detect/planted.py)
    handler = _HANDLERS.get(name)
    written = ctx.files.get(ctx.path(args[0][0])) if "/" in args[0][0] else None
    if written is None and ctx.files and "/" not in args[0][0]:
        from hook.detect.shellrun import on_path

        written = on_path(ctx, args[0][0], overlay)
    if written is not None:  # `echo 'gh pr merge 5' > x.sh && chmod +x x.sh && ./x.sh`
        ctx.run_text(written, powershell=False)
    elif handler is not None:
        handler(ctx, args, cmd, overlay)
    else:
        _by_kind(ctx, name, args, cmd, overlay)


def _by_kind(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """The program table's reading of ``name`` (hook/detect/programs.py): its detector, the shell model, or
    the rule for programs the guard does not read (hook/detect/opaque.py)."""
    from hook.detect.programs import DATA, INTERPRETER, RUNS_WITH, UNKNOWN

    found = row(name)
    kind, reading = (found[0], found[1]) if found is not None else (UNKNOWN, "")
    if reading == "decoder":
        ctx.decoder_seen = True
    elif reading == "shell":
        _shell(ctx, name, args, cmd, overlay)
    elif ":" in reading:
        _detector(reading)(ctx, args, cmd, overlay)
    if kind == DATA and name in RUNS_WITH and any(
            a[0].split("=", 1)[0] in RUNS_WITH[name] or a[0].startswith(RUNS_WITH[name]) for a in args[1:]):
        kind = UNKNOWN  # `tar --to-command=CMD`, `rsync -e CMD`: it runs a command it is given
    if kind == UNKNOWN or (kind == INTERPRETER and not reading):
        from hook.detect.opaque import opaque

        what = "a program the guard does not know" if kind == UNKNOWN else "an interpreter whose code it does not read"
        opaque(ctx, name, args, cmd, what=what, files=True, own_name=kind == UNKNOWN)


def _detector(spec: str) -> Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]:
    module, _, function = spec.partition(":")
    found: Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None] = getattr(
        __import__(f"hook.detect.{module}", fromlist=[function]), function)
    return found


def _shell(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    if name in ("pwsh", "powershell", "pwsh-preview"):
        from hook.detect.script import powershell

        ctx.powershell_hosts += 1
        try:
            powershell(ctx, args, cmd)
        finally:
            ctx.powershell_hosts -= 1
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
    """A shell's command line by its grammar (hook/detect/grammars.py): ``-c`` (alone or bundled: ``-xec``,
    ``-lc``) runs the first operand, the rest its ``$0 $1 …``; else an operand is a script file; else stdin.
    fish's ``-c``/``--command`` takes the text as its value. A spelling the grammar does not settle: the reading
    is a hint, undetermined."""
    from hook.detect.getopt import parse
    from hook.detect.grammars import FISH, SHELLS

    name = command_name(args[0][0])
    words = [a[0] for a in args]
    parsed = parse(FISH if name == "fish" else SHELLS.get(name, SHELLS["sh"]), words, 1)
    mark = ctx.mark() if not parsed.exact else -1
    before = len(ctx.merges)
    i = parsed.end
    fish = [v for o, v in parsed.options if o in ("-c", "--command") and v is not None] if name == "fish" else []
    if fish:
        run_string(ctx, [(fish[-1], None)], env=overlay)
    elif name != "fish" and parsed.has("-c"):
        if i < len(args):
            run_string(ctx, args[i : i + 1], positional=args[i + 1 :], env=overlay)
    elif i < len(args) and not parsed.has("-s"):  # `bash FILE`, `bash <(…)`, `bash /dev/stdin <<< …`
        from hook.detect.shellrun import script

        script(ctx, args[i], cmd, positional=args[i:], env=overlay)
    else:  # the script on stdin; with -s the operands are its $1 $2 …
        _stdin_script(ctx, cmd, overlay, [args[0], *args[i:]])
    if mark >= 0:
        ctx.uncertain(mark, f"{name}: a spelling of its options the guard does not read exactly")
        if len(ctx.merges) == before:
            from hook.detect.opaque import opaque

            opaque(ctx, name, args, cmd, what="a shell whose options are not read exactly", files=False)


def _stdin_script(ctx: Ctx, cmd: Command, overlay: dict[str, str | None], positional: list[Arg]) -> None:
    text = ctx.stdin_text(cmd)
    if text is None and (cmd.piped or any(r.op.startswith("<") for r in cmd.redirects)):
        if not ctx.decoder_seen:  # `curl … | bash`: the script is that program's output
            ctx.runtime("a shell reads a script produced at run time")
            return
        text = DYN  # `... | base64 -d | sh`: the script is hidden on purpose
    if text is not None:
        run_string(ctx, [(text, None)], env=overlay, positional=positional)


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
    "cd": _cd, "pushd": _cd, "chdir": _cd, "set-location": _cd, "popd": _popd,
    "unset": _unset, **{name: _export for name in _EXPORTERS},
}
