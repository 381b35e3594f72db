"""Google Gemini CLI: ``BeforeTool`` hooks in settings files (packages/core/src/hooks).

Stdin (seen from Gemini CLI 0.61.0 in tests/test_agent_clis.py): ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name: "BeforeTool"``, ``timestamp``, ``tool_name``, ``tool_input``. The shell tool is
``run_shell_command`` (``{command, description?, dir_path?, is_background?}``); MCP tools are
``mcp_<server>_<tool>``, with ``mcp_context: {server_name, tool_name, …}`` naming both parts exactly.
Deny: exit 2, the reason on stderr; the model gets ``Tool execution blocked: <reason>`` and the turn goes
on. Exit 2 with *no* output allows, and a timeout allows: the reason is never empty, and the lookup
budget is far below the timeout. Timeout in milliseconds (default 60000).

Files: ``.gemini/settings.json``, ``~/.gemini/settings.json``, and the system file
``/etc/gemini-cli/settings.json`` (moved by ``GEMINI_CLI_SYSTEM_SETTINGS_PATH``), which overrides the
others. ``BeforeTool`` lists are concatenated across them. In a folder that is not trusted, settings
hooks are skipped; a user can still list ``merge-hold`` in ``hooksConfig.disabled``.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, mcp, notice_exit_1, proceed, shell, split_mcp_name, stderr_deny, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
SHELL_TOOL = "run_shell_command"
SCOPES = {
    "project": ".gemini/settings.json",
    "user": "~/.gemini/settings.json",
    "managed": "/etc/gemini-cli/settings.json",
}
TIMEOUT_MS = 10_000
HOOK_NAME = "merge-hold"
"""The handler's ``name``: how Gemini CLI reports it, and what ``hooksConfig.disabled`` would list."""


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    return read_gemini_shape(payload, SHELL_TOOL)


def read_gemini_shape(payload: dict[str, Any], shell_tool: str) -> ToolCall | None:
    """Gemini CLI's tool call, shared with its fork Qwen Code."""
    tool_name, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        return None
    ids: dict[str, Any] = {"session_id": payload.get("session_id"), "tool_use_id": payload.get("tool_use_id")}
    cwd = text(payload.get("cwd"))
    if tool_name == shell_tool:
        directory = text(tool_input.get("dir_path"))
        if directory and cwd and not directory.startswith("/"):
            directory = f"{cwd.rstrip('/')}/{directory}"
        return shell(tool_input.get("command"), cwd=directory or cwd, **ids)
    context = payload.get("mcp_context")
    if isinstance(context, dict) and text(context.get("tool_name")):
        return mcp(context.get("server_name"), context.get("tool_name"), tool_input, cwd=cwd, **ids)
    if tool_name.startswith("mcp__"):
        server, _, tool = tool_name[5:].rpartition("__")
        return mcp(server, tool, tool_input, cwd=cwd, **ids)
    if tool_name.startswith("mcp_"):
        server, tool = split_mcp_name(tool_name[4:], "_")
        return mcp(server, tool, tool_input, cwd=cwd, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("BeforeTool", (f"{SHELL_TOOL}|mcp_.*",), {**handler(guard), "name": HOOK_NAME, "timeout": TIMEOUT_MS})
