"""Read your writes: after a hold or a lift made on a page, the redirect waits — briefly, and at most
`WAIT_S` — until the PR's verdict includes it, so the page that follows shows the state after the act.
When it does not land in time the page says it is pending, and the live refresh (`static/live.js`)
shows it when it lands.

A dashboard hold or lift is a job (`core.comment_rules.DASHBOARD_JOB`): it has landed when the job has
finished and the verdict was computed from the state it left (``state_version``); a room hold's lift
is recorded at once and republished by a job, and has landed when the verdict no longer names it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from redis import Redis
from rq import Queue, Worker
from rq.exceptions import InvalidJobOperation
from rq.job import Job, JobStatus

from state import posted_status, store, verdicts

WAIT_S = 2.5
"""Long enough for a worker that is not behind (a delivery's recompute takes tens of milliseconds); short
enough that a busy one costs the person a short wait, not a hung page."""
STEP_S = 0.05


def _until(check: Callable[[], bool | None], timeout: float) -> bool:
    """Poll ``check`` until it is True (landed), None (failed: stop) or time is up."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found is not False:
            return bool(found)
        if time.monotonic() >= deadline:
            return False
        time.sleep(STEP_S)


def verdict_current(redis: Redis, repo: str, number: int) -> bool:
    """The PR's verdict was computed from its latest state, and its status is the one on GitHub (posted,
    or recorded in a dry run): the page then shows one state, not a verdict ahead of its status."""
    record = verdicts.load(redis, repo, number)
    if record is None or int(record.get("state_version") or 0) < store.state_version(redis, repo, number):
        return False
    return posted_status.shows(posted_status.on_pr(redis, repo, number), record)


def workers_listening(redis: Redis, queue: Queue) -> bool:
    """Whether any worker serves ``queue``: with none (stopped, or a test of the page alone) waiting is in
    vain, and the page says pending at once."""
    return Worker.count(connection=redis, queue=queue) > 0


def job_landed(redis: Redis, job: Job, repo: str, number: int, timeout: float = WAIT_S) -> bool:
    """The dashboard job ran and the PR's verdict includes what it did."""
    if job.origin and not workers_listening(redis, Queue(job.origin, connection=redis)):
        return False

    def check() -> bool | None:
        try:
            status = job.get_status(refresh=True)
        except InvalidJobOperation:  # its record is gone: a job kept no result once it finished
            status = JobStatus.FINISHED
        if status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
            return None
        return status == JobStatus.FINISHED and verdict_current(redis, repo, number)

    return _until(check, timeout)


def hold_gone(redis: Redis, queue: Queue, repo: str, number: int, hold_id: str, timeout: float = WAIT_S) -> bool:
    """The PR's verdict no longer names the hold (a room hold's lift, republished by a job on ``queue``)."""

    def gone(record: dict[str, Any] | None) -> bool:
        return not any(isinstance(h, dict) and h.get("id") == hold_id for h in (record or {}).get("holds") or [])

    if not workers_listening(redis, queue):
        return gone(verdicts.load(redis, repo, number)) and verdict_current(redis, repo, number)
    return _until(lambda: gone(verdicts.load(redis, repo, number)) and verdict_current(redis, repo, number), timeout)
