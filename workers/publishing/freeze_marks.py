"""The `merge-hold/freeze` status of each PR a ruleset freeze binds (``freeze_mode: ruleset``): a kind of
outbox member (``mark:repo#N``, `core.outbox`), written by the outbox's one drain (`workers.publishing.drain`).

The ruleset blocks a PR because its head carries no `merge-hold/freeze` success; nothing per PR is
needed for the block. Two kinds of mark are written, from the verdict record's ``freeze_mark``:

- **urgent** (`outbox.URGENT_MARK`, at the pacer's `URGENT` priority): an exemption's ``success``, which
  lets that PR's head through (every new head too for a sticky one) — and a ``failure`` over a ``success``
  left on the head by an earlier exemption, which would otherwise let the PR through the new freeze;
- **for people to read** (`outbox.PEOPLE_MARK`): the freeze's reason as a ``failure``, at the pacer's
  lowest priority (`workers.publishing.pacing.LOW_PRIORITY`: never in the part of the hour kept for writes
  that change what may merge). After a thaw they are harmless: a disabled ruleset requires nothing.

An urgent mark ranks with the most urgent statuses on the outbox (someone waits on it, and there are few);
a mark for people after every status, so it never delays one. This module is the member kind's
writer: whether a PR's head still needs its mark (`note`, after each verdict record), and the one write
(`write`, called by the drain), which re-reads the record right before the POST. Releases before issue 31
kept marks on a sorted set of their own with a job of their own (`marks_job`): that job's address still
runs, and moves what it finds there onto the outbox.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from redis import Redis

from core import keys
from core.outbox import mark_member, parse_member
from state import store
from state.decoding import as_text
from workers.publishing import outbox
from workers.publishing.outbox import PEOPLE_MARK, URGENT_MARK, enqueue_drain
from workers.publishing.pacing import LOW_PRIORITY, URGENT, Pacer, SlotTooFar, rate_limit_wait
from workers.publishing.write import refused
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

POSTED_TTL = 30 * 86400


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
    """None: already shown. `URGENT_MARK` or `PEOPLE_MARK`: its outbox rank."""
    sha, mark = want
    if posted is not None and posted.get("sha") == sha and posted.get("state") == mark["state"] \
            and posted.get("description") == mark["description"]:
        return None
    if mark["state"] == "success":
        return URGENT_MARK
    shows_success = posted is not None and posted.get("sha") == sha and posted.get("state") == "success"
    return URGENT_MARK if shows_success else PEOPLE_MARK


def note(rt: Runtime, bucket: str, repo: str, number: int, record: dict[str, Any] | None) -> None:
    """After a verdict record is written: put its mark on the outbox (and ask for a drain) if the head
    does not show it yet, else take it off."""
    want = wanted(record)
    member = mark_member(repo, number)
    rank = None if want is None else _rank(want, _posted(rt.redis, repo, number))
    if rank is None:
        rt.redis.zrem(keys.outbox(bucket), member)
        return
    outbox.add(rt.redis, bucket, member, rank)
    enqueue_drain(rt, bucket)


def write(rt: Runtime, pacer: Pacer, bucket: str, member: str, max_wait: float) -> str | float:
    """The drain's write of one mark: its outcome, or the seconds until its slot when that is further than
    ``max_wait``. The record is read before the slot is taken and again right before the POST; the mark
    stays on the outbox when the record moved on meanwhile (the newer one is written next)."""
    redis = rt.redis
    parsed = parse_member(member)
    repo, number = parsed.repo, parsed.number
    rank = _current_rank(redis, repo, number)
    if rank is None:
        redis.zrem(keys.outbox(bucket), member)
        return "unchanged"
    try:
        pacer.acquire(max_wait, priority=URGENT if rank == URGENT_MARK else LOW_PRIORITY)
    except SlotTooFar as far:
        return max(far.seconds, 0.5)
    want = wanted(store.load_verdict(redis, repo, number))  # right before the write: the slot may have taken a while
    if want is None or _rank(want, _posted(redis, repo, number)) is None:
        redis.zrem(keys.outbox(bucket), member)
        return "unchanged"
    sha, mark = want
    try:
        rt.github.post_status(repo, sha, mark)
    except Exception as exc:
        wait = rate_limit_wait(exc)
        if wait is None and refused(exc):
            # Off the outbox (a head gone: 422): it would hold every write behind it through its retries.
            log.warning("freeze mark on %s skipped: GitHub answered %s", member, getattr(exc, "status", 0))
            redis.zrem(keys.outbox(bucket), member)
            return "skipped"
        if wait is None:
            raise  # GitHub's trouble: the drain fails and rq retries it (the mark stays on the outbox)
        log.warning("rate limited writing %s: writes paused %.0fs", member, pacer.pause(wait))
        return "rate-limited"
    redis.set(keys.posted_mark(repo, number), json.dumps({"sha": sha, **mark}), ex=POSTED_TTL)
    if wanted(store.load_verdict(redis, repo, number)) == want:
        redis.zrem(keys.outbox(bucket), member)
    return "posted"


def _current_rank(redis: Redis, repo: str, number: int) -> int | None:
    want = wanted(store.load_verdict(redis, repo, number))
    return None if want is None else _rank(want, _posted(redis, repo, number))


OLD_RANKS = (URGENT_MARK, PEOPLE_MARK)
"""The old set's score rank (0 urgent, 1 for people) as an outbox rank."""


def adopt_old_marks(rt: Runtime, bucket: str) -> int:
    """Move the marks a release before issue 31 left on its own sorted set (`core.keys.freeze_marks`)
    onto the outbox, keeping urgent before for people, and ask for a drain; returns how many moved."""
    old = keys.freeze_marks(bucket)
    found: list[tuple[bytes, float]] = rt.redis.zrange(old, 0, -1, withscores=True)  # type: ignore[assignment]
    for raw, score in found:
        parsed = parse_member(as_text(raw))
        rank = OLD_RANKS[min(max(int(score // outbox.RANK_SPAN), 0), 1)]
        outbox.add(rt.redis, bucket, mark_member(parsed.repo, parsed.number), rank)
        rt.redis.zrem(old, raw)
    if found:
        enqueue_drain(rt, bucket)
    return len(found)


def marks_job(bucket: str) -> str:
    """The job of releases before issue 31 (`core.jobs.FREEZE_MARKS`), queued or scheduled by them: their
    marks go onto the outbox, for its drain."""
    return f"moved {adopt_old_marks(current(), bucket)} to the outbox"
