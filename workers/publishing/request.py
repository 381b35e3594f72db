"""Step 1 of the publishing path: a recompute asked for (design §4, invariants 4, 5).

`request_recompute` (or `RecomputeRequest` inside a state write's WATCH/MULTI) sets the PR's
``queued`` flag and queues its recompute job in one EXEC: there is never a flag without its job, nor a
state change without its recompute. The flag only coalesces bursts; the job clears it when it starts,
under the PR's lock. Inside a delivery the job is a backstop and the delivery runs it at once
(`workers.publishing.in_delivery`).
"""

from __future__ import annotations

from redis import WatchError
from redis.client import Pipeline
from rq import Queue

from core import jobs, keys
from state.queueing import create_job
from workers.runtime import DeliveryScope, Runtime

RECOMPUTE_JOB = jobs.RECOMPUTE.address
QUEUED_TTL = 3600
"""A backstop only: the flag and its job are written together and the job deletes the flag."""


class RecomputeRequest:
    """A recompute asked for inside a caller's optimistic transaction: `watch` before ``MULTI``, `add`
    after it; the flag and the job land with the caller's EXEC or not at all. Inside a ``delivery`` the job
    is a backstop, and the delivery runs the recompute itself."""

    def __init__(self, queue: Queue, repo: str, number: int, delivery: DeliveryScope | None = None) -> None:
        self.queue, self.repo, self.number, self.delivery = queue, repo, number, delivery
        self.flag = keys.recompute_queued(repo, number)
        self.pending = False

    def watch(self, pipe: Pipeline) -> None:
        pipe.watch(self.flag)  # type: ignore[no-untyped-call]
        self.pending = bool(pipe.exists(self.flag))

    def add(self, pipe: Pipeline) -> bool:
        """Queue the job in ``pipe`` (in MULTI); False when one is already waiting (coalesced)."""
        if self.pending:
            return False
        pipe.set(self.flag, "1", ex=QUEUED_TTL)
        job = create_job(self.queue, jobs.RECOMPUTE, (self.repo, self.number),
                         description=f"recompute {self.repo}#{self.number}")
        backstop = None if self.delivery is None else self.delivery.backstop_at(self.repo, self.number)
        if self.delivery is None or backstop is None:
            self.queue.enqueue_job(job, pipeline=pipe)
        else:
            # The delivery job asking runs it at once (workers/publishing/in_delivery.py); this is its backstop.
            self.queue.schedule_job(job, backstop, pipeline=pipe)
            self.delivery.note(self.queue, self.repo, self.number, job.id)
        return True


def request_recompute(rt: Runtime, repo: str, number: int) -> bool:
    """Ask for a recompute of ``repo#number``; False when one is already waiting (coalesced)."""
    request = RecomputeRequest(rt.queue, repo, number, rt.delivery)
    with rt.redis.pipeline() as pipe:
        while True:
            try:
                request.watch(pipe)
                if request.pending:
                    pipe.unwatch()
                    return False
                pipe.multi()
                request.add(pipe)
                pipe.execute()
                return True
            except WatchError:
                continue
