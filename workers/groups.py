"""Merge queue groups (design §4 `merge_group`): the group's head commit carries its PR's verdict.

A group is remembered per PR while GitHub checks it (`core.keys.merge_groups`, with a TTL), so that a
hold placed on the PR meanwhile reaches the group's commit too: the publish funnel calls `follow` after
every verdict it records. Group statuses go through the funnel like a PR's (`workers.funnel`): on the
installation's outbox, ahead of every PR (a group is about to merge), paced, fenced — the write reads
the verdict under the group's lock and checks right before and after the POST that it has not moved on,
so the last post carries the newest verdict whichever of the event and the recompute runs last.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from redis import Redis
from redis.lock import Lock

from core import keys
from core.holds import to_iso
from core.merge_groups import drained, freeze_mark_for_group, group_number, group_status
from state.config_file import parse_config
from workers import store
from workers.funnel import Fenced, add_to_outbox, bucket_of, drain, enqueue_drain
from workers.runtime import Runtime

log = logging.getLogger(__name__)

GROUP_TTL = 6 * 3600
"""GitHub gives a merge group's required checks at most 6 hours (the queue's longest timeout)."""
LOCK_TIMEOUT = 30
RANK = -1
"""Outbox rank of a group's commit: before the most mergeable PR, since the queue merges it next."""


def member(repo: str, sha: str, number: int | None) -> str:
    """A group's outbox member: ``repo@SHA#N`` (``#0``: the group names no PR). Repo names hold no ``@``."""
    return f"{repo}@{sha}#{number or 0}"


def wanted(redis: Redis, repo: str, number: int | None, sha: str) -> tuple[dict[str, Any], bytes]:
    """The group status the PR's verdict record asks for, and how it is remembered once posted."""
    status, _mark, form = _wanted(redis, repo, number, sha)
    return status, form


def _wanted(redis: Redis, repo: str, number: int | None, sha: str) -> tuple[dict[str, Any], dict[str, Any] | None,
                                                                             bytes]:
    """The group's `merge-hold` status, the `merge-hold/freeze` success a drained group needs under a
    ruleset freeze (or None), and the form both are remembered by once posted."""
    record = store.load_verdict(redis, repo, number) if number is not None else None
    if record is not None and record.get("held") and _drains(redis, repo):
        since = redis.get(keys.group_since(repo, sha))
        record = drained(record, since.decode() if isinstance(since, bytes) else since)
    status = group_status(number, record)
    mark = freeze_mark_for_group(record)
    return status, mark, json.dumps({"sha": sha, **status, **({"mark": mark} if mark else {})},
                                    sort_keys=True).encode()


def _drains(redis: Redis, repo: str) -> bool:
    meta = store.load_repo(redis, repo)
    config = parse_config(meta.config_text)[0] if meta is not None and meta.config_loaded else None
    return config is not None and config.queue_on_freeze == "drain"


def needs_write(redis: Redis, repo: str, number: int | None, sha: str) -> bool:
    return redis.get(keys.group_posted(repo, sha)) != wanted(redis, repo, number, sha)[1]


def lock(redis: Redis, repo: str, sha: str) -> Lock:
    found: Lock = redis.lock(keys.group_lock(repo, sha), timeout=LOCK_TIMEOUT, sleep=0.02,
                             blocking_timeout=LOCK_TIMEOUT)
    return found


def enqueue(rt: Runtime, repo: str, number: int | None, sha: str) -> bool:
    """Put the group's commit on the outbox when its posted status differs; True when it did."""
    if not needs_write(rt.redis, repo, number, sha):
        return False
    add_to_outbox(rt.redis, bucket_of(rt.redis, repo), f"{repo}@{sha}", number or 0, RANK)
    return True


def checks_requested(rt: Runtime, repo: str, group: dict[str, Any]) -> str:
    """A group asks for checks: remember it under its PR, then write the PR's verdict on its head."""
    sha, head_ref = str(group["head_sha"]), str(group.get("head_ref", ""))
    number = group_number(head_ref)
    if number is not None:
        key = keys.merge_groups(repo, number)
        with rt.redis.pipeline() as pipe:
            pipe.hset(key, sha, head_ref)
            pipe.expire(key, GROUP_TTL)
            # The first request counts (a redelivery does not move it): `queue_on_freeze: drain`.
            pipe.set(keys.group_since(repo, sha), to_iso(datetime.now(UTC)) or "", nx=True, ex=GROUP_TTL)
            pipe.execute()
    if not enqueue(rt, repo, number, sha):
        outcome = "unchanged"
    else:
        outcome = f"pending; drain {drain(rt, bucket_of(rt.redis, repo))}"
    if number is not None and store.load_verdict(rt.redis, repo, number) is None:
        # Never seen the PR (or its state was lost): recompute it; `follow` then settles the group.
        from workers.publish import request_recompute

        request_recompute(rt, repo, number)
    return outcome


def follow(rt: Runtime, repo: str, number: int) -> int:
    """After the PR's verdict was recorded: its groups' commits go on the outbox when their status
    differs (a drain is asked for). Returns how many groups check the PR."""
    shas = [s.decode() if isinstance(s, bytes) else str(s) for s in rt.redis.hkeys(keys.merge_groups(repo, number))]
    if sum(enqueue(rt, repo, number, sha) for sha in shas):
        enqueue_drain(rt, bucket_of(rt.redis, repo))
    return len(shas)


def write_locked(rt: Runtime, repo: str, number: int | None, sha: str, held: Lock, *, bucket: str) -> str:
    """Under the group's lock: post the group status its PR's verdict asks for, fenced like a PR's write
    (`workers.funnel.write_locked`): the lock ours and the wanted status unchanged before and after."""
    redis = rt.redis
    status, mark, form = _wanted(redis, repo, number, sha)
    if redis.get(keys.group_posted(repo, sha)) == form:
        redis.zrem(keys.outbox(bucket), member(repo, sha, number))
        return "unchanged"

    def fresh() -> bool:
        return held.owned() and wanted(redis, repo, number, sha)[1] == form

    if not fresh():
        raise Fenced(member(repo, sha, number))
    if mark is not None:
        rt.github.post_status(repo, sha, mark)  # the ruleset's context first: the group may finish
    rt.github.post_status(repo, sha, status)
    if not fresh():
        redis.delete(keys.group_posted(repo, sha))
        log.warning("group status on %s@%s fenced after the POST; the latest is written again", repo, sha[:7])
        raise Fenced(member(repo, sha, number))
    with redis.pipeline() as pipe:
        pipe.set(keys.group_posted(repo, sha), form, ex=GROUP_TTL)
        pipe.zrem(keys.outbox(bucket), member(repo, sha, number))
        pipe.execute()
    store.audit(redis, repo, "status.posted", number=number, sha=sha, state=status["state"],
                description=status["description"], merge_group=True)
    return "posted"
