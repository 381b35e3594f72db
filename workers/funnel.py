"""The one path from "this PR may have changed" to its status on GitHub (design §4, invariants 4, 5, 7, 8).

1. **Request.** `request_recompute` (or `RecomputeRequest` inside a state write's WATCH/MULTI) sets the
   PR's ``queued`` flag and queues its recompute job in one EXEC: there is never a flag without its job,
   nor a state change without its recompute. The flag only coalesces bursts; the job clears it when it
   starts, under the PR's lock.
2. **Record.** The recompute job (`workers.publish.recompute_job`) writes the verdict record at once —
   the hook and the API never lag the pacer — and, when the head's posted status differs from it,
   adds the PR to its installation's *outbox*, ranked most-mergeable first.
3. **Write.** `drain` empties an outbox under a lease, one paced write at a time (`workers.pacing`):
   under the PR's lock it re-reads the verdict record, checks right before the POST that the lock is
   still ours and the record's version unchanged (fencing), posts, and only then records the post and
   takes the PR off the outbox. A write whose lock lapsed during the POST forgets the posted status and
   leaves the PR on the outbox, so the latest verdict is written after it. A merge group's commit is
   an outbox member too, written the same way (`workers.targets`, `workers.groups`).

Every writer of a PR's status — events, fan-outs, freeze edges, expiries, config reloads, installation
bootstrap, the scheduled reconcile — goes through here.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

from redis import Redis, WatchError
from redis.client import Pipeline
from redis.lock import Lock
from rq import Queue

from core import jobs, keys
from core.status import CONTEXT
from workers import expedite, store
from workers.locks import WorkerLock, release_lease, take_lease
from workers.pacing import Pacer, SlotTooFar, rate_limit_wait
from workers.queueing import create_job, options
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

RECOMPUTE_JOB = jobs.RECOMPUTE.address
DRAIN_JOB = jobs.OUTBOX_DRAIN.address
QUEUED_TTL = 3600
"""A backstop only: the flag and its job are written together and the job deletes the flag."""
LOCK_TIMEOUT = 60
LEASE_SECONDS = 15
"""A drain whose worker died keeps the outbox for at most this long."""
SLICE_SECONDS = 20.0
"""Writes made by one drain before it hands on to a fresh job; it hands on sooner when other jobs wait
(deliveries, a lift's fan-out), after one write at least."""
RANK_SPAN = 10**13
"""Outbox score = mergeability rank x RANK_SPAN + milliseconds since the epoch: rank first, then age."""



# --- 1. request ------------------------------------------------------------------------------------


class RecomputeRequest:
    """A recompute asked for inside a caller's optimistic transaction: `watch` before ``MULTI``, `add`
    after it; the flag and the job land with the caller's EXEC or not at all."""

    def __init__(self, queue: Queue, repo: str, number: int) -> None:
        self.queue, self.repo, self.number = queue, repo, number
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
        backstop = expedite.backstop_at(self.repo, self.number)
        if backstop is None:
            self.queue.enqueue_job(job, pipeline=pipe)
        else:
            # The delivery job asking runs it at once (workers/expedite.py); this job is its backstop.
            self.queue.schedule_job(job, backstop, pipeline=pipe)
            expedite.note(self.queue, self.repo, self.number, job.id)
        return True


def request_recompute(rt: Runtime, repo: str, number: int) -> bool:
    """Ask for a recompute of ``repo#number``; False when one is already waiting (coalesced)."""
    request = RecomputeRequest(rt.queue, repo, number)
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


# --- 2. the outbox ---------------------------------------------------------------------------------


def bucket_of(redis: Redis, repo: str) -> str:
    """The pacer bucket (and outbox) of a repo: its GitHub installation's."""
    meta = store.load_repo(redis, repo)
    return bucket_for(meta) if meta is not None else "global"


def bucket_for(meta: store.RepoMeta) -> str:
    return f"inst-{meta.installation_id}"


def wanted_status(record: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The head SHA and status body a verdict record asks for; None when there is nothing to post."""
    if record is None or not record.get("head_sha"):
        return None
    status = {"state": record["state"], "description": record["description"], "context": CONTEXT}
    if record.get("target_url"):
        status["target_url"] = record["target_url"]
    return str(record["head_sha"]), status


def posted_form(sha: str, status: dict[str, Any]) -> bytes:
    """How a posted status is remembered (``keys.posted``): the economy check compares these bytes."""
    return json.dumps({"sha": sha, **status}, sort_keys=True).encode()


_last_ms = 0


def _stamp() -> int:
    """Milliseconds since the epoch, strictly increasing within this process: PRs added in one burst (a
    fan-out's plan) keep their order, instead of tying and sorting by name."""
    global _last_ms
    _last_ms = max(int(time.time() * 1000), _last_ms + 1)
    return _last_ms


def add_to_outbox(redis: Redis, bucket: str, repo: str, number: int, rank: int) -> None:
    """The PR's status needs writing. ``LT`` keeps its best place when it is already waiting."""
    score = rank * RANK_SPAN + _stamp()
    with redis.pipeline() as pipe:
        pipe.zadd(keys.outbox(bucket), {f"{repo}#{number}": score}, lt=True)
        pipe.sadd(keys.OUTBOXES, bucket)
        pipe.execute()


def parse_member(raw: bytes | str) -> tuple[str, int]:
    """An outbox member (``repo#N``, or a merge group's ``repo@SHA#N``) -> (its text before ``#``, N)."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    repo, _, number = text.rpartition("#")
    return repo, int(number)


# --- 3. writes -------------------------------------------------------------------------------------


class Fenced(Exception):
    """The PR's lock lapsed or its verdict moved on while we were about to write: nothing was posted."""


def pr_lock(redis: Redis, repo: str, number: int) -> Lock:
    lock: Lock = redis.lock(keys.recompute_lock(repo, number), timeout=LOCK_TIMEOUT, sleep=0.01,
                            blocking_timeout=LOCK_TIMEOUT, lock_class=WorkerLock)  # a dead worker's is broken
    return lock


def write_locked(rt: Runtime, repo: str, number: int, lock: Lock | None, *, bucket: str | None = None) -> str:
    """Under the PR's lock: post the verdict record's status unless it is the one posted. Fenced: right
    before the POST the lock must still be ours and the record's version the one we read; after it, a
    lapsed lock or a newer record forgets the posted status and leaves the PR on the outbox."""
    bucket = bucket or bucket_of(rt.redis, repo)
    member = f"{repo}#{number}"
    record = store.load_verdict(rt.redis, repo, number)
    wanted = wanted_status(record)
    if record is None or wanted is None or rt.redis.get(keys.posted(repo, number)) == posted_form(*wanted):
        rt.redis.zrem(keys.outbox(bucket), member)
        return "unchanged" if wanted else "no-head"
    version = record.get("version")

    def fresh() -> bool:
        current_record = store.load_verdict(rt.redis, repo, number)
        return (lock is None or lock.owned()) and current_record is not None \
            and current_record.get("version") == version and wanted_status(current_record) == wanted

    if not fresh():
        raise Fenced(member)
    sha, status = wanted
    rt.github.post_status(repo, sha, status)
    if not fresh():
        # Another writer may have posted a newer status before ours landed: write the latest again.
        rt.redis.delete(keys.posted(repo, number))
        log.warning("status write on %s fenced after the POST; the latest verdict is written again", member)
        raise Fenced(member)
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.posted(repo, number), posted_form(sha, status))
        pipe.zrem(keys.outbox(bucket), member)
        pipe.execute()
    store.audit(rt.redis, repo, "status.posted", number=number, sha=sha, state=status["state"],
                description=status["description"], version=version)
    return "posted"


def write_now(rt: Runtime, repo: str, number: int, lock: Lock, *, bucket: str | None = None) -> str | None:
    """Under the PR's lock, right after its verdict was recorded: write it at once when the pacer has a
    slot free *now* (an isolated change, or a burst within the pacer's allowance); None, with nothing
    taken, when it has none — the PR then waits on the outbox for the drain, most-mergeable first.
    Writing at once skips the outbox's lease, so the workers write in parallel while slots are free;
    once the pacer binds, every write goes through the one drain again."""
    bucket = bucket or bucket_of(rt.redis, repo)
    pacer = Pacer.of(rt.redis, rt.settings, bucket)
    if pacer.reserve(0) is None:
        return None
    try:
        return write_locked(rt, repo, number, lock, bucket=bucket)
    except Fenced:
        return None  # still on the outbox: the drain writes the latest verdict
    except Exception as exc:
        wait = rate_limit_wait(exc)
        if wait is None:
            raise  # GitHub's trouble: the caller's job fails and retries; the PR stays on the outbox
        log.warning("rate limited writing %s#%s: writes paused %.0fs", repo, number, pacer.pause(wait))
        return None


def pr_needs_write(redis: Redis, repo: str, number: int) -> bool:
    """Whether the PR's wanted status differs from the one last posted (`workers.targets` asks)."""
    wanted = wanted_status(store.load_verdict(redis, repo, number))
    return wanted is not None and redis.get(keys.posted(repo, number)) != posted_form(*wanted)


def _take(redis: Redis, bucket: str, token: str) -> bool:
    return take_lease(redis, keys.outbox_lease(bucket), token, LEASE_SECONDS)


def drain(rt: Runtime, bucket: str, *, slice_seconds: float | None = SLICE_SECONDS,
          token: str | None = None) -> dict[str, int]:
    """Write the outbox's statuses, most-mergeable first, at the pacer's rate. Returns counts. One drain
    per outbox at a time (a lease); a slice used up hands on to a fresh `drain_job`, and a pause (rate
    limit) keeps the lease for a drain scheduled at the next free slot, under the same token."""
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
                first = redis.zrange(keys.outbox(bucket), 0, 0)
                if not first:
                    break
                if end is not None and (time.monotonic() >= end or (counts["checked"] and rt.queue.count)):
                    # The slice is used up, or other jobs wait (a lift's fan-out, deliveries): they go
                    # first, and our continuation after them goes on where we stop. It keeps the lease
                    # (one waiting drain, not one per recompute that finds the outbox full); should it
                    # wait longer than the lease, the watchdog's drain takes over.
                    redis.set(keys.outbox_lease(bucket), token, ex=LEASE_SECONDS)
                    enqueue_drain(rt, bucket, token=token)
                    keep, counts["continued"] = True, 1
                    return counts
                raw = first[0]
                outcome = _write_one(rt, pacer, bucket, raw.decode() if isinstance(raw, bytes) else str(raw), end)
                counts["checked"] += 1
                if isinstance(outcome, float):
                    # The next slot is past our slice: keep the lease until then, for the drain due then.
                    redis.set(keys.outbox_lease(bucket), token, ex=int(outcome) + LEASE_SECONDS)
                    enqueue_drain(rt, bucket, delay=outcome, token=token)
                    keep, counts["later"] = True, 1
                    return counts
                if outcome == "posted":
                    counts["posted"] += 1
                _take(redis, bucket, token)
        finally:
            if not keep:
                release_lease(redis, keys.outbox_lease(bucket), token)
        # A PR added after our last look but before the release found the lease taken: ours again.
        if not redis.zcard(keys.outbox(bucket)):
            return counts


def _write_one(rt: Runtime, pacer: Pacer, bucket: str, member: str, end: float | None) -> str | float:
    """One write off the outbox: its outcome, or the seconds until the next slot when that is too far."""
    from workers.targets import Target, refused, skip  # a leaf below this module (it imports the writes)

    target = Target(rt, bucket, member)
    paid = False
    if target.needs_write():
        left = None if end is None else max(end - time.monotonic(), 0.0)
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


def enqueue_drain(rt: Runtime, bucket: str, *, delay: float = 0.0, token: str | None = None) -> None:
    kwargs: dict[str, Any] = {**options(jobs.OUTBOX_DRAIN), "description": f"drain outbox {bucket}"}
    if delay > 0:
        from datetime import timedelta

        rt.queue.enqueue_in(timedelta(seconds=delay), DRAIN_JOB, bucket, token, **kwargs)
    else:
        rt.queue.enqueue(DRAIN_JOB, bucket, token, **kwargs)


def drain_job(bucket: str, token: str | None = None) -> str:
    """The rq job. Without a token of its own (a fresh drain) its job id is its token: rq's retry of a
    job whose work-horse died carries the same id and takes the dead run's lease over at once."""
    if token is None:
        from rq import get_current_job

        job = get_current_job()
        token = job.id if job is not None else None
    counts = drain(current(), bucket, token=token)
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def stranded_outboxes(redis: Redis) -> list[str]:
    """Outboxes with writes waiting and nobody draining them (their drain's worker died)."""
    found = []
    for raw in redis.smembers(keys.OUTBOXES):
        bucket = raw.decode() if isinstance(raw, bytes) else str(raw)
        if redis.zcard(keys.outbox(bucket)) and not redis.exists(keys.outbox_lease(bucket)):
            found.append(bucket)
    return found
