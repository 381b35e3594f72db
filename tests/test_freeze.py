"""Freeze windows on the wall clock, across the 2026 DST changes of Berlin and New York."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.exempt_labels import LabelGrant
from core.freeze import freeze_holds, next_transition
from core.holds import Hold, Source
from core.prstate import Facts, PullState
from core.repo_config import DEFAULT_CONFIG, FreezeWindow, RepoConfig
from core.verdict import compute_verdict

DAYS7 = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def config(*windows: FreezeWindow, exempt_labels: tuple[str, ...] = ()) -> RepoConfig:
    return replace(DEFAULT_CONFIG, freeze_windows=windows, exempt_labels=exempt_labels)


FRIDAY = FreezeWindow("friday", ("fri",), "16:00", "23:59", "Europe/Berlin")
NIGHT = FreezeWindow("night", ("fri",), "22:00", "06:00", "Europe/Berlin")
GAP = FreezeWindow("gap", DAYS7, "02:30", "04:00", "Europe/Berlin")
OVERLAP = FreezeWindow("overlap", DAYS7, "01:30", "02:30", "Europe/Berlin")
NY_DAY = FreezeWindow("office", DAYS7[:5], "09:00", "17:00", "America/New_York")
NY_NIGHT = FreezeWindow("ny-night", ("sat",), "22:00", "06:00", "America/New_York")
NY_GAP = FreezeWindow("ny-gap", DAYS7, "02:00", "03:00", "America/New_York")
WEEKEND = FreezeWindow("weekend", ("sat", "sun"), "00:00", "24:00", "Europe/Berlin")

# (window, an instant, the (start, end) of the freeze then in UTC, or None when not frozen)
ROWS: list[tuple[str, FreezeWindow, str, tuple[str, str] | None]] = [
    ("Berlin Friday in CET", FRIDAY, "2026-03-27T15:00", ("2026-03-27T15:00", "2026-03-27T22:59")),
    ("just before", FRIDAY, "2026-03-27T14:59:59", None),
    ("last second", FRIDAY, "2026-03-27T22:58:59", ("2026-03-27T15:00", "2026-03-27T22:59")),
    ("end is exclusive", FRIDAY, "2026-03-27T22:59", None),
    ("Berlin Friday in CEST", FRIDAY, "2026-04-03T14:00", ("2026-04-03T14:00", "2026-04-03T21:59")),
    ("CEST 15:00 UTC is 17:00 local", FRIDAY, "2026-04-03T13:59", None),
    ("Thursday", FRIDAY, "2026-04-02T15:00", None),
    ("Friday after fall back", FRIDAY, "2026-10-30T15:00", ("2026-10-30T15:00", "2026-10-30T22:59")),
    ("night belongs to Friday", NIGHT, "2026-03-28T04:59", ("2026-03-27T21:00", "2026-03-28T05:00")),
    ("Friday night before it", NIGHT, "2026-03-27T20:59", None),
    ("Saturday night is not Friday's", NIGHT, "2026-03-28T22:00", None),
    ("night across spring forward", NIGHT, "2026-03-28T23:30", None),
    ("spring-forward start in the gap: at the jump", GAP, "2026-03-29T01:00", ("2026-03-29T01:00", "2026-03-29T02:00")),
    ("before the jump", GAP, "2026-03-29T00:59:59", None),
    ("the day before, CET", GAP, "2026-03-28T01:30", ("2026-03-28T01:30", "2026-03-28T03:00")),
    ("fall-back: starts at the first 01:30", OVERLAP, "2026-10-24T23:30", ("2026-10-24T23:30", "2026-10-25T01:30")),
    ("fall-back: runs through the repeated hour", OVERLAP, "2026-10-25T01:15",
     ("2026-10-24T23:30", "2026-10-25T01:30")),
    ("fall-back: ends at the second 02:30", OVERLAP, "2026-10-25T01:30", None),
    ("New York office hours, EST", NY_DAY, "2026-03-06T14:00", ("2026-03-06T14:00", "2026-03-06T22:00")),
    ("New York office hours, EDT", NY_DAY, "2026-03-09T13:00", ("2026-03-09T13:00", "2026-03-09T21:00")),
    ("EDT 13:00 UTC on the Friday before is 08:00 local", NY_DAY, "2026-03-06T13:30", None),
    ("New York after fall back", NY_DAY, "2026-11-02T14:00", ("2026-11-02T14:00", "2026-11-02T22:00")),
    ("New York before fall back", NY_DAY, "2026-10-30T13:00", ("2026-10-30T13:00", "2026-10-30T21:00")),
    ("New York weekend", NY_DAY, "2026-11-01T15:00", None),
    ("night through fall back lasts 9 hours", NY_NIGHT, "2026-11-01T10:59", ("2026-11-01T02:00", "2026-11-01T11:00")),
    ("a window inside the gap never opens", NY_GAP, "2026-03-08T07:00", None),
    ("the gap window the day after", NY_GAP, "2026-03-09T06:30", ("2026-03-09T06:00", "2026-03-09T07:00")),
    ("touching days merge", WEEKEND, "2026-03-29T12:00", ("2026-03-27T23:00", "2026-03-29T22:00")),
    ("merged from the Saturday", WEEKEND, "2026-03-28T00:00", ("2026-03-27T23:00", "2026-03-29T22:00")),
]


@pytest.mark.parametrize(("window", "now", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_windows(window: FreezeWindow, now: str, expected: tuple[str, str] | None) -> None:
    holds = freeze_holds(config(window), "acme/widgets", "main", (), utc(now))
    if expected is None:
        assert holds == []
    else:
        [hold] = holds
        assert (hold.created_at, hold.expires_at) == (utc(expected[0]), utc(expected[1]))


def test_hold_shape() -> None:
    [hold] = freeze_holds(config(FRIDAY), "acme/widgets", "main", (), utc("2026-03-27T16:00"))
    assert hold == Hold(
        id="freeze:friday", source=Source.FREEZE, scope="acme/widgets@*", holder="friday",
        reason="freeze friday until Fri 23:59 CET", created_at=utc("2026-03-27T15:00"),
        expires_at=utc("2026-03-27T22:59"), origin="schedule:friday",
    )
    [summer] = freeze_holds(config(FRIDAY), "acme/widgets", "main", (), utc("2026-04-03T16:00"))
    assert summer.reason == "freeze friday until Fri 23:59 CEST"


@pytest.mark.parametrize(
    ("branches", "base", "scope"),
    [
        (("main",), "main", "acme/widgets@main"),
        (("release/*", "main"), "release/2.0", "acme/widgets@release/*"),
        (("*", "main"), "main", "acme/widgets@*"),
        (("release/*",), "main", None),
        (("Main",), "main", None),  # branch globs are case-sensitive
    ],
)
def test_branches(branches: tuple[str, ...], base: str, scope: str | None) -> None:
    window = replace(FRIDAY, branches=branches)
    holds = freeze_holds(config(window), "acme/widgets", base, (), utc("2026-03-27T16:00"))
    assert [h.scope for h in holds] == ([scope] if scope else [])


def test_exempt_labels_of_the_window_and_duplicate_names() -> None:
    now = utc("2026-03-27T16:00")
    exempt = replace(FRIDAY, exempt_labels=("hotfix",))
    other = replace(FRIDAY, name="other")
    cfg = config(exempt, other, replace(other, branches=("main",)))
    assert [h.id for h in freeze_holds(cfg, "acme/widgets", "main", ("hotfix",), now)] == ["freeze:other"]
    assert [h.id for h in freeze_holds(cfg, "acme/widgets", "main", ("bug",), now)] == [
        "freeze:friday", "freeze:other"]


def test_verdict_applies_freezes_and_config_exempt_labels() -> None:
    now = utc("2026-03-27T16:00")
    facts = Facts(at=now, head_sha="abc", head_ref="f", head_repo="acme/widgets", base="main", author="a")
    state = PullState("acme/widgets", 1, facts=facts)
    cfg = config(FRIDAY, exempt_labels=("hotfix",))
    assert [h.id for h in compute_verdict(state, config=cfg, now=now).holds] == ["freeze:friday"]
    labelled = replace(state, facts=replace(facts, labels=("hotfix",)))
    # Seen on the PR without a maintainer's `labeled` event for this head, the label exempts nothing.
    assert [h.id for h in compute_verdict(labelled, config=cfg, now=now).holds] == ["freeze:friday"]
    granted = replace(labelled, grants={"hotfix": LabelGrant(now, True, by="mia", trusted=True, head_sha="abc")})
    assert compute_verdict(granted, config=cfg, now=now).holds == ()


TRANSITIONS: list[tuple[tuple[FreezeWindow, ...], str, str | None]] = [
    ((), "2026-03-27T12:00", None),
    ((FRIDAY,), "2026-03-27T12:00", "2026-03-27T15:00"),
    ((FRIDAY,), "2026-03-27T15:00", "2026-03-27T22:59"),  # strictly after now
    ((FRIDAY,), "2026-03-27T23:00", "2026-04-03T14:00"),  # next week, in summer time
    ((FRIDAY, NY_DAY), "2026-03-27T12:00", "2026-03-27T13:00"),
    ((WEEKEND,), "2026-03-28T12:00", "2026-03-29T22:00"),  # no wake-up at Sunday midnight
    ((OVERLAP,), "2026-10-24T23:30", "2026-10-25T01:30"),
    ((NY_GAP,), "2026-03-08T06:30", "2026-03-09T06:00"),  # no wake-up for the window the gap swallowed
]


@pytest.mark.parametrize(("windows", "now", "expected"), TRANSITIONS)
def test_next_transition(windows: tuple[FreezeWindow, ...], now: str, expected: str | None) -> None:
    assert next_transition(config(*windows), utc(now)) == (utc(expected) if expected else None)


WINDOWS = (FRIDAY, NIGHT, GAP, OVERLAP, NY_DAY, NY_NIGHT, NY_GAP, WEEKEND)


def frozen(cfg: RepoConfig, now: datetime) -> set[tuple[str, datetime]]:
    return {(h.id, h.created_at) for h in freeze_holds(cfg, "acme/widgets", "main", (), now)}


@settings(max_examples=200, deadline=None)
@given(
    windows=st.lists(st.sampled_from(WINDOWS), min_size=1, max_size=3, unique_by=lambda w: w.name),
    now=st.datetimes(datetime(2026, 1, 1), datetime(2026, 12, 31)).map(lambda d: d.replace(tzinfo=UTC)),
)
def test_nothing_changes_before_the_next_transition(windows: list[FreezeWindow], now: datetime) -> None:
    cfg = config(*windows)
    wake = next_transition(cfg, now)
    assert wake is not None and now < wake <= now + timedelta(days=7)
    before = frozen(cfg, now)
    for fraction in (0.25, 0.5, 0.75):
        assert frozen(cfg, now + (wake - now - timedelta(microseconds=1)) * fraction) == before
    assert frozen(cfg, wake - timedelta(microseconds=1)) == before
    assert frozen(cfg, wake) != before
