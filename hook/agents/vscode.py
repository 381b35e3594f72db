"""VS Code agent hooks (the Local harness): ``PreToolUse`` in Claude Code's format (microsoft/vscode-docs
docs/agent-customization/hooks.md, "Agent hooks in Visual Studio Code (Preview)").

Files: ``.github/hooks/*.json`` (workspace) and ``~/.copilot/hooks`` (user), both also read by the Copilot CLI;
VS Code also reads Claude Code's ``.claude/settings*.json`` and ``~/.claude/settings.json``. The format is
``{"hooks": {"PreToolUse": [{"type": "command", "command": …, "timeout": 10}]}}`` (timeout in seconds, default
30); matchers are parsed but ignored, so the guard sees every tool call and answers the ones it does not judge
at once. Ours is its own file, ``merge-hold-vscode.json``, beside the Copilot install's.

Stdin: ``timestamp``, ``cwd``, ``sessionId``, ``hookEventName``, ``transcript_path``, ``tool_name`` (the terminal
tool is ``run_in_terminal``, its ``tool_input.command``: vscode-copilot-chat toolNames.ts), ``tool_input``,
``tool_use_id``. The Copilot CLI reading the same PascalCase file sends Claude's names (``Bash``), read too.

Deny: exit 0 with ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": R, "additionalContext": R}}`` (the most restrictive decision wins; the reason is
shown to the user and the context given to the model). Exit 2 with stderr also blocks in VS Code, but the
Copilot CLI, which reads the same files, treats exit 2 as a warning: the JSON form holds in both. The guard's
own trouble exits 0 with a notice on stderr (a non-zero exit is a warning in VS Code and a deny in older
Copilot CLIs). SessionStart: ``hookSpecificOutput.additionalContext`` is added to the conversation.
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, mcp, notice_exit_0, proceed, shell, split_mcp_name, to_json
from hook.agents.claude import tool_call as claude_tool_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "vscode"
SCOPES = {"project": ".github/hooks/merge-hold-vscode.json", "user": "~/.copilot/hooks/merge-hold-vscode.json"}
TIMEOUT_S = 10
TERMINAL_TOOLS = ("run_in_terminal", "runInTerminal", "runTerminalCommand")


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    name, args = payload.get("tool_name"), payload.get("tool_input")
    ids: dict[str, Any] = {"cwd": payload.get("cwd"), "session_id": payload.get("sessionId", payload.get("session_id")),
                           "tool_use_id": payload.get("tool_use_id")}
    if name in TERMINAL_TOOLS and isinstance(args, dict):
        return shell(args.get("command"), **ids)
    if isinstance(name, str) and name.startswith("mcp_") and not name.startswith("mcp__"):
        server, tool = split_mcp_name(name[len("mcp_"):], "_")
        return mcp(server, tool, args, **ids)
    if isinstance(name, str) and isinstance(args, dict):
        return claude_tool_call(payload)  # Claude's names: the Copilot CLI reading this file
    return None


allow, trouble = proceed, notice_exit_0


def deny(reason: str) -> Answer:
    text = reason.strip() or "merge-hold: blocked"
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                     "permissionDecisionReason": text, "additionalContext": text}}
    return (0, to_json(output) + "\n", "")


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import handler

    return {"PreToolUse": [handler(guard, TIMEOUT_S)]}  # no matchers: VS Code ignores them


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import handler

    return {"SessionStart": [handler(command, TIMEOUT_S)]}
