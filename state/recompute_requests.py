"""Step 6 of a delivery's path (docs/architecture.md): a PR's recompute asked for in the same EXEC as its
state change (design §4, invariants 4, 5).

`RecomputeRequest` is data the state write carries (`state.store.update_pull`): inside the write's
WATCH/MULTI it sets the PR's ``queued`` flag and queues its recompute job, so there is never a flag
without its job, nor a state change without its recompute. The flag only coalesces bursts; the job
clears it when it starts, under the PR's lock. Asked for inside a delivery, the job is a *backstop*
scheduled ``backstop_at`` instead of queued, and the delivery runs the recompute itself
(`workers.publishing.in_delivery`); ``job_id`` then names the job it cancels once that is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from redis.client import Pipeline
from rq import Queue

from core import jobs, keys
from state.queueing import create_job

QUEUED_TTL = 3600
"""A backstop only: the flag and its job are written together and the job deletes the flag."""


@dataclass
class RecomputeRequest:
    """`watch` before ``MULTI``, `add` after it: the flag and the job land with the caller's EXEC or not
    at all. ``backstop_at``: schedule the job then instead of queueing it (a delivery runs it in place)."""

    queue: Queue
    repo: str
    number: int
    backstop_at: datetime | None = None
    pending: bool = False
    """A recompute was already waiting when watched: this one adds nothing (coalesced)."""
    job_id: str | None = None
    """The job added in the latest transaction; None until `add` (and again at each `watch`, so after
    the caller's EXEC it names a job that committed, or nothing)."""

    @property
    def flag(self) -> str:
        return keys.recompute_queued(self.repo, self.number)

    def watch(self, pipe: Pipeline) -> None:
        pipe.watch(self.flag)  # type: ignore[no-untyped-call]
        self.pending = bool(pipe.exists(self.flag))
        self.job_id = None

    def add(self, pipe: Pipeline) -> bool:
        """Queue the job in ``pipe`` (in MULTI); False when one is already waiting (coalesced)."""
        if self.pending:
            return False
        pipe.set(self.flag, "1", ex=QUEUED_TTL)
        job = create_job(self.queue, jobs.RECOMPUTE, (self.repo, self.number),
                         description=f"recompute {self.repo}#{self.number}")
        if self.backstop_at is None:
            self.queue.enqueue_job(job, pipeline=pipe)
        else:
            self.queue.schedule_job(job, self.backstop_at, pipeline=pipe)
        self.job_id = job.id
        return True
