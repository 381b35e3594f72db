"""Expedited recomputes: a delivery job runs the recomputes it asked for itself, at once.

Why: a recompute asked for by a delivery is an rq job at the back of the queue, behind every delivery
queued meanwhile, and each rq job costs its own bookkeeping (a dozen Redis round trips). At 50
deliveries/s on two workers that doubled the jobs and put every status behind the backlog (design §7:
delivery -> status p50 <= 100 ms; measured before: p50 seconds, half the flips never posted in time).

Nothing of the funnel's safety is given up (design §4 invariant 7). The queued job stays the durable
request: it was written in the same EXEC as the state change. The delivery job runs the same recompute
in-process and only *after* it has finished withdraws the queued job — removed from the queue and its
hash deleted in one Lua call, and only if no worker has taken it yet. So:

- a worker killed at any point before the withdrawal leaves the queued job to run as before;
- a recompute that fails in-process (GitHub or Redis trouble) is logged and leaves the queued job, which
  runs with its own retries;
- a job another worker has already taken runs once more, under the PR's lock, and finds nothing to do;
- a PR whose lock is busy (another worker writing it) is left to its queued job rather than waited for.

At most `MAX_INLINE` PRs per delivery: a repo-wide event (a config push, an installation) keeps its many
recomputes queued, where both workers share them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from rq import Queue
from rq.timeouts import BaseTimeoutException

from workers.runtime import Runtime

log = logging.getLogger(__name__)

MAX_INLINE = 4
"""Recomputes one delivery runs itself; more stay queued (shared by every worker)."""
LOCK_WAIT = 0.5
"""How long an expedited recompute waits for the PR's lock before it leaves the work to its job."""


@dataclass(frozen=True)
class Asked:
    queue: str
    repo: str
    number: int
    job_id: str


_asked: ContextVar[list[Asked] | None] = ContextVar("merge_hold_expedite", default=None)

_WITHDRAW = """
if redis.call('LREM', KEYS[1], 0, ARGV[1]) > 0 then
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
"""
"""Take job ARGV[1] off queue KEYS[1] and delete its hash KEYS[2] — only if it was still waiting there."""


@contextmanager
def collecting() -> Iterator[list[Asked]]:
    """Note every recompute job queued inside the block (by this thread of control)."""
    asked: list[Asked] = []
    token = _asked.set(asked)
    try:
        yield asked
    finally:
        _asked.reset(token)


def note(queue: Queue, repo: str, number: int, job_id: str) -> None:
    """A recompute job was added to a transaction (called by the funnel). It may not commit (a WATCH
    conflict retries with a new job): then there is nothing to withdraw and the recompute is merely
    one more, which is harmless."""
    asked = _asked.get()
    if asked is not None:
        asked.append(Asked(queue.name, repo, number, job_id))


def withdraw(queue: Queue, job_id: str) -> bool:
    """Remove a still-waiting job from ``queue`` and delete it; False when a worker took it already."""
    from rq.job import Job

    script = queue.connection.register_script(_WITHDRAW)
    return bool(script(keys=[queue.key, Job.key_for(job_id)], args=[job_id]))


def run(rt: Runtime, asked: list[Asked]) -> int:
    """Run the recomputes in ``asked`` here and withdraw their queued jobs; returns how many ran."""
    from workers.publish import recompute

    done = 0
    tried: set[tuple[str, int]] = set()
    covered: set[tuple[str, int]] = set()
    for item in asked:
        if item.queue != rt.queue.name:
            continue
        pr = (item.repo.lower(), item.number)
        if pr in covered:
            # Asked twice in one delivery: the run after the handler covered both requests.
            withdraw(rt.queue, item.job_id)
            continue
        if pr in tried or len(tried) >= MAX_INLINE:
            continue
        tried.add(pr)
        try:
            outcome = recompute(rt, item.repo, item.number, lock_wait=LOCK_WAIT)
        except BaseTimeoutException:
            raise  # the delivery job's own timeout: rq handles it
        except Exception as exc:  # the queued job does the work, with its retries
            log.warning("expedited recompute of %s#%s failed (%s); its job runs it", item.repo, item.number, exc)
            continue
        if outcome is None:
            continue  # the PR's lock is busy: its queued job waits for it
        covered.add(pr)
        withdraw(rt.queue, item.job_id)
        done += 1
    return done
