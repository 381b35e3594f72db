"""The scheduler: moves due jobs (timed-hold and room-hold expiries, freeze-window edges, exemption ends,
delayed drains and retries) from rq's scheduled registry onto the queue — in one worker at a time, and
taken over within seconds when that worker dies.

rq's own scheduler holds its lock for ``interval + 60`` seconds and the other workers look for a lapsed
lock only in their maintenance, so a SIGKILLed scheduler's jobs ran up to about a minute and a half
late: a freeze that should start at 18:00 started at 18:01:30. Here every `merge-hold worker` runs a
thread that tries, each `TICK` second, to take or refresh a short lock (`LOCK_TTL`). The holder
refreshes it every tick and enqueues what is due; when it dies, its lock lapses within `LOCK_TTL` and
the next tick of another worker takes over: due jobs run at most ``LOCK_TTL + TICK`` late.

The lock is rq's own (``rq:scheduler-lock:QUEUE``), so a plain ``rq worker --with-scheduler`` on the
same queue and this thread never schedule at once. A holder stalled past its TTL (a long GC pause, Redis
unreachable) finds the lock another's on its next tick and stops; a job moved twice in that overlap
runs twice, which every scheduled job here tolerates (a recompute, a drain under its lease).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
import uuid

from redis.exceptions import RedisError
from rq import Queue
from rq.job import Job
from rq.registry import ScheduledJobRegistry
from rq.scheduler import RQScheduler
from rq.scripts import acquire_or_refresh_lock, release_lock
from rq.utils import current_timestamp

from state.queueing import all_queues
from workers.runtime import Runtime

log = logging.getLogger(__name__)

LOCK_TTL = 5
"""Seconds a dead scheduler keeps the others off. The holder refreshes every `TICK`, so only a stall
this long (not a slow tick) hands the lock on."""
TICK = 1.0
"""How often due jobs are moved onto the queue (rq's scheduler: every second too)."""


def enqueue_due(rt: Runtime) -> int:
    """Move every due job of our queues' scheduled registries (the interactive queue's and each bulk
    queue's) onto its queue; returns how many."""
    return sum(_enqueue_due(rt, queue) for queue in all_queues(rt.queue))


def _enqueue_due(rt: Runtime, queue: Queue) -> int:
    registry = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
    due = registry.get_jobs_to_schedule(current_timestamp())
    if not due:
        return 0
    jobs = Job.fetch_many(due, connection=rt.redis, serializer=queue.serializer)
    with rt.redis.pipeline() as pipe:
        for job_id, job in zip(due, jobs, strict=True):
            if job is not None:
                queue._enqueue_job(job, pipeline=pipe, at_front=job.should_enqueue_at_front())
            registry.remove(job_id, pipeline=pipe)
        pipe.execute()
    return sum(job is not None for job in jobs)


class Scheduler(threading.Thread):
    """The thread of one worker process; ``owner`` names it in the lock (host, pid and a nonce)."""

    def __init__(self, rt: Runtime) -> None:
        super().__init__(name="merge-hold-scheduler", daemon=True)
        self.rt = rt
        self.owner = f"{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:6]}"
        self.key = RQScheduler.get_locking_key(rt.queue.name)
        self.stopping = threading.Event()
        self.holding = False

    def run(self) -> None:
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                self.tick()
            except RedisError as exc:
                log.debug("scheduler: Redis unavailable (%s); trying again", exc)
            except Exception:
                log.exception("scheduler: unexpected error; going on")
            self.stopping.wait(max(TICK - (time.monotonic() - started), 0.0))

    def tick(self) -> None:
        outcome = acquire_or_refresh_lock(self.rt.redis, self.key, self.owner, LOCK_TTL)
        holding = outcome in ("acquired", "refreshed")
        if holding != self.holding:
            log.info("scheduler for %s: %s", self.rt.queue.name, "taken over here" if holding else "held elsewhere")
        self.holding = holding
        if holding:
            moved = enqueue_due(self.rt)
            if moved:
                log.info("scheduler: %d due job(s) queued", moved)

    def stop(self) -> None:
        """Let another worker take over at its next tick instead of after the TTL."""
        self.stopping.set()
        if self.is_alive():
            self.join(timeout=TICK + 1)
        if self.holding:
            with contextlib.suppress(RedisError):  # else it lapses on its own
                release_lock(self.rt.redis, self.key, self.owner)
            self.holding = False
