"""The iCalendar feed: read back with `icalendar` (the library it is made with) and with `vobject` (a second,
independent parser that reads the feed's own VTIMEZONE and expands the RRULE itself), across DST changes;
the token in the URL; what the feed holds."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import vobject
from icalendar import Calendar
from redis import Redis

from app.calendar_feed import build
from core import freeze
from core.repo_config import DAYS, FreezeWindow
from merge_hold.tokens import create as create_token
from merge_hold.tokens import revoke
from state import room_holds, store
from tests.webapp_support import make_app


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


WINDOWS = [
    FreezeWindow(name="sunday", days=("sun",), start="01:00", end="04:00", timezone="Europe/Berlin"),
    # Starts in the hour Berlin skips on 29 March and 28 March 2027; ends in the hour it repeats in October.
    FreezeWindow(name="gap-start", days=("sun",), start="02:30", end="05:00", timezone="Europe/Berlin"),
    FreezeWindow(name="overlap-end", days=("sat",), start="20:00", end="02:30", timezone="Europe/Berlin"),
    # Falls wholly into the skipped hour once a year: the clock never shows it, the gate skips it.
    FreezeWindow(name="inside-gap", days=("sun",), start="02:10", end="02:40", timezone="Europe/Berlin"),
    FreezeWindow(name="friday-nights", days=("fri",), start="22:00", end="06:00", timezone="America/New_York",
                 branches=("main", "release/*")),
    FreezeWindow(name="weekdays-sydney", days=("mon", "tue", "wed", "thu", "fri"), start="17:00", end="09:00",
                 timezone="Australia/Sydney"),
]
NOW = utc("2026-03-04T12:00:00")  # a Wednesday, weeks before Europe's and the US's spring changes


def gate(window: FreezeWindow, since: date, until: date) -> set[tuple[datetime, datetime]]:
    """What the gate enforces: each occurrence the clock shows, in UTC."""
    found = set()
    day = since
    while day < until:
        if DAYS[day.weekday()] in window.days:
            start, end = freeze.occurrence(window, day)
            if start < end:
                found.add((start, end))
        day += timedelta(days=1)
    return found


def expand_vobject(text: str, uid_of: str, since: datetime, until: datetime, *, exact: bool) -> set[tuple[
        datetime, datetime]]:
    """The occurrences of one window as a client reading with vobject sees them (overrides applied). ``exact``:
    each lasts the first occurrence's elapsed time (RFC 5545 for DTEND); else the wall-clock length."""
    cal = vobject.readOne(text)
    events = [e for e in cal.vevent_list if e.summary.value == f"Merge freeze: {uid_of}"]
    master = next(e for e in events if hasattr(e, "rrule"))
    overrides = {e.recurrence_id.value.astimezone(UTC): e for e in events if hasattr(e, "recurrence_id")}
    alone = [e for e in events if not hasattr(e, "rrule") and not hasattr(e, "recurrence_id")]
    start0, end0 = master.dtstart.value, master.dtend.value
    length = end0.astimezone(UTC) - start0.astimezone(UTC) if exact else end0 - start0
    found = set()
    for start in master.getrruleset(addRDate=True).between(since, until, inc=True):
        moved = overrides.get(start.astimezone(UTC))
        if moved is not None:
            found.add((moved.dtstart.value.astimezone(UTC), moved.dtend.value.astimezone(UTC)))
        else:
            end = start.astimezone(UTC) + length if exact else start + length
            found.add((start.astimezone(UTC), end.astimezone(UTC)))
    for event in alone:
        found.add((event.dtstart.value.astimezone(UTC), event.dtend.value.astimezone(UTC)))
    return {(s, e) for s, e in found if since <= s < until}


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: w.name)
@pytest.mark.parametrize("exact", [True, False], ids=["exact-length", "wall-clock-length"])
def test_vobject_sees_every_occurrence_the_gate_enforces(window: FreezeWindow, exact: bool) -> None:
    text = build("acme/widgets", ["acme/widgets"], {window: ["acme/widgets"]}, [], NOW).decode()
    since, until = utc("2026-03-09T00:00:00"), utc("2027-03-01T00:00:00")
    seen = expand_vobject(text, window.name, since, until, exact=exact)
    wanted = {(s, e) for s, e in gate(window, date(2026, 3, 8), date(2027, 3, 2)) if since <= s < until}
    assert seen == wanted


