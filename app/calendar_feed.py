"""``GET /calendar/{org}.ics`` and ``GET /calendar/{owner}/{repo}.ics``: freezes in people's calendars.

An iCalendar (RFC 5545) feed, made with `icalendar`, of an org's or a repo's freeze windows and timed
freezes. Calendar clients cannot send a bearer header, so the feed takes an API token in the URL
(``?token=…``): a ``read`` token within the org (`merge-hold token create NAME --scope read --org ORG`),
revoked like any other (`merge-hold token revoke NAME`), after which the URL answers 401.

- A **freeze window** is one recurring event (``RRULE:FREQ=WEEKLY;BYDAY=…``) in its own time zone, with
  the zone's ``VTIMEZONE`` built from the zone database, so every client puts it on the wall clock the
  window names, across daylight-saving changes. Identical windows of several repos of an org are one
  event naming the repos. The series starts this week (no made-up past freezes) and runs on.
- Where a client could place an occurrence other than the gate does (`core.freeze`: a time the clock
  skips starts when the clock jumps past it, an end in the repeated hour ends at its second showing, and an
  occurrence over a DST change is as long as its wall clock says, where RFC 5545 keeps a series' first
  length), that occurrence is overridden (``RECURRENCE-ID``, exact UTC times), and one the clock never
  shows is excluded (``EXDATE``), for the next `OVERRIDE_DAYS`. The series starts on an ordinary
  occurrence; one earlier in the week is an event of its own.
- A **timed freeze** (a room hold with an end on the repo, a branch glob or the org) is a single event
  from when it was placed to when it ends. An open-ended freeze has no end to show: the freeze API and
  the dashboard show it.

Events are ``TRANSP:TRANSPARENT``: a freeze is not a meeting, and does not make anyone look busy.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from flask import Blueprint, Response, abort, request
from icalendar import Calendar, Event

from app import reads
from app.services import services
from core import freeze
from core.holds import Hold
from core.repo_config import DAYS, FreezeWindow
from state import room_holds, store
from state.config_file import repo_config

bp = Blueprint("calendar", __name__)

PRODID = "-//merge-hold//freeze calendar//EN"
OVERRIDE_DAYS = 400
"""Occurrences checked against the gate's DST rules, from this week on (every DST change of a year)."""
ZONE_YEARS = 3
"""Years of each VTIMEZONE's transitions written out; clients carry the last rule on past them."""
REFRESH = timedelta(hours=1)
"""Asked of clients (``REFRESH-INTERVAL``, ``X-PUBLISHED-TTL``: one hour); most refresh less often."""
ICAL_DAYS = {"mon": "MO", "tue": "TU", "wed": "WE", "thu": "TH", "fri": "FR", "sat": "SA", "sun": "SU"}


