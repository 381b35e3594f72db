"""Text a program hands to a shell (``bash -c``, ``eval``, ``source``, a script, a trap): run by the
detection context in a subshell or the same shell. Its own module so that the dispatcher
(hook/detect/dispatch.py) and the rarer readings (hook/detect/shellrun.py) share it without an import
cycle."""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg


def run_string(ctx: Ctx, args: list[Arg], *, positional: list[Arg] | None = None, same_shell: bool = False,
                powershell: bool | None = None, env: dict[str, str | None] | None = None) -> None:
    """Run text a program hands to a shell, with ``env`` (the prefix assignments of the command that
    hands it: ``GH_REPO=x bash -c …``) exported. Hidden text after a decoder ran is a merge we cannot see."""
    text = " ".join(a[0] for a in args)
    if not text.strip():
        return
    whole = DYN in text and not text.strip().strip(DYN)  # wholly a program's output
    if DYN in text and ctx.decoder_seen:
        ctx.add(Merge(via="obfuscated", undetermined=True, detail="decoded text run by a shell"))
        if whole:
            return
    elif whole:  # `eval "$(…)"`, `bash -c "$(curl …)"`: the program printing it decides what runs
        from hook.detect.shellenv import produced

        produced(ctx, args, same_shell)
        return
    elif DYN in text:
        # text assembled here with run-time pieces (`bash -c "gh pr $ACTION 5"`): a piece may hold any
        # syntax (`;`, a newline), so what runs is not in the text
        ctx.add(Merge(via="unparsed", undetermined=True, detail="shell text assembled at run time"))
    before = len(ctx.merges)
    if not same_shell:
        ctx.run(["("])
        ctx.set_positional([arg[0] for arg in (positional or [])[1:]])  # bash -c TEXT $0 $1 ...
        if positional:
            ctx.vars["0"] = positional[0][0]
    saved = ctx.push_env(env or {})
    ctx.run_text(text, powershell=powershell)
    ctx.pop_env(saved)
    if not same_shell:
        ctx.run([")"])
    if any(decoded.strip() and decoded.strip() in text for decoded in ctx.decoded):
        # seen through base64 & co.: kept, but whoever hid it gets the undetermined policy too
        ctx.merges[before:] = [m.replace(undetermined=True, detail=m.detail or "decoded from hidden text")
                               for m in ctx.merges[before:]]
