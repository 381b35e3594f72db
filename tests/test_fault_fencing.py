"""Fencing of status writes (design §4, invariant 8): a writer whose PR lock lapsed never leaves a stale
status behind. Real Redis, the GitHub emulator over HTTP, the funnel's own functions.

Rows: a fresh lock writes; a lock that lapsed before the POST writes nothing; a lock that lapsed during
a stalled POST while a newer verdict was recorded forgets what it posted, and the next drain writes the
newer verdict over it.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest
from redis import Redis

from core import keys
from core.prstate import Register, record_comment
from state import store
from tests.e2e_support import Service, held_widgets
from tests.emulator import GitHubEmulator
from workers.publishing.drain import drain
from workers.publishing.outbox import bucket_of
from workers.publishing.recompute import record
from workers.publishing.write import Fenced, write_locked

REPO = "acme/widgets"
FREE = 6
SHA = "6" * 40


def _hold(svc: Service, who: str) -> None:
    register = Register(at=datetime(2026, 1, 6, tzinfo=UTC), held=True, ref=f"fence-{who}", reason="fenced")
    store.update_pull(svc.redis, REPO, FREE, lambda s: record_comment(s, who, register))


def _outbox(svc: Service) -> list[bytes]:
    return [m for m in svc.redis.zrange(keys.outbox(bucket_of(svc.redis, REPO)), 0, -1) if isinstance(m, bytes)]


def _posts(emu: GitHubEmulator) -> list[tuple[str, str]]:
    return [(p["state"], p["description"]) for p in emu.status_posts() if p["sha"] == SHA]


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    service = held_widgets(github_emulator, redis_url)
    assert _posts(github_emulator) == [("success", "No holds")]
    _hold(service, "fay")
    assert record(service.rt, REPO, FREE, datetime.now(UTC)) == "pending"
    return service


@pytest.mark.parametrize(("lapse", "posts"), [
    (False, [("success", "No holds"), ("failure", "Held by @fay: fenced")]),
    (True, [("success", "No holds")]),
], ids=["fresh-lock-writes", "lapsed-lock-writes-nothing"])
def test_a_write_checks_its_lock_right_before_the_post(svc: Service, github_emulator: GitHubEmulator,
                                                       lapse: bool, posts: list[tuple[str, str]]) -> None:
    lock = svc.redis.lock(keys.recompute_lock(REPO, FREE), timeout=0.3 if lapse else 30)
    assert lock.acquire(blocking=False)
    if lapse:
        time.sleep(0.5)
        assert svc.redis.lock(keys.recompute_lock(REPO, FREE), timeout=30).acquire(blocking=False)
        with pytest.raises(Fenced):
            write_locked(svc.rt, REPO, FREE, lock)
        assert _outbox(svc), "a fenced write leaves the PR on the outbox"
    else:
        assert write_locked(svc.rt, REPO, FREE, lock) == "posted"
        assert _outbox(svc) == []
    assert _posts(github_emulator) == posts


def test_a_stale_post_that_lands_last_is_written_over(svc: Service, github_emulator: GitHubEmulator) -> None:
    """The lock lapses while GitHub stalls the POST; meanwhile a newer verdict is recorded. The stale POST
    lands, the writer sees it was fenced, and the outbox's next drain posts the newer verdict after it."""
    lock = svc.redis.lock(keys.recompute_lock(REPO, FREE), timeout=0.5, thread_local=False)
    assert lock.acquire(blocking=False)
    outcome: list[object] = []

    def stale_writer() -> None:
        try:
            outcome.append(write_locked(svc.rt, REPO, FREE, lock))
        except Fenced as fenced:
            outcome.append(fenced)

    with github_emulator.lock:  # GitHub stalls every request until released
        writer = threading.Thread(target=stale_writer)
        writer.start()
        deadline = time.monotonic() + 10
        while lock.owned():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        newer = svc.redis.lock(keys.recompute_lock(REPO, FREE), timeout=30)
        assert newer.acquire(blocking=False)
        _hold(svc, "gus")
        assert record(svc.rt, REPO, FREE, datetime.now(UTC)) == "pending"
        newer.release()
    writer.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], Fenced)
    assert svc.redis.get(keys.posted(REPO, FREE)) is None, "what was posted is unknown: forgotten"
    assert _posts(github_emulator)[-1] == ("failure", "Held by @fay: fenced")  # the stale one landed last
    assert drain(svc.rt, bucket_of(svc.redis, REPO))["posted"] == 1
    latest = github_emulator.latest_status(REPO, SHA)
    verdict = svc.verdict(REPO, FREE)
    assert latest is not None and verdict is not None
    assert (latest["state"], latest["description"]) == (verdict["state"], verdict["description"])
    assert verdict["description"] == "Held by @fay: fenced (+1 more)"
    assert _outbox(svc) == []


def test_the_watchdog_breaks_only_dead_workers_locks(redis_client: Redis) -> None:
    """A PR lock's token names its worker; a dead worker's locks go at once, a live one's and the CLI's
    stay — and the broken holder's `owned()` turns False, so fencing stops it should it be alive."""
    from rq import Queue

    from workers.ops.watchdog import beat, rescue_orphans
    from workers.publishing.locks import WorkerLock, break_locks_of

    def lock(number: int, token: str) -> WorkerLock:
        held = WorkerLock(redis_client, keys.recompute_lock(REPO, number), timeout=60)
        assert held.acquire(blocking=False, token=token)
        return held

    dead, live, cli = lock(1, "w0-dead/abc"), lock(2, "w1-live/def"), lock(3, "-/ghi")
    similar = lock(4, "w0-dead2/jkl")  # a name that merely starts like the dead one's
    beat(redis_client, "w0-dead")
    beat(redis_client, "w1-live")
    redis_client.delete(keys.worker_alive("w0-dead"))  # its heartbeats stopped
    assert break_locks_of(redis_client, []) == 0
    rescue_orphans(Queue("fencing-locks", connection=redis_client))
    assert not dead.owned() and live.owned() and cli.owned() and similar.owned()
    assert not redis_client.sismember(keys.WATCHED_WORKERS, "w0-dead")


