"""``sl``: two programs by one name. In PowerShell it is ``Set-Location`` (an alias: ``sl ..`` changes the
directory); anywhere else it is Sapling's CLI (or the steam locomotive), whose ``sl land``, ``sl ghstack land``
and ``sl push --to main`` merge or push and are not modelled: read as an unknown program, so merge-shaped
arguments make the answer undetermined (hook/detect/opaque.py) and ``sl status`` stays clean.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command


def sl(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    if ctx.ps:
        rest = [a[0] for a in args[1:] if not (a[0].startswith("-") and a[0] != "-")]
        ctx.chdir(rest[0] if rest else "~")
        return
    from hook.detect.opaque import opaque

    opaque(ctx, "sl", args, cmd, what="Sapling's CLI, whose commands are not modelled", files=False)
    if ctx.powershell_hosts:  # inside `pwsh -Command '…'` it may be Set-Location: the directory is not known
        ctx.cwd = None
