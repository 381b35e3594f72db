"""The rq worker class of `merge-hold worker`: rq's `SimpleWorker` (jobs in-process) with less chatter.

Jobs run in the worker process (no fork per job), so the GitHub connection pool, the installation token
and the parsed App key live across jobs; rq's job timeout still applies (SIGALRM in this process), and a
worker that dies mid-job has its job rescued by the others' watchdogs (`workers.ops.watchdog`).

rq refreshes the worker's key around every job: about five heartbeats of three round trips each, plus a
state write, per job. At 25 jobs a second per worker on a busy host those round trips cost as much as
the jobs themselves (design §7: delivery -> status at 50 deliveries/s). Here a heartbeat outside a
pipeline is sent at most once per `BEAT_EVERY` seconds (in one pipeline) unless it extends the key's
TTL, and an unchanged state is not written again. The worker key's TTL stays far above that interval
(`workers.ops.cli.WORKER_TTL`), and nothing in merge-hold reads rq's worker state: liveness is the
watchdog's own key.

rq's registration must outlive a job, though: a SimpleWorker sends no heartbeat while a job runs, and
rq's key TTL covers only 90 s of it, so a worker busy with a long job (a reconcile, a fan-out) vanished
from rq's view and failed `merge-hold worker --healthcheck`. Here it lasts the job's timeout plus a
minute (the job is stopped at its timeout).

A failed job is one log line with its cause (`FailureLines`); its traceback is logged once, when the job
fails for good, and at DEBUG on every try. rq logged the whole chained traceback (60 lines through
urllib3, requests and PyGithub) at every retry of a GitHub 5xx.
"""

from __future__ import annotations

import logging
import time
from types import TracebackType
from typing import Any

from redis.client import Pipeline
from rq import SimpleWorker, Worker
from rq.job import Job
from rq.job_lifecycle import call_exception_handlers, format_exc_info

log = logging.getLogger("workers.jobs")

BEAT_EVERY = 1.0
"""Seconds between two heartbeats sent on their own (those inside rq's pipelines always go)."""


CAUSE_CHARS = 300
"""A cause longer than this is cut: the line is for reading, the traceback has the rest."""


def cause(exc: BaseException | None) -> str:
    """``Type: message`` of an exception and of the root of its chain, on one line."""
    if exc is None:
        return "unknown error"
    seen, root = {id(exc)}, exc
    while (inner := root.__cause__ or root.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        root = inner

    def one(e: BaseException) -> str:
        text = " ".join(str(e).split())
        return f"{type(e).__name__}: {text}" if text else type(e).__name__

    line = one(exc) if root is exc else f"{one(exc)} (caused by {one(root)})"
    return line if len(line) <= CAUSE_CHARS else line[:CAUSE_CHARS - 1] + "…"


class FailureLines:
    """rq's `handle_exception`, with one line per failed try instead of a traceback each time."""

    name: str
    _exc_handlers: list[Any]
    _stopped_job_id: str | None

    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        kind: type[BaseException] | None
        value: BaseException | None
        trace: TracebackType | None
        kind, value, trace = exc_info
        try:
            func = job.func_name
        except Exception:  # an undeserialisable job: rq guards the same way
            func = "<undeserialisable>"
        will_retry = bool(job.should_retry) and self._stopped_job_id != job.id
        if will_retry:
            assert job.retries_left is not None
            left = job.retries_left - 1
            log.warning("job %s (%s) failed: %s; retrying in %ss (then %d more %s)", job.id, func, cause(value),
                        job.get_retry_interval(), left, "retry" if left == 1 else "retries")
            log.debug("job %s traceback:\n%s", job.id, format_exc_info((kind, value, trace)))
        else:
            log.error("job %s (%s) failed: %s; no retry left, kept in the failed registry\n%s", job.id, func,
                      cause(value), format_exc_info((kind, value, trace)))
        call_exception_handlers(self._exc_handlers, job, *exc_info)


class QuietForkWorker(FailureLines, Worker):
    """`merge-hold worker --fork`: rq's forking worker, with the same failure lines."""


class QuietSimpleWorker(FailureLines, SimpleWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._beat_at = 0.0
        self._beat_ttl = 0
        self._written_state: str | None = None

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        if pipeline is not None:
            super().heartbeat(timeout, pipeline=pipeline)
            return
        ttl = timeout or self.worker_ttl + 60
        clock = time.monotonic()
        # Within the interval and not extending the TTL: the key's expiry is already far enough away.
        if clock - self._beat_at < BEAT_EVERY and ttl <= self._beat_ttl:
            return
        with self.connection.pipeline(transaction=False) as pipe:
            super().heartbeat(ttl, pipeline=pipe)
            pipe.execute()
        self._beat_at, self._beat_ttl = clock, ttl

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        """No heartbeat comes while a job runs in this process: the key lasts until the job's timeout."""
        timeout = job.timeout if job.timeout and job.timeout > 0 else self.queue_class.DEFAULT_TIMEOUT
        return int(max(timeout - working_time, 0)) + 60

    def set_state(self, state: str, pipeline: Pipeline | None = None) -> None:
        if pipeline is None and state == self._written_state:
            self._state = state
            return
        super().set_state(state, pipeline=pipeline)
        self._written_state = state
