"""Qwen Code (a Gemini CLI fork): ``PreToolUse`` hooks in settings files, Claude Code's output contract.

Stdin (seen from Qwen Code 0.24.4 in tests/test_agent_clis.py): ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name: "PreToolUse"``, ``timestamp``, ``permission_mode``, ``prompt_id``,
``tool_name`` (``run_shell_command``; MCP tools as in Gemini CLI), ``tool_input``, ``tool_use_id``,
``tool_call_id``. Deny: exit 2 with the reason on stderr, which the model gets verbatim as the tool's
result (checked with the real CLI). Timeout in
milliseconds (default 60000). Files: ``.qwen/settings.json`` (trusted projects) and
``~/.qwen/settings.json``; no managed location is documented. ``disableAllHooks`` turns all hooks off.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, notice_exit_1, proceed, stderr_deny
from hook.agents.gemini import read_gemini_shape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "qwen"
SHELL_TOOL = "run_shell_command"
SCOPES = {"project": ".qwen/settings.json", "user": "~/.qwen/settings.json"}
TIMEOUT_MS = 10_000


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    return read_gemini_shape(payload, SHELL_TOOL)


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("PreToolUse", (f"{SHELL_TOOL}|mcp_.*",), handler(guard, TIMEOUT_MS))
