"""Factory Droid: ``PreToolUse`` hooks, Claude Code's shape (Factory-AI/factory docs/reference/hooks-reference).

Stdin: ``sessionId`` (the reference's camelCase; Factory's own guard reads snake_case, so both are read),
``cwd``, ``hookEventName``, ``tool_name`` (``Execute`` for shell commands, ``Bash`` in older releases;
MCP tools ``mcp__<server>__<tool>``), ``tool_input``. Deny: exit 2, stderr "is fed back to Droid"; other
non-zero exits are non-blocking errors. Timeout in seconds (default 60).

Files: ``.factory/hooks.json`` where it exists, else the ``hooks`` key of ``.factory/settings.json``
(Droid reads the latter only when the former is absent); the same under ``~/.factory``. Organisation-
managed hooks are set in Factory's dashboard, not in a file. Hooks are snapshotted when a session
starts, and edits are reviewed in ``/hooks``.
"""

from __future__ import annotations

from hook.agents.call import MCP_PREFIX, ToolCall, mcp, notice_exit_1, proceed, shell, stderr_deny

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "factory"
SHELL_TOOLS = ("Execute", "Bash")
SCOPES = {
    "project": (".factory/hooks.json", ".factory/settings.json"),
    "user": ("~/.factory/hooks.json", "~/.factory/settings.json"),
}
TIMEOUT_S = 10


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    tool_name, tool_input = payload.get("tool_name", payload.get("toolName")), payload.get("tool_input")
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        return None
    ids: dict[str, Any] = {"cwd": payload.get("cwd"), "session_id": payload.get("session_id", payload.get("sessionId")),
           "tool_use_id": payload.get("tool_use_id", payload.get("toolUseId"))}
    if tool_name in SHELL_TOOLS:
        return shell(tool_input.get("command"), **ids)
    if tool_name.startswith(MCP_PREFIX):
        server, _, tool = tool_name[len(MCP_PREFIX):].rpartition("__")
        return mcp(server, tool, tool_input, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("PreToolUse", ("|".join(SHELL_TOOLS), *matchers[1:]), handler(guard, TIMEOUT_S))
