"""The queue layout a `merge-hold worker` serves: interactive work first, bulk work round robin between
installations.

rq's own means do the work. A worker listens to several queues in priority order: the interactive
queue (``MERGE_HOLD_QUEUE``: deliveries, chat commands, page actions, API calls, recomputes) first on
every dequeue, then each installation's bulk queue (`state.queueing.bulk_queue`), rotated by rq's
`DequeueStrategy.ROUND_ROBIN` after each bulk job so that one installation's bootstrap or fan-out
takes turns with every other's. Two changes to rq, both small:

- `TenantWorker.reorder_queues` keeps the interactive queue first (rq's round robin would rotate it
  too, putting a delivery behind a turn of every bulk queue);
- the queue list is refreshed from the Redis set of bulk queues before each dequeue, and a blocking
  dequeue waits at most `POLL_SECONDS`, so a queue of an installation that appears later is served
  within that time.

`TenantQueue.dequeue_any` takes a job with rq's own ``LMOVE`` onto the queue's intermediate list, one
queue after another in the worker's order (rq uses ``BLPOP`` across several queues, which keeps no
trace of a job taken by a worker killed before it started it; the watchdog's `rescue_dequeued` relies
on that trace), blocking only on the interactive queue.

Bulk work gives way between slices when interactive work waits (`interactive_waiting`): the drain,
the fan-out and the freeze marks hand on to a fresh job on their bulk queue, which runs after the
interactive jobs and after a turn of every other installation's bulk queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from redis import Redis
from rq import Queue
from rq.job import Job
from rq.serializers import Serializer
from rq.timeouts import BaseDeathPenalty
from rq.utils import as_text
from rq.worker import DequeueStrategy

from state.queueing import bulk_names
from workers.ops.rqworker import QuietForkWorker, QuietSimpleWorker

POLL_SECONDS = 1
"""Longest blocking wait on the interactive queue before the bulk queues (and their list) are looked
at again: the most a bulk job queued while every worker idles waits to be picked up."""


class TenantQueue(Queue):
    """rq's Queue, taking jobs with ``LMOVE`` from each of several queues in the order given."""

    @classmethod
    def dequeue_any(
        cls, queues: Iterable[Queue], timeout: int | None, connection: Redis,
        job_class: type[Job] | None = None, serializer: Serializer | str | None = None,
        death_penalty_class: type[BaseDeathPenalty] | None = None,
    ) -> tuple[Job, Queue] | None:
        ordered = list(queues)
        while True:
            result = None
            for queue in ordered:
                result = cls.lmove(connection, queue.key, None)
                if result is not None:
                    break
            if result is None:
                if timeout is None or not ordered:
                    return None
                # Blocks on the interactive queue only (rq raises DequeueTimeout when nothing came).
                result = cls.lmove(connection, ordered[0].key, min(timeout, POLL_SECONDS))
            queue_key, job_id = map(as_text, result)
            found = cls._fetch_dequeued_job(connection, queue_key, job_id, job_class=job_class,
                                            serializer=serializer, death_penalty_class=death_penalty_class)
            if found is not None:
                return found


class TenantWorker:
    """Mixed into rq's worker classes: the interactive queue first, bulk queues round robin, refreshed."""

    queues: list[Queue]
    _ordered_queues: list[Queue]
    connection: Redis

    def refresh_queues(self) -> None:
        """Add the bulk queues recorded since the last look, keeping the round robin's place."""
        interactive = self.queues[0]
        names = bulk_names(self.connection, interactive.name)
        known = {q.name: q for q in self.queues[1:]}
        fresh = [known.get(n) or TenantQueue(n, connection=self.connection, serializer=interactive.serializer)
                 for n in names]
        wanted = {q.name for q in fresh}
        turn = [q for q in self._ordered_queues if q.name in wanted and q is not interactive]
        turn += [q for q in fresh if q.name not in known]
        self.queues = [interactive, *fresh]
        self._ordered_queues = [interactive, *turn]

    def reorder_queues(self, reference_queue: Queue) -> None:
        """rq's round robin over the bulk queues only: the interactive queue stays first."""
        interactive, *bulk = self._ordered_queues
        if reference_queue.name == interactive.name:
            return
        names = [q.name for q in bulk]
        if reference_queue.name in names:
            pos = names.index(reference_queue.name)
            bulk = bulk[pos + 1:] + bulk[:pos + 1]
        self._ordered_queues = [interactive, *bulk]

    def dequeue_job_and_maintain_ttl(self, timeout: int | None,
                                     max_idle_time: int | None = None) -> tuple[Job, Queue] | None:
        waited = 0
        while True:
            self.refresh_queues()
            if timeout is None:
                return super().dequeue_job_and_maintain_ttl(None, max_idle_time)  # type: ignore[misc, no-any-return]
            found = super().dequeue_job_and_maintain_ttl(  # type: ignore[misc]
                min(timeout, POLL_SECONDS), POLL_SECONDS)
            if found is not None:
                return found  # type: ignore[no-any-return]
            waited += POLL_SECONDS
            if getattr(self, "_stop_requested", False) or (max_idle_time is not None and waited >= max_idle_time):
                return None

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False) -> None:
        # rq leaves the intermediate list to its maintenance when a worker has several queues; every job
        # here was taken with LMOVE, so it comes off that list as it starts, as with one queue.
        super().prepare_job_execution(job, True)  # type: ignore[misc]


class TenantSimpleWorker(TenantWorker, QuietSimpleWorker):
    """`merge-hold worker`: jobs in this process."""


class TenantForkWorker(TenantWorker, QuietForkWorker):
    """`merge-hold worker --fork`."""


def tenant_worker(interactive: Queue, *, fork: bool = False,
                  **kwargs: Any) -> TenantSimpleWorker | TenantForkWorker:
    """A worker of this layout on ``interactive`` and the bulk queues beside it."""
    cls: type[TenantSimpleWorker | TenantForkWorker] = TenantForkWorker if fork else TenantSimpleWorker
    queue = TenantQueue(interactive.name, connection=interactive.connection, serializer=interactive.serializer)
    worker = cls([queue], connection=interactive.connection, queue_class=TenantQueue, **kwargs)
    worker.refresh_queues()
    return worker


def work(worker: TenantSimpleWorker | TenantForkWorker, **kwargs: Any) -> bool:
    """``worker.work`` with the round robin between bulk queues."""
    return bool(worker.work(dequeue_strategy=DequeueStrategy.ROUND_ROBIN, **kwargs))


def burst(interactive: Queue, **kwargs: Any) -> bool:
    """Run jobs of this layout in this process until every queue is empty (tests, benches, tools)."""
    return work(tenant_worker(interactive), burst=True, **kwargs)
