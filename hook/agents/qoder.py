"""Qoder CLI: ``PreToolUse`` hooks in settings files, Claude Code's format (docs.qoder.com/cli/hooks).

Files: ``~/.qoder/settings.json`` (user), ``${project}/.qoder/settings.json`` and ``.qoder/settings.local.json``
(project; all merged). ``{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
"command": …}]}]}}``. Stdin as Claude Code's: ``tool_name`` (``Bash``), ``tool_input.command``, ``cwd``. Deny:
exit 2 with the reason on stderr, which Qoder hands to the agent. No administrator file is documented.
SessionStart is among its events (the docs list it); its context form is Claude Code's.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, notice_exit_1, proceed, stderr_deny
from hook.agents.claude import tool_call as claude_tool_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "qoder"
SCOPES = {"user": "~/.qoder/settings.json", "project": ".qoder/settings.json",
          "local": ".qoder/settings.local.json"}
TIMEOUT_S = 10


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    return claude_tool_call(payload)


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("PreToolUse", matchers, handler(guard, TIMEOUT_S))


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import session_start

    return session_start(command, TIMEOUT_S)
