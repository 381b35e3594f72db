"""The job that brings one repo's freeze ruleset in step (`workers.publishing.freeze_rulesets.sync`) and then
republishes the repo's open PRs, whose statuses and marks depend on whether the ruleset binds them."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

from core import keys
from workers.publishing.fanout import repos_in_scope, request_repo_fanout
from workers.publishing.freeze_rulesets import NO_PERMISSION, deferred_until, fallback_reason, recorded, sync
from workers.publishing.org_rulesets import mode_phrase, org_record, ruleset_repos, sync_org
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)


def freeze_sync_job(repo: str, verify: bool = False) -> str:
    """One repo's ruleset sync, or (``repo`` is an org's name) the org ruleset's."""
    rt = current()
    if not verify:
        rt.redis.delete(keys.freeze_sync_queued(repo))  # a request from now on queues another sync
    if "/" not in repo:
        outcome = sync_org(rt, repo, datetime.now(UTC), verify=verify, retry=verify)
        if outcome == "fallback":  # the org's holds go to each repo's own ruleset now
            for name in repos_in_scope(rt.redis, repo):
                sync(rt, name, datetime.now(UTC))
        if outcome not in ("unchanged", "deferred"):  # deferred: nothing changed on GitHub yet
            for name in repos_in_scope(rt.redis, repo):
                request_repo_fanout(rt, name)
        return outcome
    outcome = sync(rt, repo, datetime.now(UTC), verify=verify)
    if outcome not in ("unchanged", "deferred"):
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
    deferred: list[str] = []
    repos = repos_in_scope(rt.redis, scope)
    org = scope.lower() if "/" not in scope else None
    org_outcome = None
    wrote = 0
    # The rulesets decide what may merge: while they are written, the paced `merge-hold/freeze`
    # descriptions (low priority) wait, instead of taking every other slot of the minute's rate.
    pacers = [Pacer.of(rt.redis, rt.settings, bucket) for bucket in sorted({bucket_of(rt.redis, r) for r in repos})]
    try:
        if org is not None and ruleset_repos(rt, org):
            for pacer in pacers:
                pacer.yield_low_priority()
            try:
                org_outcome = sync_org(rt, org, now, retry=True)  # one write for the whole org, where it may
            except Exception:
                log.exception("org ruleset sync of %s failed; its repos' own rulesets and statuses carry it", org)
                org_outcome = "failed"
        for repo in repos:
            for pacer in pacers:
                pacer.yield_low_priority()  # renewed per repo: each write may wait for its slot
            try:
                outcome = sync(rt, repo, now)
            except Exception:  # GitHub's trouble: the PRs' recomputes ask for the sync again
                log.exception("ruleset sync of %s failed; its freeze goes through statuses meanwhile", repo)
                outcome = "failed"
            record = recorded(rt.redis, repo)
            wrote += outcome != "unchanged"
            state = outcome if outcome in ("fallback", "failed", "deferred") else \
                str(record.get("enforcement")) if record else "none"
            outcomes[state] = outcomes.get(state, 0) + 1
            if outcome == "fallback":
                fallbacks.append(repo)
            if outcome == "deferred":
                deferred.append(repo)
    finally:
        for pacer in pacers:
            pacer.end_yield()
    total = sum(outcomes.values())
    ruled = outcomes.get("active", 0) + outcomes.get("disabled", 0)
    if org_outcome in ("active", "disabled", "unchanged") and not wrote:
        ruled = 0  # the org ruleset carried it: the repos' own rulesets were in step already
    parts = _org_parts(rt, org, org_outcome) if org is not None and org_outcome is not None else []
    if not ruled and not fallbacks and not outcomes.get("failed") and not deferred and not parts:
        return ""
    took = f" in {time.monotonic() - started:.0f} s"
    if ruled and outcomes.get("active"):
        parts.append(f"rulesets active in {outcomes['active']} of {total} repos{took}")
    elif ruled:
        parts.append(f"rulesets disabled in {outcomes['disabled']} of {total} repos{took}")
    if fallbacks:
        reason = fallback_reason(rt.redis, fallbacks[0]) or NO_PERMISSION
        parts.append(f"{len(fallbacks)} repo{'s' if len(fallbacks) > 1 else ''} ({', '.join(fallbacks[:3])}"
                     f"{'…' if len(fallbacks) > 3 else ''}) freeze through statuses: {reason}")
    if deferred:
        pacer = Pacer.of(rt.redis, rt.settings, bucket_of(rt.redis, deferred[0]))
        at = now + timedelta(seconds=pacer.hour_room_in(len(deferred)))
        parts.append(f"{total - len(deferred)} of {total} repos bind now; the other {len(deferred)} by about "
                     f"{at:%H:%M} UTC, as GitHub's hourly write window frees (each freeze keeps its thaw's "
                     "write); until then their PRs are held only as far as their statuses reach GitHub "
                     "(merge-hold's verdicts, which the hook and the API read, say held now)")
    if outcomes.get("failed"):
        parts.append(f"{outcomes['failed']} ruleset write{'s' if outcomes['failed'] > 1 else ''} failed, "
                     "retried; their PRs are held through statuses meanwhile")
    return " · " + "; ".join(parts)


def _org_parts(rt: Runtime, org: str, outcome: str) -> list[str]:
    """What the reply says about the org ruleset: its mode, and what the one write did."""
    record = org_record(rt.redis, org) or {}
    if outcome == "fallback":
        return [mode_phrase(rt.redis, org)]
    if outcome == "failed":
        return ["the org ruleset write failed, retried; the repos' own rulesets and statuses carry the freeze"]
    if outcome == "deferred":
        until = deferred_until(rt.redis, org)
        when = f" (about {until:%H:%M} UTC)" if until is not None else ""
        return [f"org ruleset: GitHub's hourly write window is spent; it binds as soon as it frees{when}"]
    repos = len(record.get("repos") or ())
    state = str(record.get("enforcement") or "disabled")
    wrote = "one write" if outcome != "unchanged" else "no write needed"
    if state == "active":
        return [f"org ruleset active over {repos} repo{'s' if repos != 1 else ''} ({wrote})"]
    return [f"org ruleset disabled ({wrote})"]
