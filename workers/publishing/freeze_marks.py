"""The `merge-hold/freeze` status of each PR a ruleset freeze binds (``freeze_mode: ruleset``).

The ruleset blocks a PR because its head carries no `merge-hold/freeze` success; nothing per PR is
needed for the block. Two kinds of mark are written, from the verdict record's ``freeze_mark``:

- **urgent** (rank 0): an exemption's ``success``, which lets that PR's head through (every new head
  too for a sticky one) — and a ``failure`` over a ``success`` left on the head by an earlier exemption, which would
  otherwise let the PR through the new freeze;
- **for people to read** (rank 1): the freeze's reason as a ``failure``, at the pacer's lowest priority
  (`workers.publishing.pacing.LOW_PRIORITY`: never in the part of the hour kept for writes that change what may
  merge). After a thaw they are harmless: a disabled ruleset requires nothing.

Marks wait on their installation's own sorted set (`core.keys.freeze_marks`) and are written by one
job at a time per installation (a lease), which re-reads the record right before each write.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta
from typing import Any

from redis import Redis

from core import jobs, keys
from core.outbox import parse_member, pr_member
from state import store
from state.decoding import as_text
from state.queueing import options as job_options
from workers.publishing.locks import release_lease, take_lease
from workers.publishing.outbox import RANK_SPAN
from workers.publishing.pacing import LOW_PRIORITY, URGENT, Pacer, SlotTooFar, rate_limit_wait
from workers.runtime import Runtime, current

MARKS_JOB = jobs.FREEZE_MARKS.address
LEASE_SECONDS = 30
SLICE_SECONDS = 20.0


def _posted(redis: Redis, repo: str, number: int) -> dict[str, Any] | None:
    raw = redis.get(keys.posted_mark(repo, number))
    return json.loads(raw) if raw else None


def wanted(record: dict[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    if not record or not record.get("head_sha") or not record.get("freeze_mark"):
        return None
    mark = dict(record["freeze_mark"])
    if record.get("target_url"):
        mark["target_url"] = record["target_url"]
    return str(record["head_sha"]), mark


def _rank(want: tuple[str, dict[str, Any]], posted: dict[str, Any] | None) -> int | None:
    """None: already shown. 0: urgent. 1: for people to read."""
    sha, mark = want
    if posted is not None and posted.get("sha") == sha and posted.get("state") == mark["state"] \
            and posted.get("description") == mark["description"]:
        return None
    if mark["state"] == "success":
        return 0
    return 0 if posted is not None and posted.get("sha") == sha and posted.get("state") == "success" else 1


def note(rt: Runtime, bucket: str, repo: str, number: int, record: dict[str, Any] | None) -> None:
    """After a verdict record is written: queue its mark if the head does not show it yet."""
    want = wanted(record)
    member = pr_member(repo, number)
    if want is None:
        rt.redis.zrem(keys.freeze_marks(bucket), member)
        return
    rank = _rank(want, _posted(rt.redis, repo, number))
    if rank is None:
        rt.redis.zrem(keys.freeze_marks(bucket), member)
        return
    rt.redis.zadd(keys.freeze_marks(bucket), {member: rank * RANK_SPAN + int(time.time() * 1000)}, lt=True)
    if not rt.redis.exists(keys.freeze_marks_lease(bucket)):
        enqueue(rt, bucket)


def enqueue(rt: Runtime, bucket: str, *, delay: float = 0.0) -> None:
    options: dict[str, Any] = {**job_options(jobs.FREEZE_MARKS), "description": f"freeze marks {bucket}"}
    queue = rt.bulk(bucket)  # bulk work: after interactive jobs, round robin with other installations
    if delay > 0:
        queue.enqueue_in(timedelta(seconds=delay), MARKS_JOB, bucket, **options)
    else:
        queue.enqueue(MARKS_JOB, bucket, **options)


def write_marks(rt: Runtime, bucket: str, *, slice_seconds: float = SLICE_SECONDS) -> dict[str, int]:
    """Write waiting marks, urgent first, until the slice ends or the pacer's next slot is far."""
    token = uuid.uuid4().hex
    counts = {"posted": 0, "checked": 0}
    end = time.monotonic() + slice_seconds
    pacer = Pacer.of(rt.redis, rt.settings, bucket)
    queue = keys.freeze_marks(bucket)
    while True:
        if not take_lease(rt.redis, keys.freeze_marks_lease(bucket), token, LEASE_SECONDS):
            return counts
        try:
            while True:
                first = rt.redis.zrange(queue, 0, 0)
                if not first:
                    break
                if time.monotonic() >= end or (counts["checked"] and rt.interactive_waiting()):
                    enqueue(rt, bucket)  # interactive jobs waiting go first
                    return counts
                raw = first[0]
                member = as_text(raw)
                parsed = parse_member(member)
                repo, number = parsed.repo, parsed.number
                counts["checked"] += 1
                want = wanted(store.load_verdict(rt.redis, repo, number))
                rank = None if want is None else _rank(want, _posted(rt.redis, repo, number))
                if want is None or rank is None:
                    rt.redis.zrem(queue, member)
                    continue
                try:
                    pacer.acquire(max(end - time.monotonic(), 0.0), priority=URGENT if rank == 0 else LOW_PRIORITY)
                except SlotTooFar as far:
                    enqueue(rt, bucket, delay=max(far.seconds, 0.5))
                    return counts
                sha, mark = want
                try:
                    rt.github.post_status(repo, sha, mark)
                except Exception as exc:
                    wait = rate_limit_wait(exc)
                    if wait is None:
                        raise
                    enqueue(rt, bucket, delay=pacer.pause(wait))
                    return counts
                rt.redis.set(keys.posted_mark(repo, number), json.dumps({"sha": sha, **mark}), ex=30 * 86400)
                if wanted(store.load_verdict(rt.redis, repo, number)) == want:
                    rt.redis.zrem(queue, member)
                counts["posted"] += 1
                rt.redis.expire(keys.freeze_marks_lease(bucket), LEASE_SECONDS)
        finally:
            release_lease(rt.redis, keys.freeze_marks_lease(bucket), token)
        if not rt.redis.zcard(queue):
            return counts


def marks_job(bucket: str) -> str:
    counts = write_marks(current(), bucket)
    return ", ".join(f"{k} {v}" for k, v in counts.items())
