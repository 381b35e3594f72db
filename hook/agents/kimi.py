"""Kimi Code CLI: ``PreToolUse`` hooks in ``config.toml`` (MoonshotAI/kimi-code: moonshotai.github.io/kimi-code
customization/hooks, packages/agent-core/src/session/hooks/runner.ts and engine.ts; the permission policy that
asks them is ``pre-tool-call-hook``).

Config: ``[[hooks]]`` tables in ``~/.kimi-code/config.toml`` (``$KIMI_CODE_HOME/config.toml``), each with only
``event``, ``matcher`` (a JavaScript regex on the tool name), ``command`` and ``timeout`` (seconds, 1-600,
default 30): any other field fails the whole file, so ours is a marked block of such tables. Stdin (snake_case
of the engine's fields): ``hook_event_name``, ``session_id``, ``cwd``, ``tool_name`` (``Bash``; the older
kimi-cli called it ``Shell``), ``tool_input`` (``command``), ``tool_call_id``. Deny: exit 2, stderr is the
reason (or exit 0 with ``hookSpecificOutput.permissionDecision: "deny"``).

**It fails open**: a hook that times out, crashes or exits other than 0 and 2 lets the call run (runner.ts
``allowResult``), so the guard must answer well inside the timeout, and the required status check stays the
gate. `merge-hold doctor` says so on Kimi's row (`FAILS_OPEN`). No SessionStart context channel (its hook
results carry none).
"""

from __future__ import annotations

from hook.agents.call import ToolCall, notice_exit_1, proceed, shell, stderr_deny
from hook.agents.claude import tool_call as claude_tool_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "kimi"
SCOPES = {"user": "~/.kimi-code/config.toml"}
HOME_ENV = ("KIMI_CODE_HOME", "~/.kimi-code")
TOML_STYLE = "flat"
TIMEOUT_S = 10
SHELL_TOOLS = ("Bash", "Shell")
FAILS_OPEN = "Kimi Code CLI lets a tool call run when its hook times out, crashes or exits other than 0 or 2"


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    name, args = payload.get("tool_name"), payload.get("tool_input")
    if name in SHELL_TOOLS and isinstance(args, dict):
        return shell(args.get("command"), cwd=payload.get("cwd"), session_id=payload.get("session_id"),
                     tool_use_id=payload.get("tool_call_id"))
    return claude_tool_call(payload) if isinstance(name, str) and isinstance(args, dict) else None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups

    run = {"command": guard, "timeout": TIMEOUT_S}  # no `type`: any field but these fails Kimi's whole file
    return groups("PreToolUse", ("^(Bash|Shell)$", matchers[1]), run)