def _uid(*parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
    return f"{digest}@merge-hold"


def _local_span(window: FreezeWindow, day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The occurrence starting on ``day`` as wall-clock times in the window's zone (fold 0: RFC 5545's
    reading of a skipped or repeated time)."""
    start, end = freeze.wall_clock(window, day)
    return start.replace(tzinfo=zone), end.replace(tzinfo=zone)


def _describe(window: FreezeWindow, repos: list[str]) -> str:
    lines = [f"Merges into {', '.join(window.branches)} are held by merge-hold while this window lasts.",
             f"Repositories: {', '.join(repos)}",
             f"Time zone: {window.timezone} (the window follows its wall clock across daylight-saving changes)"]
    if window.exempt_labels:
        lines.append(f"Exempt labels: {', '.join(window.exempt_labels)}")
    return "\n".join(lines)


def _event(uid: str, summary: str, description: str, now: datetime) -> Event:
    event = Event()
    event.add("uid", uid)
    event.add("dtstamp", now)
    event.add("summary", summary)
    event.add("description", description)
    event.add("transp", "TRANSPARENT")
    return event


def _readings(window: FreezeWindow, day: date, zone: ZoneInfo, length: timedelta) -> set[tuple[datetime, datetime]]:
    """How clients place the occurrence of ``day`` (UTC): on the wall clock (start and end each read in the
    zone), or, as RFC 5545 says of a series with DTEND, lasting the first occurrence's exact ``length``."""
    local_start, local_end = _local_span(window, day, zone)
    start = local_start.astimezone(UTC)
    return {(start, local_end.astimezone(UTC)), (start, start + length)}


def _window_events(window: FreezeWindow, repos: list[str], target: str, now: datetime) -> list[Event]:
    zone = ZoneInfo(window.timezone)
    today = now.astimezone(zone).date()
    monday = today - timedelta(days=today.weekday())
    days = [d for d in (monday + timedelta(days=n) for n in range(OVERRIDE_DAYS)) if DAYS[d.weekday()] in window.days]
    uid = _uid(target, window.name, *window.days, window.start, window.end, window.timezone, *window.branches)
    summary, description = f"Merge freeze: {window.name}", _describe(window, repos)
    moved_note = "\nThis occurrence is moved by a daylight-saving change."

    def plain(day: date) -> bool:
        local_start, local_end = _local_span(window, day, zone)
        wall = local_end - local_start  # one tzinfo: Python subtracts the wall-clock readings
        elapsed = local_end.astimezone(UTC) - local_start.astimezone(UTC)
        return freeze.occurrence(window, day) == (local_start.astimezone(UTC), local_end.astimezone(UTC)) and \
            wall == elapsed
    # The series starts on an ordinary occurrence, so that its length is every ordinary occurrence's length.
    anchor = next((d for d in days if plain(d)), None)
    if anchor is None:
        return []
    first_start, first_end = _local_span(window, anchor, zone)
    length = first_end - first_start
    series = _event(uid, summary, description, now)
    series.add("dtstart", first_start)
    series.add("dtend", first_end)
    series.add("rrule", {"freq": "weekly", "byday": [ICAL_DAYS[d] for d in window.days], "wkst": "MO"})
    series.add("categories", ["merge-hold", "freeze"])
    events = [series]
    for day in days:
        start, end = freeze.occurrence(window, day)
        local_start = _local_span(window, day, zone)[0]
        if day < anchor:  # this week, before the series starts: on its own
            if start < end:
                alone = _event(_uid(uid, day.isoformat()), summary, description + moved_note, now)
                alone.add("dtstart", start)
                alone.add("dtend", end)
                events.append(alone)
        elif start >= end:  # the clock never shows it (a window inside a skipped hour): the gate skips it too
            series.add("exdate", local_start)
        elif _readings(window, day, zone, length) != {(start, end)}:
            moved = _event(uid, summary, description + moved_note, now)
            moved.add("recurrence-id", local_start)
            moved.add("dtstart", start)
            moved.add("dtend", end)
            events.append(moved)
    return events


def _hold_event(hold: Hold, now: datetime) -> Event:
    assert hold.expires_at is not None
    event = Event()
    event.add("uid", _uid("hold", hold.id, str(hold.created_at.timestamp())))
    event.add("dtstamp", now)
    event.add("summary", f"Merge freeze: {hold.scope}")
    who = hold.holder or hold.origin
    event.add("description", f"Frozen by {who}: {hold.reason}" if hold.reason else f"Frozen by {who}")
    event.add("dtstart", hold.created_at.astimezone(UTC))
    event.add("dtend", hold.expires_at.astimezone(UTC))
    event.add("transp", "TRANSPARENT")
    event.add("categories", ["merge-hold", "freeze"])
    return event


def build(target: str, repos: list[str], windows: dict[FreezeWindow, list[str]], holds: list[Hold],
          now: datetime) -> bytes:
    """The feed for ``target`` (an org or a repo): ``windows`` each with the repos that have it, and the
    room holds of those repos and the org."""
    cal = Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("method", "PUBLISH")
    cal.add("x-wr-calname", f"merge-hold freezes: {target}")
    cal.add("x-wr-caldesc", f"Freeze windows and timed freezes of {', '.join(repos) or target}, from merge-hold.")
    cal.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    cal.add("x-published-ttl", "PT1H")
    for window, having in sorted(windows.items(), key=lambda item: (item[0].name, item[0].timezone)):
        for event in _window_events(window, having, target, now):
            cal.add_component(event)
    timed = [h for h in holds if "#" not in h.scope and h.expires_at is not None and h.active(now)]
    for hold in sorted(timed, key=lambda h: (h.created_at, h.id)):
        cal.add_component(_hold_event(hold, now))
    today = now.date()
    cal.add_missing_timezones(first_date=today - timedelta(days=14),
                              last_date=today.replace(year=today.year + ZONE_YEARS))
    return bytes(cal.to_ical())


def _granted(owner: str) -> None:
    """401 without a valid token in the URL, 403 when its scope does not read or its orgs miss ``owner``."""
    identity = services().tokens.identify(request.args.get("token", "").strip())
    if identity is None:
        abort(Response("a valid read token is required: ?token=TOKEN\n", 401, mimetype="text/plain"))
    if not identity.may("read") or not identity.covers(owner):
        abort(Response(f"token {identity.name!r} may not read {owner}\n", 403, mimetype="text/plain"))


def _feed(target: str, repos: list[str]) -> Response:
    redis = services().redis
    windows: dict[FreezeWindow, list[str]] = {}
    holds: dict[str, Hold] = {}
    for repo in repos:
        config, _error = repo_config(store.load_repo(redis, repo))
        for window in config.freeze_windows if config is not None else ():
            windows.setdefault(window, []).append(repo)
        for hold in room_holds.scoped_holds(redis, repo):
            holds.setdefault(hold.id, hold)
    body = build(target, repos, windows, list(holds.values()), datetime.now(UTC))
    response = Response(body, 200, mimetype="text/calendar")
    response.headers["Content-Type"] = "text/calendar; charset=utf-8"
    response.headers["Content-Disposition"] = f'inline; filename="{target.replace("/", "-")}-freezes.ics"'
    response.headers["Cache-Control"] = "private, max-age=300"
    return response


@bp.get("/calendar/<owner>.ics")
def org_feed(owner: str) -> Response:
    _granted(owner)
    org = owner.lower()
    repos = [r for r in reads.managed_repos(services().redis) if r.split("/", 1)[0] == org]
    if not repos:
        abort(Response(f"merge-hold manages no repository of {owner}\n", 404, mimetype="text/plain"))
    return _feed(org, repos)


@bp.get("/calendar/<owner>/<name>.ics")
def repo_feed(owner: str, name: str) -> Response:
    _granted(owner)
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo) or not reads.is_managed(services().redis, repo):
        abort(Response(f"merge-hold does not manage {repo}\n", 404, mimetype="text/plain"))
    return _feed(repo.lower(), [repo.lower()])
