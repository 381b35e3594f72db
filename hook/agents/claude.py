"""Claude Code: ``PreToolUse`` hooks in settings files (design §6, the baseline every other agent maps to).

Stdin: ``session_id``, ``cwd``, ``tool_name`` (``Bash``, ``PowerShell``, ``Monitor``,
``mcp__<server>__<tool>``), ``tool_input``, ``tool_use_id``. Deny: exit 2, the reason on stderr, which the
model receives as ``PreToolUse:Bash hook error: [<command>]: <reason>`` (asserted against the real CLI in
tests/test_claude_cli.py). Exit 1 is a non-blocking error: the call proceeds. Timeout: ours is 10 s.
Managed settings (``/etc/claude-code/managed-settings.json`` on Linux) cannot be overridden by users.
SessionStart: ``source``, ``cwd``; ``{"hookSpecificOutput": {"hookEventName": "SessionStart",
"additionalContext": T}}`` adds T to the context. ConfigChange: ``source``, ``file_path``; exit 2 keeps the
change from taking effect (never for ``policy_settings``; the reason is only logged). Both from the hooks
reference (code.claude.com/docs/en/hooks, read through ericbuess/claude-code-docs@ec68a5b docs/hooks.md).
"""

from __future__ import annotations

from hook.agents.call import MCP_PREFIX, NotAToolCall, ToolCall, notice_exit_1, proceed, stderr_deny, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
SHELL_TOOLS = ("Bash", "PowerShell", "Monitor")
TIMEOUT_S = 10
"""Claude Code kills the hook after this (`hook.tools.claude_settings.GUARD_TIMEOUT_S`, pinned by a test)."""
SCOPES = {
    "user": "~/.claude/settings.json",
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
    "managed": "/etc/claude-code/managed-settings.json",
}


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    tool_name, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        raise NotAToolCall("the hook input has no tool_name/tool_input")
    if tool_name not in SHELL_TOOLS and not tool_name.startswith(MCP_PREFIX):
        return None
    return ToolCall(tool_name, tool_input, cwd=text(payload.get("cwd")), session_id=text(payload.get("session_id")),
                    tool_use_id=text(payload.get("tool_use_id")))


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return {**groups("PreToolUse", matchers, handler(guard, TIMEOUT_S)), "SessionEnd": [{"hooks": [handler(fold)]}]}


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """SessionStart (`hook.session`): its stdout's ``hookSpecificOutput.additionalContext`` is added to the
    session's context (every source: startup, resume, clear, compact)."""
    from hook.agents.entries import session_start

    return session_start(command, TIMEOUT_S)


def config_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """ConfigChange (`hook.configguard`) on the sources a hook can block: ``user_settings``,
    ``project_settings``, ``local_settings`` (``policy_settings`` always applies)."""
    from hook.agents.entries import groups, handler

    return groups("ConfigChange", (CONFIG_MATCHER,), handler(command))


CONFIG_MATCHER = "user_settings|project_settings|local_settings"
"""The ConfigChange sources Claude Code lets a hook block (``policy_settings`` always applies)."""
