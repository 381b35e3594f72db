"""One expiry rule (`core.holds.active_until`), and the agent hook's copy pinned to it.

The hook cannot import `core.holds` within its start-up budget (design §7), so `hook/judgement.py` keeps
its own `expired`. This table makes the two agree on every shape a verdict record's ``expires_at``
can take, including the boundary instant and unreadable values (an unreadable expiry still holds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from app import reads
from core.holds import Hold, Source, active_until, record_hold_active, to_iso
from core.prstate import PullState, Register, comment_hold_active
from hook.judgement import expired as hook_expired

NOW = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
NOW_ISO = to_iso(NOW) or ""

ROWS: list[tuple[str, Any, bool]] = [
    # (why, expires_at as stored, active at NOW?)
    ("no expiry", None, True),
    ("empty string", "", True),
    ("an hour ago", "2026-03-02T08:00:00Z", False),
    ("a second ago", "2026-03-02T08:59:59Z", False),
    ("exactly now: gone from that instant", "2026-03-02T09:00:00Z", False),
    ("in a second", "2026-03-02T09:00:01Z", True),
    ("next year", "2027-01-01T00:00:00Z", True),
    ("offset form, before now", "2026-03-02T10:59:59+02:00", False),
    ("offset form, after now", "2026-03-02T11:00:01+02:00", True),
    ("fractional seconds just after now", "2026-03-02T09:00:00.500000Z", True),
    ("fractional seconds just before now", "2026-03-02T08:59:59.500000Z", False),
    ("no zone (read as UTC), past", "2026-03-02T08:00:00", False),
    ("no zone (read as UTC), future", "2026-03-02T10:00:00", True),
    ("unreadable text still holds", "soon", True),
    ("a number still holds", 1767225600, True),
]


@pytest.mark.parametrize(("expires", "active"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_the_hook_copy_and_the_readers_follow_core_rule(expires: Any, active: bool) -> None:
    hold = {"id": "comment:alice", "expires_at": expires}
    assert record_hold_active(hold, NOW) is active
    assert hook_expired(hold, NOW_ISO) is (not active)  # the hook's copy
    assert reads.hold_active(hold, NOW) is active  # the API and dashboard


def test_every_core_holder_of_an_expiry_uses_the_rule() -> None:
    for delta in (timedelta(seconds=-1), timedelta(0), timedelta(seconds=1)):
        expires = NOW + delta
        expected = active_until(expires, NOW)
        hold = Hold("h", Source.ROOM, "acme/widgets", "ops", "", NOW - timedelta(days=1), expires_at=expires)
        register = Register(at=NOW - timedelta(hours=1), held=True, ref="1", expires_at=expires)
        assert hold.active(NOW) is expected
        assert comment_hold_active(PullState("acme/widgets", 1), register, NOW) is expected
        assert record_hold_active(hold.to_dict(), NOW) is expected
