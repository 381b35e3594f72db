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
"""

from __future__ import annotations

import time
from typing import Any

from redis.client import Pipeline
from rq import SimpleWorker

BEAT_EVERY = 1.0
"""Seconds between two heartbeats sent on their own (those inside rq's pipelines always go)."""


class QuietSimpleWorker(SimpleWorker):
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

    def set_state(self, state: str, pipeline: Pipeline | None = None) -> None:
        if pipeline is None and state == self._written_state:
            self._state = state
            return
        super().set_state(state, pipeline=pipeline)
        self._written_state = state