@pytest.mark.parametrize(("window", "day", "start", "end"), [
    # Hand-computed UTC, independent of the code: CET is +1, CEST +2.
    (WINDOWS[0], "2026-03-22", "2026-03-22T00:00:00", "2026-03-22T03:00:00"),
    (WINDOWS[0], "2026-03-29", "2026-03-29T00:00:00", "2026-03-29T02:00:00"),
    (WINDOWS[0], "2026-10-25", "2026-10-24T23:00:00", "2026-10-25T03:00:00"),
    (WINDOWS[1], "2026-03-29", "2026-03-29T01:00:00", "2026-03-29T03:00:00"),  # 02:30 never shows: 03:00 CEST
    (WINDOWS[2], "2026-10-24", "2026-10-24T18:00:00", "2026-10-25T01:30:00"),  # ends at 02:30's second showing
    (WINDOWS[4], "2026-03-13", "2026-03-14T02:00:00", "2026-03-14T10:00:00"),  # New York after its change
])
def test_dst_edges_by_hand(window: FreezeWindow, day: str, start: str, end: str) -> None:
    text = build("acme", ["acme/widgets"], {window: ["acme/widgets"]}, [], NOW).decode()
    moment = datetime.fromisoformat(day).replace(tzinfo=UTC)
    for exact in (True, False):
        seen = expand_vobject(text, window.name, moment - timedelta(days=1), moment + timedelta(days=2), exact=exact)
        assert (utc(start), utc(end)) in seen


def test_the_skipped_occurrence_is_excluded() -> None:
    text = build("acme", ["acme/widgets"], {WINDOWS[3]: ["acme/widgets"]}, [], NOW).decode()
    seen = expand_vobject(text, "inside-gap", utc("2026-03-28T00:00:00"), utc("2026-03-30T00:00:00"), exact=True)
    assert seen == set()


def test_icalendar_reads_back_the_series_in_its_own_zone() -> None:
    shared = {w: ["acme/api", "acme/widgets"] for w in WINDOWS[:1] + WINDOWS[4:5]}
    cal: Any = Calendar.from_ical(build("acme", ["acme/api", "acme/widgets"], shared, [], NOW))
    zones = {str(tz["TZID"]) for tz in cal.walk("VTIMEZONE")}
    assert zones == {"Europe/Berlin", "America/New_York"}
    masters = [e for e in cal.walk("VEVENT") if "RRULE" in e]
    assert sorted(str(e["SUMMARY"]) for e in masters) == ["Merge freeze: friday-nights", "Merge freeze: sunday"]
    sunday = next(e for e in masters if str(e["SUMMARY"]).endswith("sunday"))
    assert sunday["RRULE"]["FREQ"] == ["WEEKLY"] and sunday["RRULE"]["BYDAY"] == ["SU"]
    start = sunday["DTSTART"].dt
    assert str(start.tzinfo) == "Europe/Berlin" and (start.hour, start.minute) == (1, 0)
    assert sunday["TRANSP"] == "TRANSPARENT"
    assert "acme/api, acme/widgets" in str(sunday["DESCRIPTION"])  # one event for the repos that share it
    uids = [str(e["UID"]) for e in masters]
    assert len(set(uids)) == 2
    assert str(cal["VERSION"]) == "2.0" and "PRODID" in cal
    # Stable: the same feed later in the week names the same events (calendars update, not duplicate).
    again: Any = Calendar.from_ical(build("acme", ["acme/api", "acme/widgets"], shared, [], NOW + timedelta(days=2)))
    assert sorted(str(e["UID"]) for e in again.walk("VEVENT") if "RRULE" in e) == sorted(uids)


