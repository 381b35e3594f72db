"""A thread in every `merge-hold worker`: proof of life, rescue of a dead worker's jobs, stranded outboxes,
and the scheduled reconcile.

- **Alive.** Each second the worker refreshes ``keys.worker_alive(name)`` (a few seconds' TTL). rq's
  own abandoned-job handling waits for a job's timeout plus a minute and runs every ten minutes; a
  SIGKILLed worker's job is instead rescued here within seconds.
- **Rescue.** One worker at a time (``keys.WATCHDOG_LOCK``) looks at the started-job registry: a job
  whose worker (a `merge-hold worker`, ``keys.WATCHED_WORKERS``) is no longer alive is put back on the
  queue in one transaction (at most `MAX_RESCUES` times: a job that kills its worker every time ends
  in the failed registry). A plain rq worker's jobs are left to rq's own abandoned-job handling. The
  PR locks a dead worker held are broken (`workers.publishing.locks`), so its rescued job runs at once.
- **Dequeued, never started.** A job a worker took off the queue and died before starting (its
  execution perhaps already in the started registry) is put back after `STUCK_SECONDS` (rq's own
  clean-up would fail it minutes later).
- **Outboxes.** Writes waiting with nobody draining them (the drain's worker died) get a drain job.
- **Reconcile.** Every ``MERGE_HOLD_RECONCILE_SECONDS`` (0: off) one worker enqueues `reconcile_job`:
  the first to set the period's ``keys.reconcile_slot`` wins.

Every step tolerates Redis being away (it is restarting): the thread logs and tries again.
"""

from __future__ import annotations

import logging
import threading
import time

from redis import Redis, WatchError
from redis.exceptions import RedisError
from rq.exceptions import NoSuchJobError
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.queue import Queue

from core import keys
from state.decoding import as_text
from state.queueing import all_queues
from workers.ops.reconcile import enqueue_reconcile
from workers.publishing import DRAIN_LEASE_SECONDS, break_locks_of, enqueue_drain, stranded_outboxes
from workers.runtime import Runtime

log = logging.getLogger(__name__)

BEAT_SECONDS = 1.0
ALIVE_TTL = 5
"""A worker silent this long is dead: its jobs are rescued (a live one refreshes every second)."""
SWEEP_SECONDS = 3.0
MAX_RESCUES = 3
"""Rescues put back at once. A crash loop kills workers whatever they run, so a job rescued more often
is not dropped but put back later and later (`rescue_delay`); only one whose worker died
`MAX_RESCUES + DELAYED_RESCUES` times (a job that kills its worker, over about ten minutes) fails."""
DELAYED_RESCUES = 5
STUCK_SECONDS = 10.0
"""A job dequeued this long ago and still not started lost its worker between the two (`rescue_dequeued`)."""


def rescue_delay(rescues: int) -> int:
    """Seconds before the ``rescues``-th rescue runs again: 0, then 20, 40, 80, 160, 320."""
    return 0 if rescues <= MAX_RESCUES else 10 * 2 ** (rescues - MAX_RESCUES)


def beat(redis: Redis, name: str, place: str = "1") -> None:
    """Refresh ``name``'s alive key; its value says where the worker runs (`workers.ops.naming.here`), so
    that `merge-hold worker --healthcheck` finds the workers of its own container."""
    with redis.pipeline() as pipe:
        pipe.set(keys.worker_alive(name), place, ex=ALIVE_TTL)
        pipe.sadd(keys.WATCHED_WORKERS, name)
        pipe.execute()


def rescue_orphans(queue: Queue) -> list[str]:
    """Put back on the queue every started job whose worker is not alive. Returns their ids."""
    redis = queue.connection
    registry = queue.started_job_registry
    rescued: list[str] = []
    busy: set[str] = set()
    for job_id, execution_id in registry.get_job_and_execution_ids(cleanup=False):
        try:
            job = Job.fetch(job_id, connection=redis, serializer=queue.serializer)
        except NoSuchJobError:
            redis.zrem(registry.key, f"{job_id}:{execution_id}")
            continue
        worker = job.worker_name
        if job.get_status(refresh=False) != JobStatus.STARTED or not worker:
            continue
        busy.add(worker)
        if redis.exists(keys.worker_alive(worker)) or not redis.sismember(keys.WATCHED_WORKERS, worker):
            continue
        if _requeue(queue, job, f"{job_id}:{execution_id}"):
            rescued.append(job_id)
    dead = []
    for raw in redis.smembers(keys.WATCHED_WORKERS):
        name = as_text(raw)
        if not redis.exists(keys.worker_alive(name)):
            dead.append(name)
    # Its rescued jobs (and every other recompute of its PRs) need not wait out its locks' timeout.
    if dead and (broken := break_locks_of(redis, dead)):
        log.warning("broke %d PR lock(s) of dead workers: %s", broken, ", ".join(sorted(dead)))
    for name in dead:
        if name not in busy:
            redis.srem(keys.WATCHED_WORKERS, name)  # gone, and nothing of its left to rescue
    if rescued:
        log.warning("rescued %d job(s) of dead workers: %s", len(rescued), ", ".join(rescued))
    return rescued


