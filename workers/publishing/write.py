"""Step 8 of a delivery's path (docs/architecture.md): the one fenced status write (design §4, invariants 7, 8).

Under its lock an outbox member's wanted status is read right before the POST, the lock checked still
ours, posted, and read again right after: two reads of the verdict record per write (*fencing*). Only
when the lock is still ours and the wanted status unchanged is it recorded as posted and taken off the
outbox. A write whose lock lapsed or whose verdict moved on during the POST forgets
the posted status and leaves the member on the outbox, so the latest verdict is written after it.
A member is a PR's head (``repo#N``: its verdict record's status) or a merge group's commit
(``repo@SHA#N``: PR N's verdict, `workers.publishing.group_status`); both go through `_fenced`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from github import GithubException
from redis import Redis
from redis.lock import Lock

from core import keys
from core.outbox import group_member, parse_member, pr_member
from state import audit, posted_status, store
from state.posted_status import wanted_status
from workers.publishing import group_status
from workers.publishing.locks import pr_lock
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import rate_limit_wait, slot_now
from workers.runtime import Runtime

log = logging.getLogger(__name__)

class Fenced(Exception):
    """The lock lapsed or the verdict moved on while we were about to write: nothing was posted."""


def pr_needs_write(redis: Redis, repo: str, number: int) -> bool:
    """Whether the PR's wanted status differs from the one last posted (the drain asks)."""
    wanted = wanted_status(store.load_verdict(redis, repo, number))
    return wanted is not None and redis.get(keys.posted(repo, number)) != posted_status.form(*wanted)


@dataclass(frozen=True)
class Wanted:
    """What one member should carry, as read under its lock."""

    posts: tuple[tuple[str, dict[str, Any]], ...]
    """(SHA, status) pairs, posted in this order."""
    form: bytes
    """How it is remembered once posted (``keys.posted``, ``keys.group_posted``)."""
    fence: object
    """Must be the same right before and right after the POST."""
    audit: dict[str, Any] = field(default_factory=dict)


def _pr_wanted(redis: Redis, repo: str, number: int) -> Wanted | None:
    record = store.load_verdict(redis, repo, number)
    wanted = wanted_status(record)
    if record is None or wanted is None:
        return None
    sha, status = wanted
    form = posted_status.form(sha, status)
    return Wanted(((sha, status),), form, (record.get("version"), form),
                  {"number": number, "sha": sha, "state": status["state"], "description": status["description"],
                   "version": record.get("version")})


def _group_wanted(redis: Redis, repo: str, number: int | None, sha: str) -> Wanted:
    status, mark, form = group_status.wanted_with_mark(redis, repo, number, sha)
    # The ruleset's context first: the group may finish.
    posts = ((sha, mark), (sha, status)) if mark is not None else ((sha, status),)
    return Wanted(posts, form, form, {"number": number, "sha": sha, "state": status["state"],
                                      "description": status["description"], "merge_group": True})


def _fenced(rt: Runtime, repo: str, member: str, bucket: str, lock: Lock | None, read: Callable[[], Wanted | None],
            posted_key: str, ttl: int | None) -> str:
    redis = rt.redis
    wanted = read()  # under the lock, right before the POST: what it writes
    if wanted is None or redis.get(posted_key) == wanted.form:
        redis.zrem(keys.outbox(bucket), member)
        return "unchanged" if wanted else "no-head"

    def owned() -> bool:
        return lock is None or lock.owned()

    if not owned():
        raise Fenced(member)
    for sha, status in wanted.posts:
        rt.github.post_status(repo, sha, status)
    after = read()  # the second read: a verdict moved on during the POST (or a lock lost) is written again
    if not owned() or after is None or after.fence != wanted.fence:
        # Another writer may have posted a newer status before ours landed: write the latest again.
        redis.delete(posted_key)
        log.warning("status write on %s fenced after the POST; the latest verdict is written again", member)
        raise Fenced(member)
    with redis.pipeline() as pipe:
        pipe.set(posted_key, wanted.form, ex=ttl)
        pipe.zrem(keys.outbox(bucket), member)
        pipe.execute()
    audit.record(redis, repo, "status.posted", **wanted.audit)
    return "posted"


