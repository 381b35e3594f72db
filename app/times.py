"""Times on the pages, exact where they matter: "ends 14:32 UTC, in 1 h 59 min", "14:30 UTC, 3 min ago".

A glance ("in 1 h 59 min") always sits beside the exact moment, and neither is rounded down: what is
left is counted up to the next whole minute (a hold "for 2h" placed seconds ago ends "in 2 h", never
"in 1 h"), and a moment ahead shows the minute it is reached (14:29:50 is "14:30"); what has passed is
counted down (never older than it is). Everything is shown in UTC, said so.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.holds import from_iso


def span(seconds: int) -> str:
    """A length of time to the minute (to the second under one): ``45 s``, ``3 min``, ``1 h 59 min``,
    ``2 d 3 h 5 min``; zero parts are left out."""
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{mins} min" if mins else ""]
    return " ".join(p for p in parts if p)


def _ceil_minutes(seconds: int) -> int:
    return seconds if seconds < 60 else -(-seconds // 60) * 60


def relative(moment: datetime, now: datetime) -> str:
    """``in 1 h 59 min`` (ahead, counted up) or ``3 min ago`` (behind, counted down)."""
    seconds = (moment - now).total_seconds()
    if seconds > 0:
        return f"in {span(_ceil_minutes(int(-(-seconds // 1))))}"
    return f"{span(int(-seconds))} ago"


def clock(moment: datetime, now: datetime) -> str:
    """``14:32 UTC`` today; ``Tue 6 Jan 14:32 UTC`` another day; with the year in another year."""
    moment, now = moment.astimezone(UTC), now.astimezone(UTC)
    if moment.date() == now.date():
        return f"{moment:%H:%M} UTC"
    day = f"{moment:%a} {moment.day} {moment:%b}"
    if moment.year != now.year:
        day += f" {moment.year}"
    return f"{day} {moment:%H:%M} UTC"


def exact(iso: object, now: datetime | None = None) -> str:
    """``14:32 UTC, in 1 h 59 min`` / ``14:30 UTC, 3 min ago``; "" for no time, the text itself for an
    unreadable one."""
    try:
        moment = from_iso(iso if isinstance(iso, str) else None)
    except ValueError:
        return str(iso)
    if moment is None:
        return "" if iso in (None, "") else str(iso)
    now = now or datetime.now(UTC)
    shown = moment
    if moment > now and (moment.second or moment.microsecond):
        # A moment ahead is shown at the minute it is reached, never before it (14:29:50 is "14:30").
        shown = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return f"{clock(shown, now)}, {relative(moment, now)}"


def ends(iso: object, now: datetime | None = None) -> str:
    """``ends 14:32 UTC, in 1 h 59 min``; ``ended 14:30 UTC, 2 min ago`` once past; ``never ends``."""
    if iso in (None, ""):
        return "never ends"
    text = exact(iso, now)
    return f"ended {text}" if text.endswith(" ago") else f"ends {text}"