# -- over HTTP ------------------------------------------------------------------------------------------------


CONFIG = """\
freeze-windows:
  - name: sunday-freeze
    days: [sun]
    from: "01:00"
    to: "04:00"
    timezone: Europe/Berlin
"""


@pytest.fixture()
def served(redis_client: Redis, tmp_path: Path) -> Any:
    app, _admin = make_app(redis_client, tmp_path)
    for repo in ("acme/widgets", "acme/api", "other/thing"):
        store.save_repo(redis_client, repo, store.RepoMeta(installation_id=1, config_text=CONFIG, config_loaded=True))
    return app.test_client()


def test_the_feed_over_http_with_a_read_token(served: Any, redis_client: Redis, tmp_path: Path) -> None:
    token = create_token(tmp_path / "tokens", "calendar", "read", ("acme",))
    now = datetime.now(UTC).replace(microsecond=0)
    timed = room_holds.place_hold(redis_client, "acme/widgets@release/*", holder="dana", holder_id="slack:T1:U1",
                                  reason="release 2.0", origin="slack:acme/#rel", now=now, duration=timedelta(hours=6))
    room_holds.place_hold(redis_client, "acme", holder="ed", holder_id="slack:T1:U2", reason="incident",
                          origin="slack:acme/#ops", now=now)  # open-ended: no end to show
    answer = served.get(f"/calendar/acme.ics?token={token}")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "text/calendar; charset=utf-8"
    cal: Any = Calendar.from_ical(answer.data)
    events = cal.walk("VEVENT")
    windows = [e for e in events if "RRULE" in e]
    assert len(windows) == 1 and "acme/api, acme/widgets" in str(windows[0]["DESCRIPTION"])
    singles = [e for e in events if str(e["SUMMARY"]) == f"Merge freeze: {timed.scope}"]
    assert len(singles) == 1
    assert singles[0]["DTSTART"].dt == now and singles[0]["DTEND"].dt == now + timedelta(hours=6)
    assert "RRULE" not in singles[0] and "release 2.0" in str(singles[0]["DESCRIPTION"])
    assert not [e for e in events if str(e["SUMMARY"]) == "Merge freeze: acme"]
    vobject.readOne(answer.data.decode())  # the second parser takes the whole feed
    repo = served.get(f"/calendar/acme/widgets.ics?token={token}")
    assert repo.status_code == 200 and "acme/api" not in repo.data.decode()


def test_the_token_in_the_url(served: Any, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    reader = create_token(tokens, "cal", "read", ("acme",))
    holder = create_token(tokens, "deploys", "hold")  # hold includes read
    elsewhere = create_token(tokens, "other", "read", ("other",))

    def status(path: str) -> int:
        return int(served.get(path).status_code)

    assert status(f"/calendar/acme.ics?token={reader}") == 200
    assert status(f"/calendar/acme.ics?token={holder}") == 200
    assert status(f"/calendar/acme.ics?token={elsewhere}") == 403
    assert status(f"/calendar/acme/widgets.ics?token={elsewhere}") == 403
    assert status("/calendar/acme.ics") == 401
    assert status("/calendar/acme.ics?token=mhk_nope") == 401
    assert status(f"/calendar/nobody.ics?token={holder}") == 404
    assert status(f"/calendar/acme/unknown.ics?token={reader}") == 404
    revoke(tokens, "cal")
    assert status(f"/calendar/acme.ics?token={reader}") == 401  # revoked: the URL stops working at once


def test_the_access_log_leaves_the_token_out() -> None:
    """The feed's URL carries a token: `merge-hold serve --access-log` logs paths without query strings."""
    import argparse

    from foundation.settings import Settings
    from merge_hold.serve import gunicorn_options

    args = argparse.Namespace(host="127.0.0.1", port=8000, workers=2, threads=1, timeout=30, access_log=True)
    line = gunicorn_options(args, Settings())["access_log_format"]
    assert "%(U)s" in line and "%(r)s" not in line and "%(q)s" not in line
