"""Step 9 of a delivery's path (docs/architecture.md): an outbox drained, one paced write at a time
(`workers.publishing.pacing`), when the write at once (step 8) found no slot free.

One drain per outbox at a time holds its lease; it writes most-mergeable first — statuses through the
one fenced write (`workers.publishing.write`), freeze marks through theirs
(`workers.publishing.freeze_marks`), check runs through theirs (`workers.publishing.check_runs`), each at
the priority it needs — hands on to a fresh job when its slice is used up or other jobs wait, and keeps
the lease across a pause (a rate limit, or the next slot too far) for the drain scheduled then. A pause
for a mark's or a run's slot (the pacer's lowest priority may be an hour away) holds nothing back: a
status arriving meanwhile takes the lease over (`_TAKE`).
"""

from __future__ import annotations

import logging
import time
import uuid

from redis import Redis

from core import keys
from core.outbox import parse_member
from state.decoding import as_text
from workers.publishing import check_runs, freeze_marks
from workers.publishing.locks import release_lease
from workers.publishing.outbox import URGENT_CEILING, enqueue_drain, urgent_waiting
from workers.publishing.pacing import Pacer, SlotTooFar, rate_limit_wait
from workers.publishing.write import Fenced, Target, refused, skip
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

LEASE_SECONDS = 15
"""A drain whose worker died keeps the outbox for at most this long."""
SLICE_SECONDS = 20.0
"""Writes made by one drain before it hands on to a fresh job; it hands on sooner when other jobs wait
(deliveries, a lift's fan-out), after one write at least."""

_TAKE = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
  if holder ~= redis.call('GET', KEYS[2]) or redis.call('ZCOUNT', KEYS[3], '-inf', ARGV[3]) == 0 then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1
