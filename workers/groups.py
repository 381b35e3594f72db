"""Merge queue groups (design §4 `merge_group`): the group's head commit carries its PR's verdict.

A group is remembered per PR while GitHub checks it (`core.keys.merge_groups`, with a TTL), so that a
hold placed on the PR meanwhile reaches the group's commit too: the publish funnel calls `follow` after
every verdict it records. Posts on one group are serialised and read the verdict inside the lock, so
the last post carries the newest verdict whichever of the event and the recompute runs last.
"""

from __future__ import annotations

import json
from typing import Any

from core import keys
from core.merge_groups import group_number, group_status
from workers import store
from workers.runtime import Runtime

GROUP_TTL = 6 * 3600
"""GitHub gives a merge group's required checks at most 6 hours (the queue's longest timeout)."""
LOCK_TIMEOUT = 30


def checks_requested(rt: Runtime, repo: str, group: dict[str, Any]) -> str:
    """A group asks for checks: remember it under its PR, then post the PR's verdict on its head."""
    sha, head_ref = str(group["head_sha"]), str(group.get("head_ref", ""))
    number = group_number(head_ref)
    if number is not None:
        key = keys.merge_groups(repo, number)
        with rt.redis.pipeline() as pipe:
            pipe.hset(key, sha, head_ref)
            pipe.expire(key, GROUP_TTL)
            pipe.execute()
    outcome = post(rt, repo, number, sha)
    if number is not None and store.load_verdict(rt.redis, repo, number) is None:
        # Never seen the PR (or its state was lost): recompute it; `follow` then settles the group.
        from workers.publish import request_recompute

        request_recompute(rt, repo, number)
    return outcome


def follow(rt: Runtime, repo: str, number: int) -> int:
    """After the PR's verdict was recorded: re-post it on every group checking the PR. Returns how many."""
    shas = [s.decode() if isinstance(s, bytes) else str(s) for s in rt.redis.hkeys(keys.merge_groups(repo, number))]
    for sha in shas:
        post(rt, repo, number, sha)
    return len(shas)


def post(rt: Runtime, repo: str, number: int | None, sha: str) -> str:
    """Post the group status for ``number``'s verdict on ``sha`` unless that exact status is there."""
    with rt.redis.lock(keys.group_lock(repo, sha), timeout=LOCK_TIMEOUT, sleep=0.02, blocking_timeout=LOCK_TIMEOUT):
        record = store.load_verdict(rt.redis, repo, number) if number is not None else None
        status = group_status(number, record)
        wanted = json.dumps({"sha": sha, **status}, sort_keys=True)
        if rt.redis.get(keys.group_posted(repo, sha)) == wanted.encode():
            return "unchanged"
        rt.github.post_status(repo, sha, status)
        rt.redis.set(keys.group_posted(repo, sha), wanted, ex=GROUP_TTL)
    store.audit(rt.redis, repo, "status.posted", number=number, sha=sha, state=status["state"],
                description=status["description"], merge_group=True)
    return "posted"
