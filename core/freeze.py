"""Freeze windows from the repo config: which are active at a moment (DST-correct, pure).

A window is defined on the local wall clock of its time zone: ``days: [fri], from: "16:00", to:
"23:59", timezone: Europe/Berlin`` is Friday afternoon in Berlin whatever the offset. A window whose
``to`` is at or before its ``from`` (``22:00`` to ``06:00``) ends the next day and belongs to the day it
starts: ``days: [fri]`` then freezes Friday night into Saturday morning.

Daylight-saving changes, decided so that a freeze never gets shorter than its wall-clock reading:

- a ``from``/``to`` in the spring-forward gap (02:30 in Berlin on 29 March 2026, which never shows on
  the clock) takes effect when the clock jumps past it (03:00 CEST);
- a ``from`` in the autumn overlap (02:30 on 25 October 2026, which shows twice) starts at its first
  showing and a ``to`` there ends at its second showing.

Occurrences that touch (``daily`` from ``00:00`` to ``24:00``) merge into one freeze, so its hold keeps
one start and one end instead of flickering at midnight.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from fnmatch import fnmatchcase
from zoneinfo import ZoneInfo

from core.holds import Hold, Source
from core.repo_config import DAYS, FreezeWindow, RepoConfig

HORIZON_DAYS = 8
"""Occurrences are looked for this many local days around `now`: every window recurs within a week."""


def _to_utc(local: datetime, zone: ZoneInfo, *, last: bool) -> datetime:
    """A naive wall-clock time -> UTC. In an overlap: the first showing, or the last one if ``last``.
    In a gap: the instant the clock jumps past it."""
    first = local.replace(tzinfo=zone, fold=0).astimezone(UTC)
    second = local.replace(tzinfo=zone, fold=1).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) == local:
        return max(first, second) if last else min(first, second)
    # A gap: fold=1 reads the time with the later offset (an instant before the jump), fold=0 with the
    # earlier offset (an instant after it). The jump lies between; find it to the second.
    low, high = min(first, second), max(first, second)
    after = local.replace(tzinfo=zone, fold=1).utcoffset()
    while high - low > timedelta(seconds=1):
        middle = (low + (high - low) / 2).replace(microsecond=0)
        if middle.astimezone(zone).utcoffset() == after:
            high = middle
        else:
            low = middle
    return high


def wall_clock(window: FreezeWindow, day: date) -> tuple[datetime, datetime]:
    """The occurrence starting on ``day`` as naive wall-clock times: ``24:00`` is the next midnight, and a
    ``to`` at or before the ``from`` is on the next day (the calendar feed writes these, in the window's zone)."""
    start = time.fromisoformat(window.start)
    if window.end == "24:00":
        end_day, end = day + timedelta(days=1), time(0, 0)
    else:
        end = time.fromisoformat(window.end)
        end_day = day + timedelta(days=1) if end <= start else day
    return datetime.combine(day, start), datetime.combine(end_day, end)


def _occurrence(window: FreezeWindow, day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start, end = wall_clock(window, day)
    return _to_utc(start, zone, last=False), _to_utc(end, zone, last=True)


def _intervals(window: FreezeWindow, now: datetime) -> Iterator[tuple[datetime, datetime]]:
    """The window's occurrences within the horizon around ``now``, touching ones merged, in order."""
    zone = ZoneInfo(window.timezone)
    today = now.astimezone(zone).date()
    current: tuple[datetime, datetime] | None = None
    for offset in range(-HORIZON_DAYS, HORIZON_DAYS + 1):
        day = today + timedelta(days=offset)
        if DAYS[day.weekday()] not in window.days:
            continue
        start, end = _occurrence(window, day, zone)
        if start >= end:  # the whole window fell into a spring-forward gap: the clock never showed it
            continue
        if current is not None and start <= current[1]:
            current = (current[0], max(current[1], end))
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


def active_interval(window: FreezeWindow, now: datetime) -> tuple[datetime, datetime] | None:
    """The (start, end) in UTC of the window's occurrence containing ``now``, if any."""
    for start, end in _intervals(window, now):
        if start <= now < end:
            return start, end
    return None


def occurrences(window: FreezeWindow, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The window's occurrences (UTC) overlapping ``start``..``end``, a span of at most a week: the
    dashboard's week on `/rooms`, and what the per-repo freeze record lists ahead (`core.branch_freezes`),
    so that its readers need no clock of the window's own. Looked for around the span's middle, within
    `HORIZON_DAYS` of it."""
    middle = start + (end - start) / 2
    return [(s, e) for s, e in _intervals(window, middle) if s < end and e > start]


def window_reason(window: FreezeWindow, end: datetime) -> str:
    """A freeze hold's reason: the window's name and its end on the window's own clock."""
    return f"freeze {window.name} until {end.astimezone(ZoneInfo(window.timezone)):%a %H:%M %Z}"


def freeze_holds(
    config: RepoConfig, repo: str, base: str, labels: tuple[str, ...], now: datetime
) -> list[Hold]:
    """The freeze holds active at ``now`` for a PR on ``base``; one per window name.

    A PR carrying one of the window's own exempt labels passes that window (the config-wide exempt
    labels are applied by the verdict, to room holds as well).
    """
    holds: dict[str, Hold] = {}
    for window in config.freeze_windows:
        if window.name in holds or any(label in window.exempt_labels for label in labels):
            continue
        glob = next((g for g in window.branches if fnmatchcase(base, g)), None)
        if glob is None:
            continue
        interval = active_interval(window, now)
        if interval is None:
            continue
        start, end = interval
        holds[window.name] = Hold(
            id=f"freeze:{window.name}",
            source=Source.FREEZE,
            scope=f"{repo}@{glob}",
            holder=window.name,
            reason=window_reason(window, end),
            created_at=start,
            expires_at=end,
            origin=f"schedule:{window.name}",
            paths=window.paths,
        )
    return list(holds.values())


def next_transition(config: RepoConfig, now: datetime) -> datetime | None:
    """The next moment after ``now`` at which any window starts or ends (UTC), for a scheduled job to
    wake exactly then and republish; ``None`` without windows."""
    moments = [
        moment
        for window in config.freeze_windows
        for interval in _intervals(window, now)
        for moment in interval
        if moment > now
    ]
    return min(moments, default=None)


def occurrence(window: FreezeWindow, day: date) -> tuple[datetime, datetime]:
    """The (start, end) in UTC the gate enforces for the window's occurrence that starts on ``day`` (a
    local date of its zone), DST rules above applied; start >= end when the clock never showed it.
    The calendar feed reads it to mark the occurrences a calendar client would place otherwise."""
    return _occurrence(window, day, ZoneInfo(window.timezone))