def write_locked(rt: Runtime, repo: str, number: int, lock: Lock | None, *, bucket: str | None = None) -> str:
    """Under the PR's lock: post the verdict record's status unless it is the one posted (fenced)."""
    return _fenced(rt, repo, pr_member(repo, number), bucket or bucket_of(rt.redis, repo), lock,
                   lambda: _pr_wanted(rt.redis, repo, number), keys.posted(repo, number), None)


def write_group(rt: Runtime, repo: str, number: int | None, sha: str, lock: Lock, *, bucket: str) -> str:
    """Under the group's lock: post the group status its PR's verdict asks for (fenced like a PR's)."""
    return _fenced(rt, repo, group_member(repo, sha, number), bucket, lock,
                   lambda: _group_wanted(rt.redis, repo, number, sha), keys.group_posted(repo, sha),
                   group_status.GROUP_TTL)


def write_now(rt: Runtime, repo: str, number: int, lock: Lock, *, bucket: str | None = None) -> str | None:
    """Under the PR's lock, right after its verdict was recorded: write it at once when the pacer has a
    slot free *now* (an isolated change, or a burst within the pacer's allowance); None, with nothing
    taken, when it has none — the PR then waits on the outbox for the drain, most-mergeable first.
    Writing at once skips the outbox's lease, so the workers write in parallel while slots are free;
    once the pacer binds, every write goes through the one drain again."""
    bucket = bucket or bucket_of(rt.redis, repo)
    pacer = slot_now(rt.redis, rt.settings, bucket)
    if pacer is None:
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


class Target:
    """One outbox member, for the drain: whether it needs a write, the lock it is written under, the write."""

    def __init__(self, rt: Runtime, bucket: str, member: str) -> None:
        self.rt, self.bucket, self.member = rt, bucket, member
        parsed = parse_member(member)
        self.repo, self.number, self.sha = parsed.repo, parsed.number, parsed.sha

    def needs_write(self) -> bool:
        if self.sha:
            return group_status.needs_write(self.rt.redis, self.repo, self.number or None, self.sha)
        return pr_needs_write(self.rt.redis, self.repo, self.number)

    def lock(self) -> Lock:
        if self.sha:
            return group_status.lock(self.rt.redis, self.repo, self.sha)
        return pr_lock(self.rt.redis, self.repo, self.number)

    def write(self, lock: Lock) -> str:
        if self.sha:
            return write_group(self.rt, self.repo, self.number or None, self.sha, lock, bucket=self.bucket)
        return write_locked(self.rt, self.repo, self.number, lock, bucket=self.bucket)


def refused(exc: BaseException) -> bool:
    """GitHub refused this one write for good (422: no such commit, 404: repo gone...). Not 401 (our
    credentials, not this write) nor 403/429 (rate limits, told apart before; a missing permission
    fails every write alike, so it fails the job)."""
    status = getattr(exc, "status", None)
    return isinstance(exc, GithubException) and isinstance(status, int) and 400 <= status < 500 \
        and status not in (401, 403, 429)


def skip(rt: Runtime, bucket: str, member: str, exc: BaseException) -> str:
    """Off the outbox (it would block every write behind it through all retries); the PR's next verdict
    change or the reconcile writes it again."""
    status = getattr(exc, "status", 0)
    log.warning("status write on %s skipped: GitHub answered %s", member, status)
    rt.redis.zrem(keys.outbox(bucket), member)
    parsed = parse_member(member)
    audit.record(rt.redis, parsed.repo, "status.skipped", number=parsed.number, status=status,
                **({"sha": parsed.sha} if parsed.sha else {}))
    return "skipped"
