"""What a merge group's commit should carry (design §4 `merge_group`): its PR's verdict, read under
the group's lock by the one fenced write (`workers.publishing.write`).

A group is remembered per PR while GitHub checks it (`core.keys.merge_groups`, with a TTL), so that
a hold placed on the PR meanwhile reaches the group's commit too (`workers.publishing.merge_groups`).
Under `queue_on_freeze: drain` a group whose checks were requested before the freeze began carries
its PR's verdict without the freeze (`core.merge_groups.drained`).
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.lock import Lock

from core import keys
from core.merge_groups import drained, freeze_mark_for_group, group_status
from state import posted_status, store
from state.config_file import repo_config
from state.decoding import maybe_text

GROUP_TTL = 6 * 3600
"""GitHub gives a merge group's required checks at most 6 hours (the queue's longest timeout)."""
LOCK_TIMEOUT = 30


def wanted(redis: Redis, repo: str, number: int | None, sha: str) -> tuple[dict[str, Any], bytes]:
    """The group status the PR's verdict record asks for, and how it is remembered once posted."""
    status, _mark, form = wanted_with_mark(redis, repo, number, sha)
    return status, form


def wanted_with_mark(redis: Redis, repo: str, number: int | None,
                     sha: str) -> tuple[dict[str, Any], dict[str, Any] | None, bytes]:
    """The group's `merge-hold` status, the `merge-hold/freeze` success a drained group needs under a
    ruleset freeze (or None), and the form both are remembered by once posted."""
    record = store.load_verdict(redis, repo, number) if number is not None else None
    if record is not None and record.get("held") and _drains(redis, repo):
        since = redis.get(keys.group_since(repo, sha))
        record = drained(record, maybe_text(since))
    status = group_status(number, record)
    mark = freeze_mark_for_group(record)
    return status, mark, posted_status.form(sha, status, mark)


def _drains(redis: Redis, repo: str) -> bool:
    config = repo_config(store.load_repo(redis, repo))[0]
    return config is not None and config.queue_on_freeze == "drain"


def needs_write(redis: Redis, repo: str, number: int | None, sha: str) -> bool:
    return redis.get(keys.group_posted(repo, sha)) != wanted(redis, repo, number, sha)[1]


def lock(redis: Redis, repo: str, sha: str) -> Lock:
    found: Lock = redis.lock(keys.group_lock(repo, sha), timeout=LOCK_TIMEOUT, sleep=0.02,
                             blocking_timeout=LOCK_TIMEOUT)
    return found
