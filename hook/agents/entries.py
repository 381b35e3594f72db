"""Hook entries in Claude Code's settings format, which most agents copy: ``{EVENT: [{"matcher": M,
"hooks": [{"type": "command", "command": C, "timeout": T}]}]}``, the timeout in the agent's own unit.

Only an install writes entries (`hook.tools.agent_files`): the agent modules import this inside their
``hooks``, ``session_hooks`` and ``config_hooks``, so the guard's start-up never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Entries = dict[str, list[dict[str, Any]]]
"""Event -> its entries: what an agent's ``hooks(guard, fold, matchers)`` returns."""


def handler(command: str, timeout: int | None = None) -> dict[str, Any]:
    """Run ``command``; ``timeout`` in the agent's unit (None: the agent's default)."""
    return {"type": "command", "command": command} if timeout is None else \
        {"type": "command", "command": command, "timeout": timeout}


def groups(event: str, matchers: Iterable[str], run: dict[str, Any]) -> Entries:
    """``event``'s groups, one per matcher, each running its own copy of ``run``."""
    return {event: [{"matcher": matcher, "hooks": [dict(run)]} for matcher in matchers]}


def session_start(command: str, timeout: int) -> Entries:
    """SessionStart, one group without a matcher: every source (startup, resume, clear, compact)."""
    return {"SessionStart": [{"hooks": [handler(command, timeout)]}]}