def test_a_job_whose_worker_keeps_dying_is_put_back_later_not_dropped(redis_client: Redis) -> None:
    """A crash loop kills workers whatever they run: past `MAX_RESCUES` a rescued job is scheduled later
    and later (an acknowledged delivery is not dropped); only past every delayed rescue does it fail."""
    from rq import Queue
    from rq.executions import Execution
    from rq.job import JobStatus

    from workers.ops.watchdog import DELAYED_RESCUES, MAX_RESCUES, beat, rescue_delay, rescue_orphans

    queue = Queue("fencing-rescues", connection=redis_client)
    job = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "d-1", "{}")
    outcomes = []
    for _ in range(MAX_RESCUES + DELAYED_RESCUES + 1):
        job.refresh()  # type: ignore[no-untyped-call]
        queue.remove(job)
        queue.scheduled_job_registry.remove(job)
        job.worker_name = "w9-dead"
        job.set_status(JobStatus.STARTED)
        job.save()
        with redis_client.pipeline() as pipe:
            queue.started_job_registry.add_execution(Execution.create(job, 60, pipe, "w9-dead"), pipe, ttl=60)
            pipe.execute()
        beat(redis_client, "w9-dead")
        redis_client.delete(keys.worker_alive("w9-dead"))
        assert rescue_orphans(queue) in ([job.id], [])
        job.refresh()  # type: ignore[no-untyped-call]
        outcomes.append(job.get_status())
    assert outcomes == ([JobStatus.QUEUED] * MAX_RESCUES + [JobStatus.SCHEDULED] * DELAYED_RESCUES
                        + [JobStatus.FAILED])
    assert [rescue_delay(n) for n in range(1, MAX_RESCUES + DELAYED_RESCUES + 1)] == [0, 0, 0, 20, 40, 80, 160, 320]


def test_a_job_dequeued_by_a_worker_that_died_before_starting_it_is_put_back(redis_client: Redis) -> None:
    """Found by the crash-loop storm: rq moves a dequeued job to its intermediate list and off it only
    once the work horse starts it; a worker SIGKILLed in between left a `/hold`, a review dismissal and a
    recompute invisible for ten minutes or more (rq's clean-up then *fails* them). The watchdog puts such
    a job back at the front after `STUCK_SECONDS`."""
    from rq import Queue

    from workers.ops.watchdog import STUCK_SECONDS, rescue_dequeued

    queue = Queue("fencing-dequeued", connection=redis_client)
    stuck = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "d-stuck", "{}")
    finished = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "d-done", "{}")
    later = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "d-later", "{}")
    for _ in range(2):  # what rq's worker does when it takes a job (then it was SIGKILLed)
        assert Queue.dequeue_any([queue], timeout=None, connection=redis_client) is not None
    finished.delete()  # result_ttl=0: a finished job is gone, its id may linger in the list
    assert queue.get_job_ids() == [later.id]
    now = time.time()
    assert rescue_dequeued(queue, now=now) == []  # first seen: a live worker may be starting it
    assert rescue_dequeued(queue, now=now + STUCK_SECONDS / 2) == []
    assert rescue_dequeued(queue, now=now + STUCK_SECONDS + 1) == [stuck.id]
    assert queue.get_job_ids() == [stuck.id, later.id]  # back at the front
    assert redis_client.lrange(queue.intermediate_queue_key, 0, -1) == []
    assert rescue_dequeued(queue, now=now + 2 * STUCK_SECONDS) == []  # once


def test_a_job_whose_dead_worker_had_only_prepared_its_execution_is_put_back(redis_client: Redis) -> None:
    """Found by the storm (one short storm in a fresh-clone run): rq 2+ adds a job's execution to the
    started registry before the fork, the job still `queued` and naming no worker; a SIGKILL right
    there hid a changes-requested review for the execution's whole TTL. The job is put back once its
    worker is dead, not while it lives, and its stale registry entry goes with it."""
    from rq import Queue
    from rq.executions import Execution

    from workers.ops.watchdog import STUCK_SECONDS, beat, rescue_dequeued, rescue_orphans

    queue = Queue("fencing-prepared", connection=redis_client)
    stuck = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "d-prepared", "{}")
    job = Queue.dequeue_any([queue], timeout=None, connection=redis_client)
    assert job is not None and job[0].id == stuck.id
    with redis_client.pipeline() as pipe:  # what rq's `prepare_execution` does in the worker, before the fork
        Execution.create(stuck, 60, pipe, worker_name="w9-preparing")
        pipe.execute()
    beat(redis_client, "w9-preparing")
    now = time.time()
    assert rescue_dequeued(queue, now=now) == []
    assert rescue_dequeued(queue, now=now + STUCK_SECONDS + 1) == []  # its worker lives: it will start it
    redis_client.delete(keys.worker_alive("w9-preparing"))
    assert rescue_orphans(queue) == []  # `queued`, no worker named: not the orphan rescue's to take
    assert rescue_dequeued(queue, now=now + STUCK_SECONDS + 2) == []  # first seen dead: wait as for any
    assert rescue_dequeued(queue, now=now + 2 * STUCK_SECONDS + 3) == [stuck.id]
    assert queue.get_job_ids() == [stuck.id]
    assert queue.started_job_registry.get_job_and_execution_ids(cleanup=False) == []
    assert redis_client.lrange(queue.intermediate_queue_key, 0, -1) == []
