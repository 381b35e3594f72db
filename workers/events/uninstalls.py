"""The App leaves a repo: `installation_repositories` ``removed``, `installation` ``deleted``/``suspend``.

Every key of the repo (all under its hash tag, `core.keys`) is deleted but its audit history, which
expires after `HISTORY_KEEP`. A tombstone (``keys.repo_dropped``) lives through GitHub's redelivery
window: a late or redelivered event of the repo is ignored, and a recompute already running when the
repo was dropped writes no verdict and posts nothing. Adding the App to the repo again clears it.
"""

from __future__ import annotations

from redis import Redis

from core import keys
from core.outbox import bucket as outbox_bucket
from core.outbox import parse_member
from state import store
from state.decoding import as_text
from workers.publishing import bucket_of

DROPPED_TTL = 3 * 24 * 3600
"""GitHub redelivers for three days; after that no event of the dropped repo can arrive."""
HISTORY_KEEP = 30 * 24 * 3600
"""The dropped repo's audit history stays readable this long, then expires with nothing left."""


def forget_repo(redis: Redis, repo: str, installation_id: int | None) -> int:
    """Drop every key of ``repo`` and take its PRs off the outboxes. Returns how many PRs were open."""
    # The tombstone first: work running now sees it before the keys it would write go.
    redis.set(keys.repo_dropped(repo), "1", ex=DROPPED_TTL)
    bucket = bucket_of(redis, repo)
    numbers = store.drop_repo(redis, repo, installation_id)
    keep = {keys.repo_dropped(repo), keys.history(repo)}
    for raw in list(redis.scan_iter(match=keys.repo_keys_pattern(repo), count=500)):
        if as_text(raw) not in keep:
            redis.delete(raw)
    redis.expire(keys.history(repo), HISTORY_KEEP)
    # Writes waiting for it: any member of the repo, whatever case its name was queued in.
    buckets = {bucket, *(as_text(b) for b in redis.smembers(keys.OUTBOXES))}
    for name in buckets:
        members = [m for m, _ in redis.zscan_iter(keys.outbox(name))
                   if parse_member(m).repo.lower() == repo.lower()]  # a PR's or a merge group's
        if members:
            redis.zrem(keys.outbox(name), *members)
    return len(numbers)


def forget_installation(redis: Redis, installation_id: int, repos: list[str]) -> None:
    """The installation is gone: its repos, its index, token and outbox."""
    for repo in repos:
        forget_repo(redis, repo, installation_id)
    bucket = outbox_bucket(installation_id)
    with redis.pipeline() as pipe:
        pipe.delete(keys.installation_repos(installation_id), keys.installation_token(installation_id),
                    keys.outbox(bucket), keys.outbox_lease(bucket), keys.outbox_mark_wait(bucket),
                    keys.freeze_marks(bucket), keys.check_runs(bucket),
                    keys.check_runs_queued(bucket), keys.check_runs_refused(bucket))
        pipe.srem(keys.OUTBOXES, bucket)
        pipe.execute()


def readopt(redis: Redis, repo: str) -> None:
    """The App is added to the repo (again): its events count from now on."""
    redis.delete(keys.repo_dropped(repo))
