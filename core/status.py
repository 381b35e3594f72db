"""The `merge-hold` commit status: a pure builder, and the one place the 140-character cut lives."""

from __future__ import annotations

from typing import Any

from core.holds import Hold, Source, named
from core.verdict import Verdict

CONTEXT = "merge-hold"
MAX_DESCRIPTION = 140
"""GitHub answers 422 to a longer status description."""
FREE_DESCRIPTION = "No holds"


def hold_phrase(hold: Hold) -> str:
    """One hold in a few words, naming who holds and why."""
    reason = f": {hold.reason}" if hold.reason else ""
    if hold.source is Source.COMMENT:
        return f"Held by @{hold.holder}{reason}"
    if hold.source is Source.REVIEW:
        return f"Changes requested by @{hold.holder}"
    if hold.source is Source.LABEL:
        return f"Held by label {hold.origin.removeprefix('label:')}"
    if hold.source is Source.ROOM:
        room = f" in {hold.origin}" if hold.origin else ""
        return f"Held by {named(hold.holder)}{room}{reason}"
    return f"Frozen by {hold.holder or hold.origin}{reason}"


def cut(text: str, limit: int = MAX_DESCRIPTION, suffix: str = "") -> str:
    """Cut ``text`` so that ``text + suffix`` fits in ``limit`` characters, marking the cut with '…'."""
    room = limit - len(suffix)
    if len(text) > room:
        text = text[: max(room - 1, 0)].rstrip() + "…"
    return (text + suffix)[:limit]


def describe(verdict: Verdict) -> str:
    if verdict.error is not None:
        return cut(f"Cannot establish holds: {verdict.error}")
    if not verdict.holds:
        return FREE_DESCRIPTION
    more = len(verdict.holds) - 1
    return cut(hold_phrase(verdict.holds[0]), suffix=f" (+{more} more)" if more else "")


def status_state(verdict: Verdict, held_state: str = "failure") -> str:
    """Never `success` on doubt: an unestablished verdict is `error`."""
    if verdict.error is not None:
        return "error"
    return held_state if verdict.holds else "success"


def build_status(verdict: Verdict, *, held_state: str = "failure", target_url: str | None = None) -> dict[str, Any]:
    """The body of ``POST /repos/{owner}/{repo}/statuses/{sha}``."""
    payload: dict[str, Any] = {
        "state": status_state(verdict, held_state),
        "description": describe(verdict),
        "context": CONTEXT,
    }
    if target_url:
        payload["target_url"] = target_url
    return payload
