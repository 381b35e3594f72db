"""The write pacer's burst (GCRA, `workers.pacing`): a few writes at once after a quiet spell, the rate
after that, no burst right after a rate-limit pause, and a burst of one is the old one-slot pacer.
Real Redis; the pacer reads Redis's clock, so waits are compared with a tolerance."""

from __future__ import annotations

import pytest
from redis import Redis

from workers.pacing import Pacer


@pytest.mark.parametrize(("rate", "burst", "waits"), [
    (60, 1, [0, 1, 2, 3]),  # no burst: one slot a second from the first
    (60, 3, [0, 0, 0, 1, 2]),  # three at once, then the rate
    (120, 4, [0, 0, 0, 0, 0.5, 1.0]),
], ids=["burst-1", "burst-3", "burst-4-at-120"])
def test_a_burst_goes_at_once_then_the_rate_holds(redis_client: Redis, rate: float, burst: int,
                                                  waits: list[float]) -> None:
    pacer = Pacer(redis_client, rate, "inst-b", burst=burst)
    got = [pacer.reserve() for _ in waits]
    assert got == [pytest.approx(w, abs=0.08) for w in waits]
    assert pacer.next_slot_in() == pytest.approx(waits[-1] + 60 / rate, abs=0.08)


def test_a_spent_burst_is_not_taken_beyond_max_wait(redis_client: Redis) -> None:
    pacer = Pacer(redis_client, 60, "inst-c", burst=2)
    assert [pacer.reserve(0), pacer.reserve(0)] == [0, 0]
    assert pacer.reserve(0) is None  # nothing free now, and nothing taken
    assert pacer.reserve(0.5) is None
    assert pacer.reserve(1.5) == pytest.approx(1.0, abs=0.08)
    assert pacer.counters()["granted"] == 3


def test_no_burst_right_after_a_pause(redis_client: Redis) -> None:
    """GitHub said stop: when the pause ends the writes resume at the rate, not all at once."""
    pacer = Pacer(redis_client, 600, "inst-d", burst=5)  # 0.1 s apart
    pacer.pause(0.5)
    got = [pacer.reserve() for _ in range(3)]
    assert got == [pytest.approx(w, abs=0.05) for w in (0.5, 0.6, 0.7)]


def test_workers_share_one_burst(redis_client: Redis) -> None:
    one, other = Pacer(redis_client, 60, "inst-e", burst=2), Pacer(redis_client, 60, "inst-e", burst=2)
    assert [one.reserve(0), other.reserve(0), one.reserve(0), other.reserve(0)] == [0, 0, None, None]


@pytest.mark.parametrize("burst", [0, -1])
def test_a_burst_below_one_is_refused(redis_client: Redis, burst: int) -> None:
    with pytest.raises(ValueError, match="burst"):
        Pacer(redis_client, 60, "inst-f", burst=burst)