def rescue_dequeued(queue: Queue, now: float | None = None) -> list[str]:
    """Put back jobs a worker took off the queue and died before starting. rq moves a job to its
    *intermediate* list when a worker dequeues it and off it once the job is started (in the work horse,
    after the fork): a SIGKILL in between leaves it in neither the queue nor the started registry, and
    rq's own clean-up fails it only after two maintenance rounds (ten minutes apart). rq 2 and later
    also add the job's *execution* to the started registry before the horse (in our `SimpleWorker`, the
    worker's own process) starts it, the job still ``queued`` and naming no worker: `rescue_orphans`
    cannot tell whose it is, so a SIGKILL right there stranded the job for the execution's whole TTL
    (the job's timeout and a minute; found by the storm). Such a job counts as dequeued, not started,
    unless the execution's worker is alive. A job that has sat there `STUCK_SECONDS` (a live worker
    takes milliseconds) is put back at the front; should its worker be alive after all, the job runs
    twice, which every job here tolerates (deliveries are idempotent, recomputes locked and fenced)."""
    redis = queue.connection
    clock = time.time() if now is None else now
    key = queue.intermediate_queue_key
    registry = queue.started_job_registry
    executions: dict[str, list[str]] = {}
    for job_id, execution_id in registry.get_job_and_execution_ids(cleanup=False):
        executions.setdefault(job_id, []).append(execution_id)
    rescued: list[str] = []
    for raw in redis.lrange(key, 0, -1):
        job_id = as_text(raw)
        seen = keys.dequeued_seen(queue.name, job_id)
        if any(_runner_alive(redis, job_id, e) for e in executions.get(job_id, ())):
            continue
        first = redis.set(seen, str(clock), nx=True, ex=3600)
        since = redis.get(seen)
        if first or since is None or clock - float(since) < STUCK_SECONDS:
            continue
        try:
            job = Job.fetch(job_id, connection=redis, serializer=queue.serializer)
        except NoSuchJobError:
            redis.lrem(key, 1, job_id)  # finished and deleted (result_ttl=0): nothing to run
            continue
        if job.get_status(refresh=False) != JobStatus.QUEUED:
            continue  # started, finished or failed meanwhile: not ours to put back
        with redis.pipeline() as pipe:
            try:
                pipe.watch(key)  # type: ignore[no-untyped-call]
                if pipe.lpos(key, job_id) is None:
                    pipe.unwatch()
                    continue
                pipe.multi()
                pipe.lrem(key, 1, job_id)
                pipe.delete(seen)
                for execution_id in executions.get(job_id, ()):  # its dead worker's, never started
                    pipe.zrem(registry.key, f"{job_id}:{execution_id}")
                queue.enqueue_job(job, pipeline=pipe, at_front=True)
                pipe.execute()
                rescued.append(job_id)
            except WatchError:
                continue
    if rescued:
        log.warning("put back %d job(s) dequeued by dead workers: %s", len(rescued), ", ".join(rescued))
    return rescued


def rescue_jobs_of(queue: Queue, name: str) -> list[str]:
    """Put back, at once, every job the dead worker ``name`` had started or had taken off the queue and
    prepared. A worker taking over a dead worker's name (`workers.ops.naming.claim`) calls this before its
    first beat: once the name beats again, the sweeps above would take the dead one's jobs for its own."""
    redis = queue.connection
    registry = queue.started_job_registry
    rescued: list[str] = []
    for job_id, execution_id in registry.get_job_and_execution_ids(cleanup=False):
        entry = f"{job_id}:{execution_id}"
        try:
            job = Job.fetch(job_id, connection=redis, serializer=queue.serializer)
        except NoSuchJobError:
            continue
        status = job.get_status(refresh=False)
        if status == JobStatus.STARTED and job.worker_name == name:
            if _requeue(queue, job, entry):
                rescued.append(job_id)
        elif status == JobStatus.QUEUED and _execution_worker(redis, job_id, execution_id) == name:
            with redis.pipeline() as pipe:
                pipe.zrem(registry.key, entry)
                if redis.lpos(queue.intermediate_queue_key, job_id) is not None:
                    pipe.lrem(queue.intermediate_queue_key, 1, job_id)
                    queue.enqueue_job(job, pipeline=pipe, at_front=True)
                    rescued.append(job_id)
                pipe.execute()
    if rescued:
        log.warning("put back %d job(s) of the dead worker %s: %s", len(rescued), name, ", ".join(rescued))
    return rescued


