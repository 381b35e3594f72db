"""Merge queue groups (design §4 `merge_group`): the group's head commit carries its PR's verdict.

A group asking for checks is remembered under its PR (`checks_requested`); after every verdict the
recompute records, `follow` puts the PR's groups on the installation's outbox when their status
differs — ahead of every PR (a group is about to merge), paced, and written by the one fenced write
(`workers.publishing.write`), so the last post carries the newest verdict whichever of the event and
the recompute runs last. What a group's commit should carry is `workers.publishing.group_status`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core import keys
from core.holds import to_iso
from core.merge_groups import group_number
from core.outbox import group_member
from state import store
from state.decoding import as_text
from workers.publishing import outbox
from workers.publishing.drain import drain
from workers.publishing.group_status import GROUP_TTL, needs_write
from workers.publishing.outbox import bucket_of, enqueue_drain
from workers.publishing.request import request_recompute
from workers.runtime import Runtime

RANK = -1
"""Outbox rank of a group's commit: before the most mergeable PR, since the queue merges it next."""


def enqueue(rt: Runtime, repo: str, number: int | None, sha: str) -> bool:
    """Put the group's commit on the outbox when its posted status differs; True when it did."""
    if not needs_write(rt.redis, repo, number, sha):
        return False
    outbox.add(rt.redis, bucket_of(rt.redis, repo), group_member(repo, sha, number), RANK)
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
        request_recompute(rt, repo, number)
    return outcome


def follow(rt: Runtime, repo: str, number: int) -> int:
    """After the PR's verdict was recorded: its groups' commits go on the outbox when their status
    differs (a drain is asked for). Returns how many groups check the PR."""
    shas = [as_text(s) for s in rt.redis.hkeys(keys.merge_groups(repo, number))]
    if sum(enqueue(rt, repo, number, sha) for sha in shas):
        enqueue_drain(rt, bucket_of(rt.redis, repo))
    return len(shas)
