"""The job that brings one repo's freeze ruleset in step (`workers.publishing.freeze_rulesets.sync`) and then
republishes the repo's open PRs, whose statuses and marks depend on whether the ruleset binds them."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from core import keys
from workers.events.fanout import repos_in_scope, request_repo_fanout
from workers.publishing.freeze_rulesets import NO_PERMISSION, fallback_reason, recorded, sync
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)


def freeze_sync_job(repo: str, verify: bool = False) -> str:
    rt = current()
    if not verify:
        rt.redis.delete(keys.freeze_sync_queued(repo))  # a request from now on queues another sync
    outcome = sync(rt, repo, datetime.now(UTC), verify=verify)
    if outcome != "unchanged":
        request_repo_fanout(rt, repo)
    return outcome


def sync_scope(rt: Runtime, scope: str, now: datetime) -> str:
    """After a room hold on ``scope`` was placed or lifted: bring every reached repo's ruleset in step
    before its PRs are republished (so a freeze never first queues a status write per PR). Returns
    what the chat reply says about it ("" when no repo freezes through a ruleset)."""
    if "#" in scope:
        return ""
    started = time.monotonic()
    outcomes: dict[str, int] = {}
    fallbacks: list[str] = []
    repos = repos_in_scope(rt.redis, scope)
    # The rulesets decide what may merge: while they are written, the paced `merge-hold/freeze`
    # descriptions (low priority) wait, instead of taking every other slot of the minute's rate.
    pacers = [Pacer.of(rt.redis, rt.settings, bucket) for bucket in sorted({bucket_of(rt.redis, r) for r in repos})]
    try:
        for repo in repos:
            for pacer in pacers:
                pacer.yield_low_priority()  # renewed per repo: each write may wait for its slot
            try:
                outcome = sync(rt, repo, now)
            except Exception:  # GitHub's trouble: the PRs' recomputes ask for the sync again
                log.exception("ruleset sync of %s failed; its freeze goes through statuses meanwhile", repo)
                outcome = "failed"
            record = recorded(rt.redis, repo)
            state = "fallback" if outcome == "fallback" else "failed" if outcome == "failed" else \
                str(record.get("enforcement")) if record else "none"
            outcomes[state] = outcomes.get(state, 0) + 1
            if outcome == "fallback":
                fallbacks.append(repo)
    finally:
        for pacer in pacers:
            pacer.end_yield()
    total = sum(outcomes.values())
    ruled = outcomes.get("active", 0) + outcomes.get("disabled", 0)
    if not ruled and not fallbacks and not outcomes.get("failed"):
        return ""
    parts = []
    took = f" in {time.monotonic() - started:.0f} s"
    if outcomes.get("active"):
        parts.append(f"rulesets active in {outcomes['active']} of {total} repos{took}")
    elif ruled:
        parts.append(f"rulesets disabled in {outcomes['disabled']} of {total} repos{took}")
    if fallbacks:
        reason = fallback_reason(rt.redis, fallbacks[0]) or NO_PERMISSION
        parts.append(f"{len(fallbacks)} repo{'s' if len(fallbacks) > 1 else ''} ({', '.join(fallbacks[:3])}"
                     f"{'…' if len(fallbacks) > 3 else ''}) freeze through statuses: {reason}")
    if outcomes.get("failed"):
        parts.append(f"{outcomes['failed']} ruleset write{'s' if outcomes['failed'] > 1 else ''} failed, "
                     "retried; their PRs are held through statuses meanwhile")
    return " · " + "; ".join(parts)