def _execution_worker(redis: Redis, job_id: str, execution_id: str) -> str | None:
    execution = Execution(execution_id, job_id, redis)
    try:
        execution.refresh()  # type: ignore[no-untyped-call]
    except ValueError:
        return None
    return execution.worker_name or None


def _runner_alive(redis: Redis, job_id: str, execution_id: str) -> bool:
    """Whether the worker of this started-registry entry is alive, so may still start the job. A plain rq
    worker never beats: a job of its stuck this way is put back too (running twice is harmless)."""
    execution = Execution(execution_id, job_id, redis)
    try:
        execution.refresh()  # type: ignore[no-untyped-call]
    except ValueError:
        return False  # its hash expired or was never written: nobody runs it
    name = execution.worker_name
    return bool(name) and bool(redis.exists(keys.worker_alive(name)))


def _requeue(queue: Queue, job: Job, entry: str) -> bool:
    """Off the started registry and back on the queue — at once, later (`rescue_delay`) or, past every
    rescue, failed — in one EXEC. Returns whether it will run again."""
    from datetime import UTC, datetime, timedelta

    from rq.registry import FailedJobRegistry

    registry = queue.started_job_registry
    with queue.connection.pipeline() as pipe:
        try:
            pipe.watch(registry.key)  # type: ignore[no-untyped-call]
            if pipe.zscore(registry.key, entry) is None:
                pipe.unwatch()
                return False  # another watchdog (or rq's own cleanup) got there first
            rescues = int(job.meta.get("rescued", 0)) + 1
            job.meta["rescued"] = rescues
            pipe.multi()
            pipe.zrem(registry.key, entry)
            if rescues > MAX_RESCUES + DELAYED_RESCUES:
                job.set_status(JobStatus.FAILED, pipeline=pipe)
                FailedJobRegistry(queue.name, connection=queue.connection).add(
                    job, exc_string=f"its worker died {rescues} times running it", pipeline=pipe)
            elif rescues > MAX_RESCUES:
                job.started_at = None
                queue.schedule_job(job, datetime.now(UTC) + timedelta(seconds=rescue_delay(rescues)), pipeline=pipe)
            else:
                job.started_at = None
                queue.enqueue_job(job, pipeline=pipe, at_front=True)
            pipe.execute()
            return rescues <= MAX_RESCUES + DELAYED_RESCUES
        except WatchError:
            return False


class Watchdog(threading.Thread):
    """The thread; `name` is the current rq worker's name (it changes when the worker is rebuilt), `place`
    where it runs (the alive key's value)."""

    def __init__(self, rt: Runtime, name: str, place: str = "1") -> None:
        super().__init__(name="merge-hold-watchdog", daemon=True)
        self.rt = rt
        self.worker_name = name
        self.place = place
        self.stopping = threading.Event()
        self._last_sweep = 0.0
        period = rt.settings.reconcile_seconds
        # Not at start: a fleet restarting at once would reconcile at once (the rescue covers a crash).
        self._reconcile_slot = int(time.time() // period) if period > 0 else 0

    def run(self) -> None:
        while not self.stopping.wait(BEAT_SECONDS):
            try:
                self.tick()
            except RedisError as exc:
                log.debug("watchdog: Redis unavailable (%s); trying again", exc)
            except Exception:
                log.exception("watchdog: unexpected error; going on")

    def tick(self) -> None:
        redis = self.rt.redis
        beat(redis, self.worker_name, self.place)
        if time.monotonic() - self._last_sweep >= SWEEP_SECONDS:
            self._last_sweep = time.monotonic()
            if redis.set(keys.WATCHDOG_LOCK, self.worker_name, nx=True, ex=int(SWEEP_SECONDS)):
                for queue in all_queues(self.rt.queue):  # the interactive queue and every bulk queue
                    rescue_orphans(queue)
                    rescue_dequeued(queue)
                for bucket in stranded_outboxes(redis):
                    token = f"watchdog-{time.time_ns()}"
                    # The lease is the drain's to take over: one drain per lapse, not one per sweep.
                    if redis.set(keys.outbox_lease(bucket), token, nx=True, ex=DRAIN_LEASE_SECONDS):
                        enqueue_drain(self.rt, bucket, token=token)
        self.reconcile_if_due()

    def reconcile_if_due(self) -> None:
        period = self.rt.settings.reconcile_seconds
        if period <= 0:
            return
        slot = int(time.time() // period)
        if slot <= self._reconcile_slot:
            return
        self._reconcile_slot = slot
        if self.rt.redis.set(keys.reconcile_slot(slot), self.worker_name, nx=True, ex=max(period * 2, 60)):
            log.info("scheduled reconcile (every %ss)", period)
            enqueue_reconcile(self.rt)
