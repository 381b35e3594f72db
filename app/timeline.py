"""Timelines drawn on the server: on a PR's page each hold is a bar from placed to lifted, with freezes
shaded; on `/rooms`, this week's freezes and freeze windows.

Plain data here; `_timeline.html` draws it. Each row is a label in HTML (exact times, readable at any
width) over a track in SVG that stretches to the width (``preserveAspectRatio="none"``): nothing in
the picture is text, so a phone's 390 px shrink no letter. Times are UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.history import Raw
from app.times import clock
from core.durations import parse_duration
from core.freeze import occurrences
from core.holds import from_iso, named
from core.repo_config import FreezeWindow

WIDTH = 1000
"""The tracks' viewBox width: x positions are thousandths of the span."""
PR_SPAN = timedelta(days=7)
"""How far back a PR's picture reaches."""
AHEAD_CAP = timedelta(days=2)
"""How far ahead of now a PR's picture reaches at most (a hold that ends later runs off its edge)."""
_TIMED = re.compile(r" for (\S+)")
_REVIEW_LIFT = re.compile(r"^@(\S+) approved$|^review \S+ by @(\S+) dismissed$")


@dataclass
class Bar:
    start: datetime
    end: datetime | None
    """None: still on, with no end known (drawn to the picture's right edge)."""
    shaded: bool = False
    """A freeze (a window, or a hold on more than this PR): drawn as a band."""


@dataclass
class Row:
    label: str
    detail: str
    bars: list[Bar] = field(default_factory=list)
    kind: str = "hold"
    """``hold`` (a bar) or ``freeze`` (shaded)."""


@dataclass
class Chart:
    start: datetime
    end: datetime
    now: datetime
    rows: list[Row]
    days: list[str] = field(default_factory=list)
    """The week's day labels (the `/rooms` picture), else empty."""

    def x(self, moment: datetime) -> float:
        span = (self.end - self.start).total_seconds()
        offset = (min(max(moment, self.start), self.end) - self.start).total_seconds()
        return round(offset / span * WIDTH, 1)

    def width(self, bar: Bar) -> float:
        return max(round(self.x(bar.end or self.end) - self.x(bar.start), 1), 2.0)

    @property
    def now_x(self) -> float:
        return self.x(self.now)

    @property
    def ticks(self) -> list[float]:
        """A line at each midnight (UTC) inside the span."""
        day = self.start.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        found = []
        while day < self.end:
            found.append(self.x(day))
            day += timedelta(days=1)
        return found

    @property
    def shading(self) -> list[Bar]:
        """Every freeze band, drawn behind every track: when the PR could not merge whatever its own holds."""
        return [bar for row in self.rows if row.kind == "freeze" for bar in row.bars]


def _when(start: datetime, end: datetime | None, now: datetime, *, lifted: bool) -> str:
    began = clock(start, now)
    if end is None:
        return f"{began} → on, no end set"
    verb = "lifted" if lifted and end <= now else ("ended" if end <= now else "ends")
    return f"{began} → {verb} {clock(end, now)}"


def _holder(data: dict[str, Any], key: str) -> str:
    return str(data.get(key) or "?").lstrip("@")


def _hold_key(hold: dict[str, Any]) -> tuple[str, ...]:
    source, holder = str(hold.get("source") or ""), str(hold.get("holder") or "").lower()
    if source in ("room", "freeze"):
        return ("room", str(hold.get("scope") or ""), holder) if source == "room" else ("freeze", str(hold.get("id")))
    return (source, holder)


