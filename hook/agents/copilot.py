"""GitHub Copilot CLI and coding agent: ``preToolUse`` hooks (github/docs, copilot hooks reference).

Stdin comes in two dialects. Registered as ``preToolUse`` (ours): ``{sessionId, timestamp, cwd, toolName,
toolArgs}``, where ``toolName`` is ``bash``/``powershell`` or an MCP tool ``<server>-<tool>``, and
``toolArgs`` may be a JSON *string*. Claude-compatible ``PreToolUse`` (also how Copilot runs a repo's
``.claude/settings.json``): ``{hook_event_name, session_id, cwd, tool_name: "Bash", tool_input}``.

Deny: ``{"permissionDecision": "deny", "permissionDecisionReason": R}`` on stdout (one JSON object, nothing
else) with exit 0; the reason is shown to the agent. (Earlier releases also denied on exit 2; the current
hooks reference, github/docs content/copilot/reference/hooks-reference.md, treats exit 2 from
``preToolUse`` as a warning and parses stdout only on exit 0, so exit 0 is the form that holds in both.)
Older releases read *any* non-zero exit as a deny, so the guard's own trouble exits 0 (allow) with a notice
on stderr. A timeout (30 s default) fails open, policy hooks included. ``sessionStart`` (same files) may
return ``additionalContext``, injected into the session (`hook.session`).

Files: ``.github/hooks/merge-hold.json`` (the coding agent reads only this one, from the default
branch), ``~/.copilot/hooks/merge-hold.json``, and the CLI's policy directory
``/etc/github-copilot/policy.d/merge-hold.json`` (root-owned, not group/world-writable; loaded first,
regardless of folder trust and ``disableAllHooks``).
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, mcp, notice_exit_0, obj, proceed, shell, split_mcp_name, to_json
from hook.agents.claude import tool_call as claude_tool_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "copilot"
SCOPES = {
    "project": ".github/hooks/merge-hold.json",
    "user": "~/.copilot/hooks/merge-hold.json",
    "managed": "/etc/github-copilot/policy.d/merge-hold.json",
}
NEW_FILE = {"version": 1}
TIMEOUT_S = 10
SHELLS = {"bash": False, "powershell": True}


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    tool_name = payload.get("toolName")
    if not isinstance(tool_name, str):
        return claude_tool_call(payload)  # the PascalCase dialect
    args = obj(payload.get("toolArgs"))
    ids: dict[str, Any] = {"cwd": payload.get("cwd"), "session_id": payload.get("sessionId"),
           "tool_use_id": payload.get("toolCallId")}
    if tool_name in SHELLS:
        return shell(args.get("command"), powershell=SHELLS[tool_name], **ids)
    if "-" in tool_name:
        server, tool = split_mcp_name(tool_name, "-")
        return mcp(server, tool, args, **ids)
    return None


allow, trouble = proceed, notice_exit_0


def deny(reason: str) -> Answer:
    answer = {"permissionDecision": "deny", "permissionDecisionReason": reason.strip() or "merge-hold: blocked"}
    return (0, to_json(answer) + "\n", "")


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    return {"preToolUse": [{"type": "command", "bash": guard, "timeoutSec": TIMEOUT_S}]}


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    return {"sessionStart": [{"type": "command", "bash": command, "timeoutSec": TIMEOUT_S}]}


def context(said: str) -> Answer:
    """``sessionStart``'s output: ``additionalContext`` is injected into the session."""
    return (0, to_json({"additionalContext": said}) + "\n", "")
