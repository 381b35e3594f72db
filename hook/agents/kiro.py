"""Kiro CLI: ``preToolUse`` hooks inside an agent configuration (kiro.dev/docs/cli/hooks).

Hooks belong to an agent: ``.kiro/agents/<agent>.json`` (project) or ``~/.kiro/agents/<agent>.json``
(user), ``{"hooks": {"preToolUse": [{"matcher", "command", "timeout_ms"}]}}``; the install targets
``default.json`` (``--path`` picks another agent's file). Stdin: ``hook_event_name``, ``cwd``,
``tool_name``, ``tool_input``. The shell tool is ``execute_bash`` (``shell`` and ``execute_cmd`` in
other releases) with ``tool_input.command``; MCP tools are named ``@<server>/<tool>``. Deny: exit 2, and
"STDERR is returned to the LLM". ``timeout_ms`` defaults to 30000. No managed location is documented.
The matcher is ``*``: tool names differ between releases, and the guard's non-merge path is cheap.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, mcp, notice_exit_1, proceed, shell, stderr_deny, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "kiro"
SHELL_TOOLS = ("execute_bash", "shell", "execute_cmd")
SCOPES = {"project": ".kiro/agents/default.json", "user": "~/.kiro/agents/default.json"}
NEW_FILE = {"name": "default", "tools": ["*"]}
TIMEOUT_MS = 10_000


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    tool_name, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        return None
    ids: dict[str, Any] = {"cwd": text(payload.get("cwd")), "session_id": payload.get("session_id")}
    if tool_name in SHELL_TOOLS:
        return shell(tool_input.get("command"), **ids)
    if tool_name.startswith("@") and "/" in tool_name:
        server, _, tool = tool_name[1:].partition("/")
        return mcp(server, tool, tool_input, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    return {"preToolUse": [{"matcher": "*", "command": guard, "timeout_ms": TIMEOUT_MS}]}
