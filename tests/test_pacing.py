"""The write pacer's burst (GCRA, `workers.publishing.pacing`): a few writes at once after a quiet spell, the rate
after that, no burst right after a rate-limit pause, and a burst of one is the old one-slot pacer.
Real Redis; the pacer reads Redis's clock, so waits are compared with a tolerance."""

from __future__ import annotations

import pytest
from redis import Redis

from workers.publishing.pacing import Pacer


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


# --- the hour (GitHub: 500 content-creating requests an hour per installation) ------------------------


def _slots(pacer: Pacer, count: int, **kwargs: object) -> list[float]:
    """Absolute times (Redis's clock, seconds) of ``count`` slots taken in a row without sleeping."""
    out = []
    for _ in range(count):
        now_s, now_us = pacer.redis.time()
        wait = pacer.reserve(**kwargs)  # type: ignore[arg-type]
        assert wait is not None
        out.append(now_s + now_us / 1e6 + wait)
    return out


def test_past_the_hourly_cap_the_next_slot_is_when_the_oldest_leaves_the_hour(redis_client: Redis) -> None:
    pacer = Pacer(redis_client, 6000, "inst-h1", burst=5, hourly=5)
    first = _slots(pacer, 5)
    assert max(first) - min(first) < 0.5
    assert pacer.reserve(0) is None  # the hour is full: nothing now, nothing taken
    assert pacer.next_slot_in() == pytest.approx(3600, abs=1)
    sixth = _slots(pacer, 1)[0]
    assert sixth - first[0] == pytest.approx(3600, abs=0.1)
    assert pacer.counters()["granted"] == 6


