"""Exact times (`app.times`) and the timelines' data (`app.timeline`), issue #27 items 2 and 3: a hold "for 2h"
ends "in 2 h", never "in 1 h"; each hold is a bar from placed to lifted, freezes are shaded; the week on
`/rooms` has each freeze window's occurrences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app.history import Raw
from app.timeline import pr_chart, week_chart
from app.times import clock, ends, exact, span
from core.repo_config import FreezeWindow

NOW = datetime(2026, 1, 6, 12, 30, tzinfo=UTC)  # a Tuesday


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("delta", "text"), [
    (timedelta(hours=2) - timedelta(seconds=10), "14:30 UTC, in 2 h"),  # placed "for 2h" ten seconds ago
    (timedelta(hours=1, minutes=59), "14:29 UTC, in 1 h 59 min"),
    (timedelta(seconds=45), "12:31 UTC, in 45 s"),
    (timedelta(seconds=61), "12:32 UTC, in 2 min"),  # counted up: never shown ending sooner than it does
    (-timedelta(minutes=3, seconds=59), "12:26 UTC, 3 min ago"),  # counted down: never older than it is
    (timedelta(days=2, hours=3), "Thu 8 Jan 15:30 UTC, in 2 d 3 h"),
    (-timedelta(days=40), "Thu 27 Nov 2025 12:30 UTC, 40 d ago"),
])
def test_exact_times_are_never_rounded_down(delta: timedelta, text: str) -> None:
    assert exact(iso(NOW + delta), NOW) == text


def test_ends_and_the_edges() -> None:
    assert ends(iso(NOW + timedelta(hours=2)), NOW) == "ends 14:30 UTC, in 2 h"
    assert ends(iso(NOW - timedelta(minutes=2)), NOW) == "ended 12:28 UTC, 2 min ago"
    assert ends(None, NOW) == "never ends" and exact(None, NOW) == "" and exact("soon", NOW) == "soon"
    assert span(0) == "0 s" and span(3600) == "1 h" and span(90061) == "1 d 1 h 1 min"
    assert clock(NOW, NOW) == "12:30 UTC"


def raw(minutes: float, event: str, **data: Any) -> Raw:
    ms = int((NOW - timedelta(minutes=minutes)).timestamp() * 1000)
    return Raw(f"{ms}-0", event, data)


def test_each_hold_is_a_bar_from_placed_to_lifted_and_freezes_are_shaded() -> None:
    history = [
        raw(120, "hold.held", actor="alice", message="@alice held this PR", reason="DB migration"),
        raw(90, "room.held", scope="acme/widgets", holder="ada", reason="release freeze"),
        raw(60, "hold.lifted", target="alice", message="@alice lifted the hold"),
        raw(50, "hold.held", actor="bob", message="@bob held this PR for 2h", reason="QA"),
        raw(40, "hold.held", actor="carol", message="@carol requested changes", reason="changes requested"),
        raw(30, "hold.lifted", target="carol", message="@carol approved"),
    ]
    now_holds = [
        {"id": "room:slack:T:U:acme/widgets", "source": "room", "scope": "acme/widgets", "holder": "ada",
         "reason": "release freeze", "created_at": iso(NOW - timedelta(minutes=90))},
        {"id": "comment:bob", "source": "comment", "holder": "bob", "reason": "QA",
         "created_at": iso(NOW - timedelta(minutes=50)), "expires_at": iso(NOW + timedelta(minutes=70))},
    ]
    chart = pr_chart(history, now_holds, NOW)
    assert chart is not None
    rows = {row.label: row for row in chart.rows}
    assert set(rows) == {"@alice", "@ada on acme/widgets", "@bob", "@carol"}
    alice = rows["@alice"].bars[0]
    assert (alice.start, alice.end) == (NOW - timedelta(minutes=120), NOW - timedelta(minutes=60))
    assert "lifted 11:30 UTC" in rows["@alice"].detail
    assert rows["@bob"].bars[0].end == NOW + timedelta(minutes=70) and "ends 13:40 UTC" in rows["@bob"].detail
    assert rows["@carol"].bars[0].end == NOW - timedelta(minutes=30)
    assert rows["@ada on acme/widgets"].kind == "freeze" and rows["@ada on acme/widgets"].bars[0].end is None
    assert [b.start for b in chart.shading] == [NOW - timedelta(minutes=90)]
    assert chart.start < NOW - timedelta(minutes=120) and chart.end > NOW + timedelta(minutes=70)
    assert 0 < chart.x(NOW - timedelta(minutes=120)) < chart.now_x < chart.x(NOW + timedelta(minutes=70)) < 1000
    assert pr_chart([], [], NOW) is None


def test_a_hold_only_the_verdict_knows_still_gets_its_bar() -> None:
    """History trimmed (or a PR merge-hold never saw): the current holds alone draw the picture."""
    chart = pr_chart([], [{"id": "label:do-not-merge/hold", "source": "label", "holder": "",
                           "created_at": iso(NOW - timedelta(days=30))}], NOW)
    assert chart is not None and chart.start >= NOW - timedelta(days=7, hours=12)  # a week back at most
    assert chart.rows[0].label == "label" and chart.rows[0].bars[0].end is None


def test_the_week_on_rooms_has_each_windows_occurrences() -> None:
    window = FreezeWindow(name="weekend", days=("sat", "sun"), start="00:00", end="24:00", timezone="UTC",
                          branches=("main",))
    evenings = FreezeWindow(name="evenings", days=("mon", "tue"), start="18:00", end="20:00",
                            timezone="Europe/Berlin", branches=("*",))
    freeze = {"scope": "acme", "holder": "ada", "reason": "incident", "created_at": iso(NOW - timedelta(hours=1)),
              "expires_at": iso(NOW + timedelta(hours=2))}
    chart = week_chart([("acme/widgets", window), ("acme/gadgets", evenings)], [freeze], NOW)
    assert chart.start == datetime(2026, 1, 5, tzinfo=UTC) and chart.end == datetime(2026, 1, 12, tzinfo=UTC)
    assert chart.days == ["Mon 5", "Tue 6", "Wed 7", "Thu 8", "Fri 9", "Sat 10", "Sun 11"]
    weekend, evening, frozen = chart.rows
    assert [(b.start.day, b.end and b.end.day) for b in weekend.bars] == [(10, 12)]  # Sat and Sun merged
    assert [(b.start.hour, b.end and b.end.hour) for b in evening.bars] == [(17, 19), (17, 19)]  # 18:00 in Berlin
    assert frozen.label == "acme: @ada" and frozen.bars[0].end == NOW + timedelta(hours=2)
    assert len(chart.ticks) == 6
