"""The intake pump (workers/intake/pump.py): every acknowledged delivery becomes a job once, whatever dies when."""

from __future__ import annotations

import json
import time

import pytest
import redis
from rq import Queue

from core import keys
from core.deliveries import pack, unpack
from workers.intake.pump import ALIVE_TTL, Pump, pump_all

QUEUE = "merge-hold-intake-test"


def _entry(n: int, action: str = "opened") -> bytes:
    return pack("pull_request", f"d-{n}", json.dumps({"action": action, "n": n}).encode())


@pytest.mark.parametrize(("entry", "parsed"), [
    (pack("push", "g-1", b'{"a": 1}'), ("push", "g-1", b'{"a": 1}')),
    (pack("push", "", b""), ("push", "", b"")),
    (pack("push", "g", b"\n\nx\n"), ("push", "g", b"\n\nx\n")),  # newlines in the body stay in the body
])
def test_pack_round_trips(entry: bytes, parsed: tuple[str, str, bytes]) -> None:
    got = unpack(entry)
    assert (got.event, got.delivery_id, got.body) == parsed


@pytest.mark.parametrize("entry", [b"", b"push", b"push\nid-only", b"\nid\nbody"])
def test_unpack_rejects(entry: bytes) -> None:
    with pytest.raises(ValueError):
        unpack(entry)


def test_pump_queues_in_order_and_drops_what_cannot_matter(redis_client: redis.Redis) -> None:
    """What cannot matter is dropped; what is no delivery at all is set aside as a dead letter."""
    queue = Queue(QUEUE, connection=redis_client)
    for n in range(5):
        redis_client.lpush(keys.intake(QUEUE), _entry(n, "assigned" if n == 2 else "opened"))
    redis_client.lpush(keys.intake(QUEUE), b"not an entry")
    pump = Pump(redis_client, queue, "p1")
    assert pump.pump_all() == 6
    assert queue.job_ids == [f"delivery-d-{n}" for n in (0, 1, 3, 4)]
    assert (pump.queued, pump.ignored, pump.dead) == (4, 1, 1)
    assert not redis_client.exists(keys.intake(QUEUE), keys.intake_taken(QUEUE, "p1"))


def test_a_dead_pumps_taken_entries_go_back_in_order(redis_client: redis.Redis) -> None:
    """A pump killed between taking entries and queueing them: the entries wait in its taken list until
    its heartbeat expires, then the next pump puts them back at the front and queues them."""
    queue = Queue(QUEUE, connection=redis_client)
    for n in range(4):
        redis_client.lpush(keys.intake(QUEUE), _entry(n))
    dead = Pump(redis_client, queue, "dead")
    dead.heartbeat()
    taken = dead._take(keys=[dead.intake, dead.taken], args=[3])  # ... and SIGKILL here
    assert [unpack(e).delivery_id for e in taken] == ["d-0", "d-1", "d-2"]
    alive = Pump(redis_client, queue, "alive")
    assert alive.reclaim_dead() == 0  # its heartbeat still runs: a slow pump is never robbed
    assert queue.count == 0
    redis_client.delete(keys.intake_alive(QUEUE, "dead"))  # as if ALIVE_TTL had passed
    assert ALIVE_TTL <= 30
    assert alive.pump_all() == 4
    assert queue.job_ids == [f"delivery-d-{n}" for n in range(4)]
    assert not redis_client.exists(keys.intake_taken(QUEUE, "dead"))
    assert redis_client.smembers(keys.intake_pumps(QUEUE)) == {b"alive"}


def test_a_pump_queues_its_own_leftovers_first(redis_client: redis.Redis) -> None:
    """A Redis error after taking and before the MULTI/EXEC: the same pump queues the leftovers next."""
    queue = Queue(QUEUE, connection=redis_client)
    redis_client.lpush(keys.intake(QUEUE), _entry(0), _entry(1))
    pump = Pump(redis_client, queue, "p")
    pump._take(keys=[pump.intake, pump.taken], args=[1])
    assert pump_all(redis_client, queue, "p") == 2
    assert queue.job_ids == ["delivery-d-0", "delivery-d-1"]


def test_running_pump_wakes_on_a_push(redis_client: redis.Redis) -> None:
    queue = Queue(QUEUE, connection=redis_client)
    thread, stop = Pump(redis_client, queue, "t").start()
    try:
        time.sleep(0.2)
        redis_client.lpush(keys.intake(QUEUE), _entry(7))
        deadline = time.monotonic() + 10
        while queue.count == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert queue.job_ids == ["delivery-d-7"]
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    assert not redis_client.exists(keys.intake_alive(QUEUE, "t"))
