"""Durations such as ``2h``, ``90m``, ``1d12h``, ``1w`` (the ``for DURATION`` of a hold)."""

from __future__ import annotations

import re
from datetime import timedelta

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+)\s*(w|d|h|m|s)", re.IGNORECASE)
_WHOLE = re.compile(r"^(?:\d+\s*[wdhms]\s*)+$", re.IGNORECASE)

MAX_DURATION = timedelta(days=90)
"""A longer timed hold is almost surely a typo; an untimed hold is the way to say 'indefinitely'."""


def parse_duration(text: str) -> timedelta | None:
    """``'2h'`` -> 2 hours; ``None`` when the text is not a duration (or is zero, or over 90 days)."""
    compact = text.strip()
    if not compact or not _WHOLE.match(compact):
        return None
    seconds = sum(int(n) * _UNIT_SECONDS[u.lower()] for n, u in _PART.findall(compact))
    if seconds <= 0 or seconds > MAX_DURATION.total_seconds():
        return None
    return timedelta(seconds=seconds)


def format_duration(delta: timedelta) -> str:
    """The shortest exact form: ``timedelta(hours=26)`` -> ``'1d2h'``."""
    seconds = int(delta.total_seconds())
    parts = []
    for unit in ("w", "d", "h", "m", "s"):
        size = _UNIT_SECONDS[unit]
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