"""
"""Take (or renew) the lease (KEYS[1]) for ARGV[1]; or take it over from a holder that only waits for a
mark's or a run's slot (KEYS[2], `core.keys.outbox_mark_wait`) when a status or an urgent mark waits (a
score below ARGV[3]). Whoever holds the lease now waits for no mark and no run."""


def _take(redis: Redis, bucket: str, token: str) -> bool:
    script = redis.register_script(_TAKE)
    return bool(script([keys.outbox_lease(bucket), keys.outbox_mark_wait(bucket), keys.outbox(bucket)],
                       [token, LEASE_SECONDS, f"({URGENT_CEILING}"]))


def drain(rt: Runtime, bucket: str, *, slice_seconds: float | None = SLICE_SECONDS,
          token: str | None = None, writes_for_people: bool = False) -> dict[str, int]:
    """Write the outbox's statuses, most-mergeable first, at the pacer's rate, then — with
    ``writes_for_people``, as the drain job does — its freeze marks for people and check runs. Returns
    counts. One drain per outbox at a time (a lease); a slice used up hands on to a fresh `drain_job`, and
    a pause (rate limit) keeps the lease for a drain scheduled at the next free slot, under the same token.
    A drain run in place (a recompute, a delivery, the reconcile: without ``writes_for_people``) writes
    what changes what may merge (statuses, urgent marks) and stops at the first write for people, asking
    for the drain job: a delivery's worker never waits for a description's slot."""
    redis = rt.redis
    pacer = Pacer.of(redis, rt.settings, bucket)
    token = token or uuid.uuid4().hex
    end = None if slice_seconds is None else time.monotonic() + slice_seconds
    counts = {"posted": 0, "checked": 0}
    while True:
        if not _take(redis, bucket, token):
            counts["busy"] = 1
            return counts  # the lease holder looks again before it lets go
        keep = False
        try:
            while True:
                first = redis.zrange(keys.outbox(bucket), 0, 0, withscores=True)
                if not first:
                    break
                member, score = as_text(first[0][0]), float(first[0][1])
                if not writes_for_people and score >= URGENT_CEILING:
                    # All that changes what may merge is out: the rest is the drain job's. Looked at before
                    # handing on, so a drain run in place that wrote its status lets the outbox go rather
                    # than keep it for a continuation while the next deliveries' statuses pile up behind.
                    counts["marks_left"] = 1
                    break
                if end is not None and (time.monotonic() >= end or (counts["checked"] and (
                        rt.interactive_waiting() or rt.bulk_waiting(bucket)))):
                    # The slice is used up, or other jobs wait (a lift's fan-out, deliveries): they go
                    # first, and our continuation after them goes on where we stop. It keeps the lease
                    # (one waiting drain, not one per recompute that finds the outbox full); should it
                    # wait longer than the lease, the watchdog's drain takes over.
                    redis.set(keys.outbox_lease(bucket), token, ex=LEASE_SECONDS)
                    enqueue_drain(rt, bucket, token=token)
                    keep, counts["continued"] = True, 1
                    return counts
                outcome = _write_one(rt, pacer, bucket, member, end)
                counts["checked"] += 1
                if isinstance(outcome, float):
                    # The next slot is past our slice: keep the lease until then, for the drain due then.
                    # Waiting for a mark's or a run's slot, say so: a status arriving meanwhile takes the lease
                    # over (`_TAKE`; `enqueue_drain` queues the drain that does), so this wait holds none back.
                    with redis.pipeline() as pipe:
                        pipe.set(keys.outbox_lease(bucket), token, ex=int(outcome) + LEASE_SECONDS)
                        if not parse_member(member).status:
                            pipe.set(keys.outbox_mark_wait(bucket), token, ex=int(outcome) + LEASE_SECONDS)
                        pipe.execute()
                    enqueue_drain(rt, bucket, delay=outcome, token=token)
                    keep, counts["later"] = True, 1
                    return counts
                if outcome == "posted":
                    counts["posted"] += 1
                if not _take(redis, bucket, token):
                    counts["busy"] = 1
                    return counts  # the lease lapsed during the write: another drain has the outbox
        finally:
            if not keep:
                release_lease(redis, keys.outbox_lease(bucket), token)
        if counts.get("marks_left") and not urgent_waiting(redis, bucket):
            enqueue_drain(rt, bucket)  # the lease is free now: the drain job takes the marks
            return counts
        counts.pop("marks_left", None)
        # A PR added after our last look but before the release found the lease taken: ours again.
        if not redis.zcard(keys.outbox(bucket)):
            return counts


def _write_one(rt: Runtime, pacer: Pacer, bucket: str, member: str, end: float | None) -> str | float:
    """One write off the outbox: its outcome, or the seconds until the next slot when that is too far."""
    left = None if end is None else max(end - time.monotonic(), 0.0)
    parsed = parse_member(member)
    if parsed.mark:
        return freeze_marks.write(rt, pacer, bucket, member, 0.0 if left is None else left)
    if parsed.run:
        return check_runs.write(rt, pacer, bucket, member, 0.0 if left is None else left)
    target = Target(rt, bucket, member)
    paid = False
    if target.needs_write():
        try:
            pacer.acquire(left)
        except SlotTooFar as far:
            return max(far.seconds, 0.5)
        paid = True
    lock = target.lock()
    with lock:
        if not paid and target.needs_write():
            return "retry"  # the verdict changed since we looked: take a slot first
        try:
            return target.write(lock)
        except Fenced:
            return "fenced"
        except Exception as exc:
            wait = rate_limit_wait(exc)
            if wait is None and refused(exc):
                return skip(rt, bucket, member, exc)
            if wait is None:
                raise  # GitHub's trouble: the job fails and rq retries it (the write stays on the outbox)
            log.warning("rate limited writing %s: writes paused %.0fs", member, pacer.pause(wait))
            return "rate-limited"


def drain_job(bucket: str, token: str | None = None) -> str:
    """The rq job. Without a token of its own (a fresh drain) its job id is its token: rq's retry of a
    job whose work-horse died carries the same id and takes the dead run's lease over at once."""
    if token is None:
        from rq import get_current_job

        current().redis.delete(keys.outbox_drain_queued(bucket))  # a drain asked for from now on is queued
        job = get_current_job()
        token = job.id if job is not None else None
    rt = current()
    freeze_marks.adopt_old_marks(rt, bucket)  # a release before issue 31 may have left some on their own set
    check_runs.adopt_old_runs(rt, bucket)
    counts = drain(rt, bucket, token=token, writes_for_people=True)
    return ", ".join(f"{k} {v}" for k, v in counts.items())