def pr_chart(raws: list[Raw], holds: list[dict[str, Any]], now: datetime) -> Chart | None:
    """The PR's holds of the last week as bars: ``raws`` its history oldest first (`app.history`),
    ``holds`` its verdict's holds now. None when there is nothing to draw."""
    opened: dict[tuple[str, ...], tuple[Row, Bar, bool]] = {}
    rows: list[Row] = []
    last = now

    def open_bar(key: tuple[str, ...], label: str, detail: str, start: datetime, end: datetime | None,
                 kind: str = "hold") -> None:
        if key in opened and opened[key][1].end is None:
            return
        row = Row(label, detail, [Bar(start, end, kind == "freeze")], kind)
        rows.append(row)
        opened[key] = (row, row.bars[0], False)

    def close(key: tuple[str, ...], at: datetime) -> None:
        found = opened.get(key)
        if found is not None and (found[1].end is None or found[1].end > at):
            found[1].end = at
            opened[key] = (found[0], found[1], True)

    for raw in raws:
        data, at = raw.data, raw.at
        last = at
        if raw.event == "hold.held":
            message = str(data.get("message") or "")
            timed = _TIMED.search(message)
            span = parse_duration(timed.group(1)) if timed else None
            review = message.endswith("requested changes")
            who = _holder(data, "actor")
            open_bar(("review" if review else "comment", who.lower()), f"@{who}",
                     str(data.get("reason") or ""), at, at + span if span else None)
        elif raw.event == "hold.lifted":
            reviewer = _REVIEW_LIFT.match(str(data.get("message") or ""))
            if reviewer:
                close(("review", (reviewer.group(1) or reviewer.group(2)).lower()), at)
            else:
                close(("comment", _holder(data, "target").lower()), at)
        elif raw.event == "hold.lifted_all":
            for key in [k for k in opened if k[0] == "comment"]:
                close(key, at)
        elif raw.event == "room.held":
            scope, who = str(data.get("scope") or ""), _holder(data, "holder")
            kind = "hold" if "#" in scope else "freeze"
            open_bar(("room", scope, who.lower()), f"{named(who)} on {scope}" if kind == "freeze" else named(who),
                     str(data.get("reason") or ""), at, from_iso(data.get("expires_at")), kind)
        elif raw.event == "room.lifted":
            scope = str(data.get("scope") or "")
            for key in [k for k in opened if k[0] == "room" and k[1] == scope]:
                close(key, at)
        elif raw.event == "verdict.held":
            for hold in data.get("holds") or []:
                if isinstance(hold, dict) and hold.get("source") == "freeze":
                    open_bar(_hold_key(hold), f"freeze {hold.get('holder')}", str(hold.get("reason") or ""),
                             from_iso(hold.get("created_at")) or at, from_iso(hold.get("expires_at")), "freeze")
    current = {_hold_key(h): h for h in holds}
    for key, hold in current.items():
        ended = opened[key][1].end if key in opened else now
        if key not in opened or (ended is not None and ended <= now):
            source = str(hold.get("source") or "")
            kind = "freeze" if source == "freeze" or (source == "room" and "#" not in str(hold.get("scope"))) \
                else "hold"
            who = str(hold.get("holder") or "?")
            label = f"freeze {who}" if source == "freeze" else (
                f"{named(who)} on {hold.get('scope')}" if kind == "freeze" else named(who) if who != "?" else source)
            opened.pop(key, None)
            open_bar(key, label, str(hold.get("reason") or ""), from_iso(hold.get("created_at")) or now,
                     from_iso(hold.get("expires_at")), kind)
    for key, (_row, bar, _lifted) in opened.items():
        if bar.end is None and key not in current:
            bar.end = last  # its lift fell out of the kept history: it ended by the last event read
    if not rows:
        return None
    earliest = min(bar.start for row in rows for bar in row.bars)
    start = max(earliest, now - PR_SPAN)
    ends = [bar.end for row in rows for bar in row.bars if bar.end is not None and bar.end > now]
    end = min(max([now, *ends]), now + AHEAD_CAP)
    pad = max((end - start) / 20, timedelta(minutes=5))
    start, end = start - pad, end + pad
    shown = [r for r in rows if any((b.end or end) > start for b in r.bars)]
    for row in shown:
        bar = row.bars[0]
        lifted = any(v[0] is row and v[2] for v in opened.values())
        row.detail = "; ".join(p for p in (row.detail, _when(bar.start, bar.end, now, lifted=lifted)) if p)
    return Chart(start, end, now, shown) if shown else None


def week_chart(windows: list[tuple[str, FreezeWindow]], freezes: list[dict[str, Any]], now: datetime) -> Chart:
    """This week (Monday to Monday, UTC): each freeze window of the repos' config and each freeze (a room
    hold on a repo, branch or org) as rows of bars."""
    start = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    end = start + timedelta(days=7)
    rows = []
    for repo, window in windows:
        bars = [Bar(s, e, True) for s, e in occurrences(window, start, end)]
        rows.append(Row(f"{repo}: window {window.name}",
                        f"{', '.join(window.branches)}; {window.start} to {window.end} {window.timezone}, "
                        f"{', '.join(window.days)}", bars, "freeze"))
    for hold in freezes:
        began = from_iso(hold.get("created_at")) or now
        until = from_iso(hold.get("expires_at"))
        rows.append(Row(f"{hold.get('scope')}: {named(str(hold.get('holder') or ''))}",
                        f"{hold.get('reason') or ''}; {_when(began, until, now, lifted=False)}",
                        [Bar(began, until, True)], "freeze"))
    days = [f"{(start + timedelta(days=i)):%a} {(start + timedelta(days=i)).day}" for i in range(7)]
    return Chart(start, end, now.astimezone(UTC), rows, days)
