"""PR locks that say which worker holds them, so that a dead worker's locks can be broken at once.

A PR's recompute lock (``keys.recompute_lock``, `pr_lock`) times out after `LOCK_TIMEOUT` (60 s):
long enough for a slow publish. A SIGKILLed worker's lock would keep its rescued job, and every other
recompute of that PR, waiting out those 60 s. So the lock's token is ``{worker name}/{random}`` and the
watchdog, once a worker has missed its heartbeats (`workers.ops.watchdog.ALIVE_TTL`), deletes the locks
whose token names it (`break_locks_of`). Should the worker be alive after all (stalled, cut off from
Redis), fencing stops it: `workers.publishing.write.write_locked` checks `Lock.owned()` right before its POST.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from redis import Redis
from redis.lock import Lock
from rq import get_current_job

from core import keys

_TAKE_LEASE = """
local v = redis.call('GET', KEYS[1])
if (not v) or v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
return 0
"""
_RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_BREAK = """
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


LOCK_TIMEOUT = 60
"""Seconds a PR's lock lasts, and how long a recompute job waits for it."""


def owner_token() -> str:
    """``{worker}/{random}`` inside an rq job; ``-/{random}`` elsewhere (the CLI: never broken)."""
    job = get_current_job()
    owner = job.worker_name if job is not None and job.worker_name else "-"
    return f"{owner}/{uuid.uuid4().hex}"


class WorkerLock(Lock):
    """A redis-py `Lock` whose default token names the rq worker taking it."""

    def acquire(self, sleep: float | None = None, blocking: bool | None = None,
                blocking_timeout: float | None = None, token: str | None = None) -> bool:
        return bool(super().acquire(sleep=sleep, blocking=blocking, blocking_timeout=blocking_timeout,
                                    token=token if token is not None else owner_token()))


def pr_lock(redis: Redis, repo: str, number: int) -> Lock:
    """The PR's lock (recording its verdict, writing its status), not taken yet."""
    lock: Lock = redis.lock(keys.recompute_lock(repo, number), timeout=LOCK_TIMEOUT, sleep=0.01,
                            blocking_timeout=LOCK_TIMEOUT, lock_class=WorkerLock)  # a dead worker's is broken
    return lock


def take_pr_lock(redis: Redis, repo: str, number: int, wait: float) -> Lock | None:
    """The PR's lock, taken within ``wait`` seconds; None when it stayed busy."""
    lock = pr_lock(redis, repo, number)
    return lock if lock.acquire(blocking_timeout=wait) else None


def break_locks_of(redis: Redis, workers: Iterable[str]) -> int:
    """Delete every PR lock held by one of ``workers`` (dead ones); returns how many went. One SCAN over
    the lock keys, only when a worker has died."""
    prefixes = [f"{name}/" for name in workers]
    if not prefixes:
        return 0
    script = redis.register_script(_BREAK)
    broken = 0
    for raw in redis.scan_iter(match=keys.recompute_lock_pattern(), count=1000):
        value = redis.get(raw)
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value or "")
        for prefix in prefixes:
            if text.startswith(prefix):
                broken += int(script(keys=[raw], args=[prefix]))
                break
    return broken


def take_lease(redis: Redis, key: str, token: str, seconds: int) -> bool:
    """Take the lease at ``key`` for ``token`` (or renew it when ``token`` holds it already) for
    ``seconds``; False when another holder has it. One job at a time per outbox or fan-out."""
    return bool(redis.register_script(_TAKE_LEASE)([key], [token, seconds]))


def release_lease(redis: Redis, key: str, token: str) -> None:
    """Give the lease up, only if ``token`` still holds it (a lapsed lease may be another's now)."""
    redis.register_script(_RELEASE_LEASE)([key], [token])
