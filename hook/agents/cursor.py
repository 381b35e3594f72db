"""Cursor: ``beforeShellExecution`` and ``beforeMCPExecution`` hooks in ``hooks.json`` (Cursor 1.7+).

Stdin, common: ``conversation_id``, ``generation_id``, ``hook_event_name``, ``workspace_roots``.
``beforeShellExecution`` adds ``command`` and ``cwd`` (sometimes ``""``: then the first workspace root).
``beforeMCPExecution`` adds ``tool_name`` (the bare tool; the server is not named), ``tool_input`` (a JSON
*string*) and ``url`` or ``command`` — that ``command`` is the MCP *server's* command line and is never
read as a shell command here. The newer generic ``preToolUse`` sends ``tool_name`` (``Shell``,
``MCP:<tool>``) with ``tool_input`` (``{command, cwd}`` for Shell) and ``tool_use_id``.

Answer: exit 0 with ``{"permission": "allow"|"deny", "user_message", "agent_message"}`` on stdout (1.7
spelled the messages ``userMessage``/``agentMessage``; both are written, and builds have been seen to show
the model ``user_message``). A crash, a timeout or unparsable output fails open (unless the hook sets
``failClosed``, which we do not: a guard that cannot run must not stop every shell command), so the
tests parse every answer as JSON. Files: ``.cursor/hooks.json``, ``~/.cursor/hooks.json``, and the
enterprise file ``/etc/cursor/hooks.json``, which takes priority and which users cannot edit.
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, first_root, mcp, shell, text, to_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cursor"
SCOPES = {"project": ".cursor/hooks.json", "user": "~/.cursor/hooks.json", "managed": "/etc/cursor/hooks.json"}
NEW_FILE = {"version": 1}
TIMEOUT_S = 10
_ALLOW = '{"permission":"allow"}\n'


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    event = payload.get("hook_event_name")
    cwd = text(payload.get("cwd")) or first_root(payload.get("workspace_roots"))
    ids: dict[str, Any] = {"session_id": payload.get("conversation_id"),
           "tool_use_id": payload.get("tool_use_id", payload.get("generation_id"))}
    if event == "beforeShellExecution":
        return shell(payload.get("command"), cwd=cwd, **ids)
    if event == "beforeMCPExecution":
        return mcp(None, payload.get("tool_name"), payload.get("tool_input"), cwd=cwd, **ids)
    tool_name = payload.get("tool_name")
    if not isinstance(tool_name, str):
        return None
    if tool_name == "Shell":
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, dict) else {}
        return shell(args.get("command"), cwd=text(args.get("cwd")) or cwd, **ids)
    if tool_name.startswith("MCP:"):
        return mcp(None, tool_name[4:], payload.get("tool_input"), cwd=cwd, **ids)
    return None


def allow() -> Answer:
    return (0, _ALLOW, "")


def deny(reason: str) -> Answer:
    reason = reason.strip()
    answer = {"permission": "deny", "user_message": reason, "agent_message": reason,
              "userMessage": reason, "agentMessage": reason}
    return (0, to_json(answer) + "\n", "")


def trouble(notice: str) -> Answer:
    return (0, _ALLOW, notice)


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    handler = {"command": guard, "timeout": TIMEOUT_S}
    return {"beforeShellExecution": [dict(handler)], "beforeMCPExecution": [dict(handler)]}
