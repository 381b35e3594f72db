"""Step 9 of a delivery's path (docs/architecture.md): a PR whose head's posted status differs from its
verdict waits on its installation's outbox, ranked most-mergeable first (the member grammar is
`core.outbox`), until the write at once (step 8) or the drain takes it off.

The imports, one way (each module imports only the ones before it): outbox ← request (`request.py`) ←
the one fenced write (`write.py`) ← the drain (`drain.py`) ← the recompute (`recompute.py`) ← events
and fan-outs. Every writer of a PR's status goes through it.
"""

from __future__ import annotations

import time

from redis import Redis

from core import keys
from core.outbox import GLOBAL_BUCKET, bucket, pr_member
from state import store
from state.decoding import as_text

RANK_SPAN = 10**13
"""Outbox score = mergeability rank x RANK_SPAN + milliseconds since the epoch: rank first, then age."""


def bucket_of(redis: Redis, repo: str) -> str:
    """The pacer bucket (and outbox) of a repo: its GitHub installation's."""
    meta = store.load_repo(redis, repo)
    return bucket(meta.installation_id) if meta is not None else GLOBAL_BUCKET


_last_ms = 0


def _stamp() -> int:
    """Milliseconds since the epoch, strictly increasing within this process: PRs added in one burst (a
    fan-out's plan) keep their order, instead of tying and sorting by name."""
    global _last_ms
    _last_ms = max(int(time.time() * 1000), _last_ms + 1)
    return _last_ms


FRONT_MS = 10**12
"""Shift of a write asked for by activity on its PR (a delivery, a clock's wake-up): ahead, within its
rank, of every write a fan-out or bootstrap queued (their shifts are 0 or a PR's age, below this)."""


def add(redis: Redis, bucket_name: str, member: str, rank: int, shift_ms: int = 0) -> None:
    """``member`` needs writing. ``LT`` keeps its best place when it is already waiting. ``shift_ms``
    moves it within its rank: ``-FRONT_MS`` to the front, a PR's age behind fresher PRs."""
    score = rank * RANK_SPAN + _stamp() + max(min(shift_ms, FRONT_MS - 1), -FRONT_MS)
    with redis.pipeline() as pipe:
        pipe.zadd(keys.outbox(bucket_name), {member: score}, lt=True)
        pipe.sadd(keys.OUTBOXES, bucket_name)
        pipe.execute()


def add_to_outbox(redis: Redis, bucket_name: str, repo: str, number: int, rank: int, shift_ms: int = 0) -> None:
    """The PR's status needs writing."""
    add(redis, bucket_name, pr_member(repo, number), rank, shift_ms)


def stranded_outboxes(redis: Redis) -> list[str]:
    """Outboxes with writes waiting and nobody draining them (their drain's worker died)."""
    found = []
    for raw in redis.smembers(keys.OUTBOXES):
        name = as_text(raw)
        if redis.zcard(keys.outbox(name)) and not redis.exists(keys.outbox_lease(name)):
            found.append(name)
    return found
