"""Merge detection for the agent guard: which pull-request merges would a tool call perform?

The entry point of hook/detect/: MCP tools go to hook/detect/mcp.py, shell text to the detection
context (hook/detect/context.py), which runs it through the shell interpreter and hands each
expanded command to hook/detect/dispatch.py.
"""

from __future__ import annotations

from hook.detect.prefilter import might_merge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hook.detect.model import Detection


def detect(tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | None, env: Mapping[str, str]) -> Detection:
    """Every merge the tool call would perform. Never raises: text it cannot read but that looks
    like a merge comes back as an undetermined merge."""
    from hook.detect.model import Detection, Merge

    if tool_name.startswith("mcp__"):
        from hook.detect.mcp import detect_mcp

        return Detection(tuple(detect_mcp(tool_name, tool_input)))
    command = tool_input.get("command")
    if not isinstance(command, str) or not might_merge(command):
        return Detection()
    from hook.detect.context import Ctx
    from hook.detect.dispatch import dispatch
    from hook.shell.syntax import DYN

    ctx = Ctx(cwd, env, powershell=tool_name == "PowerShell", dispatch=dispatch)
    try:
        ctx.run_text(command)
        if ctx.traps:  # an exit trap runs after the last command, with every function defined by then
            from hook.detect.shellrun import run_trap

            for action in list(ctx.traps):
                run_trap(ctx, action)
        if ctx.hooks_paths or ctx.set_up or any(DYN in text or might_merge(text) for text, _ in ctx.plants.values()):
            from hook.detect.planted import judge  # what it set up for another program to run, if it can merge

            judge(ctx)
    except Exception as exc:  # a reader bug must not hide a merge: fail towards "maybe"
        ctx.add(Merge(via="unparsed", undetermined=True, detail=f"detector error: {type(exc).__name__}"))
    return Detection(tuple(ctx.merges), tuple(ctx.notes))
