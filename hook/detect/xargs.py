"""``xargs`` and ``find -exec``: the command lines they build. Over input the text shows, xargs is
followed exactly (GNU xargs' splitting, ``-I``, ``-n``, ``-r``, an empty input still running the
command once); otherwise the arguments it adds are unknown.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command


def known_input(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> bool:
    """xargs over input the text shows (``printf '%s\\n' 5 | xargs gh pr merge``): run each command
    line it builds, as GNU xargs builds them. False when the input or the options are not modelled."""
    replace: str | None = None
    per: int | None = None
    skip_empty = False
    i = 1
    while i < len(args):
        a = args[i][0]
        if DYN in a:
            return False
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a == "-I" and i + 1 < len(args):
            replace, i = args[i + 1][0], i + 2
            continue
        if a.startswith("-I") or a.startswith("--replace="):
            replace = a[2:] if a.startswith("-I") else a.split("=", 1)[1]
        elif a in ("-n", "--max-args") and i + 1 < len(args) and args[i + 1][0].isdigit():
            per, i = int(args[i + 1][0]), i + 2
            continue
        elif a.startswith("-n") and a[2:].isdigit():
            per = int(a[2:])
        elif a in ("-r", "--no-run-if-empty"):
            skip_empty = True
        elif a not in ("-t", "--verbose"):
            return False
        i += 1
    text = ctx.stdin_text(cmd)
    if text is None or DYN in text or any(c in text for c in "'\"\\") or per == 0:
        return False
    inner = args[i:] or [("echo", None)]
    if replace is not None:
        for line in text.split("\n"):
            item = line.lstrip(" \t")
            if item:
                ctx.simple_command([(a.replace(replace, item), w) for a, w in inner], cmd, overlay)
        return True
    items = text.split()
    if not items:
        if not skip_empty:
            ctx.simple_command(list(inner), cmd, overlay)
        return True
    step = per or len(items)
    for k in range(0, len(items), step):
        ctx.simple_command([*inner, *((item, None) for item in items[k : k + step])], cmd, overlay)
    return True


def unknown_input(args: list[Arg]) -> list[Arg]:
    """xargs appends words read from stdin (or puts them where -I's string is): an unknown argument."""
    replace: str | None = None
    i = 1
    while i < len(args):
        a = args[i][0]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a in ("-I", "--replace") or a.startswith(("-I", "--replace=", "-i")):
            replace = a[2:] or (args[i + 1][0] if a == "-I" and i + 1 < len(args) else "{}")
            if a.startswith("--replace="):
                replace = a.split("=", 1)[1]
            i += 2 if a == "-I" else 1
            continue
        if a in ("-a", "-d", "-E", "-L", "-n", "-P", "-s") or a in ("--arg-file", "--delimiter", "--max-args",
                                                                    "--max-procs", "--max-chars"):
            i += 2
            continue
        i += 1
    inner = args[i:] or [("echo", None)]
    if replace:
        return [(a.replace(replace, DYN), w) for a, w in inner]
    return [*inner, (DYN, None)]


def find_exec(args: list[Arg]) -> list[list[Arg]]:
    found, i = [], 0
    while i < len(args):
        if args[i][0] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j][0] not in (";", "+"):
                j += 1
            found.append([(a.replace("{}", DYN), w) for a, w in args[i + 1 : j]])
            i = j
        i += 1
    return found
