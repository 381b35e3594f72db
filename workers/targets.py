"""What one outbox member writes (`workers.funnel`'s drain): a PR's head status (``repo#N``), or a merge
group's commit status from PR N's verdict (``repo@SHA#N``, `workers.groups`) — with the same pace, lock,
fencing, retry and skip rules; and what to do when GitHub refuses one write for good.
"""

from __future__ import annotations

import logging

from github import GithubException
from redis.lock import Lock

from core import keys
from workers import groups, store
from workers.funnel import parse_member, pr_lock, pr_needs_write, write_locked
from workers.runtime import Runtime

log = logging.getLogger(__name__)


class Target:
    """One outbox member: whether it needs a write, the lock it is written under, the write."""

    def __init__(self, rt: Runtime, bucket: str, member: str) -> None:
        self.rt, self.bucket, self.member = rt, bucket, member
        head, self.number = parse_member(member)
        self.repo, _, self.sha = head.partition("@")

    def needs_write(self) -> bool:
        if self.sha:
            return groups.needs_write(self.rt.redis, self.repo, self.number or None, self.sha)
        return pr_needs_write(self.rt.redis, self.repo, self.number)

    def lock(self) -> Lock:
        if self.sha:
            return groups.lock(self.rt.redis, self.repo, self.sha)
        return pr_lock(self.rt.redis, self.repo, self.number)

    def write(self, lock: Lock) -> str:
        if self.sha:
            return groups.write_locked(self.rt, self.repo, self.number or None, self.sha, lock, bucket=self.bucket)
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
    head, number = parse_member(member)
    repo, _, sha = head.partition("@")
    store.audit(rt.redis, repo, "status.skipped", number=number, status=status, **({"sha": sha} if sha else {}))
    return "skipped"
