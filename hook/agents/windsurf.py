"""Windsurf (Cascade; also Devin Desktop): ``pre_run_command`` and ``pre_mcp_tool_use`` hooks.

Stdin: ``agent_action_name`` (the event), ``trajectory_id``, ``execution_id``, ``timestamp``,
``tool_info``: ``{command_line, cwd}`` for a command, ``{mcp_server_name, mcp_tool_name,
mcp_tool_arguments}`` for an MCP tool. Deny: exit 2; "the Cascade agent will see the error message
from stderr" (``: action blocked by hook`` is appended). Stdout is not parsed. No timeout is documented.

Files: ``.windsurf/hooks.json``, ``~/.codeium/windsurf/hooks.json``, and the system file
``/etc/windsurf/hooks.json``; all are merged and run system, then user, then workspace.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, mcp, notice_exit_1, proceed, shell, stderr_deny

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "windsurf"
SCOPES = {
    "project": ".windsurf/hooks.json",
    "user": "~/.codeium/windsurf/hooks.json",
    "managed": "/etc/windsurf/hooks.json",
}


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    action, info = payload.get("agent_action_name"), payload.get("tool_info")
    if not isinstance(info, dict):
        return None
    ids: dict[str, Any] = {"session_id": payload.get("trajectory_id"), "tool_use_id": payload.get("execution_id")}
    if action == "pre_run_command":
        return shell(info.get("command_line"), cwd=info.get("cwd"), **ids)
    if action == "pre_mcp_tool_use":
        return mcp(info.get("mcp_server_name"), info.get("mcp_tool_name"), info.get("mcp_tool_arguments"), **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": guard, "show_output": True}
    return {"pre_run_command": [dict(handler)], "pre_mcp_tool_use": [dict(handler)]}