def test_low_priority_writes_leave_part_of_the_hour_to_urgent_ones(redis_client: Redis) -> None:
    from workers.publishing.pacing import GATE, GATE_HOURLY_RESERVE, HOURLY_RESERVE, LOW_PRIORITY

    pacer = Pacer(redis_client, 60000, "inst-h2", burst=1000, hourly=HOURLY_RESERVE + 150)
    gates = min(GATE_HOURLY_RESERVE, pacer.hourly // 10)
    assert all(pacer.reserve(0, priority=LOW_PRIORITY) is not None for _ in range(150))
    assert pacer.reserve(0, priority=LOW_PRIORITY) is None
    # Urgent writes take the low-priority reserve but the gates' share; the gates take that too.
    assert all(pacer.reserve(0) is not None for _ in range(HOURLY_RESERVE - gates))
    assert pacer.reserve(0) is None
    assert all(pacer.reserve(0, priority=GATE) is not None for _ in range(gates))
    assert pacer.reserve(0, priority=GATE) is None
    small = Pacer(redis_client, 60000, "inst-h3", burst=1000, hourly=10)  # a small cap: half for each
    assert sum(small.reserve(0, priority=LOW_PRIORITY) is not None for _ in range(10)) == 5


@pytest.mark.parametrize(("priority", "now"), [(0, 91), (1, 91), (2, 101)], ids=["urgent", "low", "gate"])
def test_the_gates_keep_a_share_of_the_minute(redis_client: Redis, priority: int, now: int) -> None:
    """A fan-out or a bootstrap (any non-gate write) fills the sliding minute only up to ``rate + burst``
    less the gates' reserve: a freeze's ruleset writes then still go at once (`GATE_MINUTE_RESERVE`)."""
    from workers.publishing.pacing import GATE

    pacer = Pacer(redis_client, 1, f"inst-m{priority}", burst=100)  # a bucket wider than the minute's cap
    assert sum(pacer.reserve(0, priority=priority) is not None for _ in range(120)) == now
    if priority != GATE:
        assert sum(pacer.reserve(0, priority=GATE) is not None for _ in range(20)) == 101 - now


def test_an_activation_keeps_its_thaws_write_of_the_hour(redis_client: Redis) -> None:
    """Every active ruleset owes its thaw one write: other writes leave those slots, an activation
    leaves them and its own thaw's, and the thaw (a gate write binding nothing) may spend them."""
    from workers.publishing.pacing import GATE, SlotTooFar

    pacer = Pacer(redis_client, 60000, "inst-o", burst=1000, hourly=10)
    frozen = 0
    while True:
        try:
            pacer.acquire(0, priority=GATE, binds=True)
        except SlotTooFar as far:
            assert far.seconds == pytest.approx(3600, abs=2)
            break
        pacer.owe(f"acme/r{frozen}", True)
        frozen += 1
    assert frozen == 5  # five frozen, five writes kept for their thaws
    assert pacer.reserve(0) is None and pacer.reserve(0, priority=1) is None  # nothing else takes them
    assert pacer.hour_room_in(1) == pytest.approx(3600, abs=2)
    for index in range(frozen):  # the thaw: every one of its writes now
        assert pacer.reserve(0, priority=GATE) == 0
        pacer.owe(f"acme/r{index}", False)


def test_low_priority_writes_give_way_while_urgent_ones_wait(redis_client: Redis) -> None:
    from workers.publishing.pacing import LOW_PRIORITY, YIELD_RECHECK, SlotTooFar

    pacer = Pacer(redis_client, 60, "inst-y", burst=10)
    pacer.yield_low_priority()
    assert pacer.reserve(0, priority=LOW_PRIORITY) is None  # the bucket is full, and still refused
    assert 0 < pacer.next_slot_in(priority=LOW_PRIORITY) <= YIELD_RECHECK  # asked again soon
    with pytest.raises(SlotTooFar):
        pacer.acquire(5, priority=LOW_PRIORITY)
    assert [pacer.reserve(0) for _ in range(3)] == [0, 0, 0]  # urgent: the whole burst is theirs
    pacer.end_yield()
    assert pacer.reserve(0, priority=LOW_PRIORITY) == 0


def test_a_low_priority_writer_asleep_for_its_slot_gives_way_to_urgent_ones(redis_client: Redis) -> None:
    from workers.publishing.pacing import LOW_PRIORITY, SlotTooFar

    pacer = Pacer(redis_client, 60, "inst-y2", burst=1)
    assert pacer.reserve(0) == 0  # the bucket spent: the next slot is a second away
    pacer.sleep = lambda seconds: pacer.yield_low_priority()  # urgent writes begin while it sleeps
    with pytest.raises(SlotTooFar):
        pacer.acquire(5, priority=LOW_PRIORITY)  # nothing written into them


@pytest.mark.parametrize(("rate", "burst", "hourly", "count"), [
    (600, 10, 25, 60), (1200, 1, 7, 20), (60000, 50, 120, 400), (3000, 3, 0, 50),
], ids=["burst-then-hour", "no-burst", "wide", "no-hourly-cap"])
def test_slots_never_break_either_window(redis_client: Redis, rate: float, burst: int, hourly: int,
                                        count: int) -> None:
    """Any 60 s hold at most burst + rate slots, any hour at most ``hourly``: what GitHub would refuse
    is never handed out, however many writers ask."""
    pacer = Pacer(redis_client, rate, f"inst-w-{rate}-{burst}", burst=burst, hourly=hourly)
    slots = sorted(_slots(pacer, count))
    for i, start in enumerate(slots):
        in_minute = sum(1 for t in slots[i:] if t < start + 60 - 0.05)
        assert in_minute <= burst + rate, f"{in_minute} slots in the minute from {start}"
        if hourly:
            assert sum(1 for t in slots[i:] if t < start + 3600 - 0.05) <= hourly


def test_gate_writes_go_at_once_within_the_minute_cap(redis_client: Redis) -> None:
    """A freeze's ruleset writes skip the bucket's smoothing (fifty repos blocked in seconds, not in
    forty), but never pass burst + rate in a sliding minute nor the hour; and they cost the bucket."""
    from workers.publishing.pacing import GATE

    pacer = Pacer(redis_client, 60, "inst-g1", burst=10, hourly=450)
    gates = _slots(pacer, 70, priority=GATE)
    assert max(gates) - min(gates) < 1.0  # all 70 (= rate + burst) now
    assert pacer.next_slot_in(priority=GATE) == pytest.approx(60, abs=1)  # the 71st waits for the minute
    assert pacer.next_slot_in() > 60  # and ordinary writes pay for them in the bucket
    hourly = Pacer(redis_client, 60, "inst-g2", burst=10, hourly=5)
    assert len(_slots(hourly, 5, priority=GATE)) == 5
    assert hourly.next_slot_in(priority=GATE) == pytest.approx(3600, abs=1)
