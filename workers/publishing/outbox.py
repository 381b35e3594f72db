"""Step 9 of a delivery's path (docs/architecture.md): a PR whose head's posted status differs from its
verdict waits on its installation's outbox, ranked most-mergeable first (the member grammar is
`core.outbox`), until the write at once (step 8) or the drain takes it off; a PR's freeze mark waits
there too (an exemption's with the most urgent statuses, one for people after every status:
`workers.publishing.freeze_marks`), and so does its check run (after every status:
`workers.publishing.check_runs`). `enqueue_drain` asks for the outbox's one drain.

The imports, one way (each module imports only the ones before it): outbox ← request (`request.py`) ←
the one fenced write (`write.py`) ← the drain (`drain.py`) ← the recompute (`recompute.py`) ← events
and fan-outs. Every writer of a PR's status goes through it.
"""

from __future__ import annotations

import time

from redis import Redis

from core import jobs, keys
from core.outbox import GLOBAL_BUCKET, bucket, pr_member
from state import store
from state.decoding import as_text
from state.queueing import enqueue_after
from workers.runtime import Runtime

RANK_SPAN = 10**13
"""Outbox score = mergeability rank x RANK_SPAN + milliseconds since the epoch: rank first, then age."""
URGENT_MARK = -1
"""Outbox rank of a freeze mark that changes what may merge (an exemption's success, which someone waits on;
a failure over an earlier one, which GitHub would otherwise let through): with the exposed statuses, ahead
of the rest. It is written at the statuses' priority and is rare (one per exemption), so it delays few; behind
a fan-out's hundreds of statuses it would wait the hour they take."""
RUN_ANSWER = 4
"""Outbox rank of a check run answering a click on its buttons (`workers.publishing.check_runs`): someone
waits on the Checks tab for it, so it goes first of the writes for people to read."""
PEOPLE_MARK = 5
"""Outbox rank of a freeze mark for people to read (the freeze's reason, what the merge box shows against
the required context). Rank 4 before check runs joined the outbox: one stored then ties with answers."""
RUN_OWN = 6
"""Outbox rank of the check run of a PR held by holds of its own (or freed from them: its `success`)."""
RUN_FREEZE_ONLY = 7
"""Outbox rank of the check run of a PR held only by a freeze: last."""
URGENT_CEILING = RUN_ANSWER * RANK_SPAN
"""Scores below this are writes that change what may merge: statuses and urgent marks (a status's
score, shifted by at most `FRONT_MS`, stays within its rank's span); at and above it, writes for people
to read (marks for people, check runs), at the pacer's lowest priority. The same score as before check
runs joined the outbox (then ``PEOPLE_MARK * RANK_SPAN``): a stored member keeps its side of it."""


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


def urgent_waiting(redis: Redis, bucket_name: str) -> bool:
    """A status or an urgent mark waits on the outbox (not only marks for people to read and check runs)."""
    return bool(redis.zcount(keys.outbox(bucket_name), "-inf", f"({URGENT_CEILING}"))


QUEUED_TTL = 24 * 3600
"""A backstop only: the waiting-drain marker goes when its job starts."""


def held_for_mark(redis: Redis, bucket_name: str) -> bool:
    """The outbox's lease is held by a drain that only waits for a freeze mark's or a check run's slot
    (`core.keys.outbox_mark_wait`)."""
    holder, waiting = redis.mget([keys.outbox_lease(bucket_name), keys.outbox_mark_wait(bucket_name)])
    return holder is not None and holder == waiting


def enqueue_drain(rt: Runtime, bucket_name: str, *, delay: float = 0.0, token: str | None = None) -> bool:
    """Queue a drain of ``bucket_name`` on its installation's bulk queue. A fresh drain (no ``token``) is
    queued only when none waits and no drain holds the lease: the holder looks at the outbox again
    before it lets go (call this after adding to the outbox), so a second job would only find the
    lease taken — unless the holder only waits for a mark's or a run's slot and a status (or an urgent mark) came:
    the fresh drain takes the lease over (`workers.publishing.drain`). A run's own continuation (its
    ``token``) is always queued. False: not queued."""
    redis = rt.redis
    if token is None:
        if redis.exists(keys.outbox_lease(bucket_name)) and not (
                held_for_mark(redis, bucket_name) and urgent_waiting(redis, bucket_name)):
            return False
        if not redis.set(keys.outbox_drain_queued(bucket_name), "1", nx=True, ex=QUEUED_TTL):
            return False
    enqueue_after(rt.bulk(bucket_name), jobs.OUTBOX_DRAIN, bucket_name, token, delay=delay,
                  description=f"drain outbox {bucket_name}")
    return True


def stranded_outboxes(redis: Redis) -> list[str]:
    """Outboxes with writes waiting and nobody draining them (their drain's worker died)."""
    found = []
    for raw in redis.smembers(keys.OUTBOXES):
        name = as_text(raw)
        if redis.zcard(keys.outbox(name)) and not redis.exists(keys.outbox_lease(name)):
            found.append(name)
    return found
