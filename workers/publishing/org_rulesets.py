"""The org's own ruleset, `merge-hold freeze` at ``/orgs/{org}/rulesets`` (rules in `core.org_freeze`).

Where the App has ``organization_administration: write`` and the org's plan has organisation rulesets
(GitHub Enterprise Cloud), a room hold on the whole org is one organisation ruleset: `sync_org` makes
it what the org's holds ask for with one paced `GATE` write (active over the org's managed repos in
ruleset mode, or disabled), and records what it wrote (`core.keys.org_freeze_ruleset`), which is what
the verdicts read (`core.org_freeze.org_binds`).

- GitHub answers 403 (no permission) or 404 (no such org, or a plan without org rulesets): the org
  *falls back* to per-repo rulesets (`core.keys.org_freeze_fallback`, with the reason, for the chat
  reply, ``/rooms`` and ``doctor``); the org write is tried again after `RETRY_SECONDS`, at the next
  freeze or thaw of the org or the reconcile. The per-repo rulesets then carry the org's holds too.
- Our ruleset deleted behind our back (404 on our id) is found again by name or created anew.
- ``verify`` (the reconcile, an org-level `repository_ruleset` event on ours) reads GitHub's ruleset
  first and repairs one whose enforcement, repositories or branches disagree with the holds.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from redis import Redis

from core import jobs, keys
from core.freeze_gate import ALL, RULESET_NAME
from core.org_freeze import ORG_SOURCE, drifted, org_frozen, org_in_step, org_ruleset_body, short_names
from core.outbox import GLOBAL_BUCKET
from core.repo_config import freeze_mode_of
from state import audit, room_holds, store
from state.config_file import repo_config
from state.decoding import as_text
from state.queueing import enqueue_after
from workers.publishing.locks import WorkerLock
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer, SlotTooFar
from workers.publishing.ruleset_writes import write_ruleset
from workers.runtime import Runtime

log = logging.getLogger(__name__)

NO_ORG_RULESETS = ("org rulesets unavailable (GitHub answered {status}: the App lacks Organization "
                   "administration: write, or the plan has no organisation rulesets)")
RETRY_SECONDS = 3600
"""An org fallen back to per-repo rulesets tries its org ruleset again this long after the refusal."""
DEFER_AFTER = 60.0
"""A ruleset activation waits at most this long for its pacer slot; a slot further away (GitHub's hour
spent) is scheduled instead (`core.keys.freeze_deferred`)."""
LOCK_SECONDS = 120


def org_repos(redis: Redis, org: str) -> list[str]:
    """The org's managed repos (lower-case full names)."""
    names = (as_text(m) for m in redis.smembers(keys.MANAGED_REPOS))
    return sorted(r for r in names if r.split("/", 1)[0] == org.lower())


def ruleset_repos(rt: Runtime, org: str) -> list[str]:
    """The org's managed repos whose freezes go through rulesets (their config, else the server's mode)."""
    found = []
    for repo in org_repos(rt.redis, org):
        meta = store.load_repo(rt.redis, repo)
        config = repo_config(meta)[0]
        if freeze_mode_of(config, rt.settings.freeze_mode) == "ruleset":
            found.append(repo)
    return found


def org_record(redis: Redis, org: str) -> dict[str, Any] | None:
    raw = redis.get(keys.org_freeze_ruleset(org))
    return json.loads(raw) if raw else None


def org_fallback(redis: Redis, org: str) -> dict[str, Any] | None:
    raw = redis.get(keys.org_freeze_fallback(org))
    return json.loads(raw) if raw else None


def org_mode(redis: Redis, org: str) -> bool:
    """Whether the org's holds go through the org ruleset (else through each repo's own)."""
    return not redis.exists(keys.org_freeze_fallback(org))


def mode_phrase(redis: Redis, org: str) -> str:
    """What the chat reply, ``/rooms`` and ``doctor`` say about the org's mode."""
    fallback = org_fallback(redis, org)
    if fallback is None:
        return "org ruleset"
    return f"per-repo rulesets: {fallback.get('reason')}"


def sync_org(rt: Runtime, org: str, now: datetime, *, verify: bool = False, retry: bool = False) -> str:
    """Bring the org ruleset in step with the org's holds: "unchanged", "active", "disabled",
    "fallback" (per-repo rulesets carry the org's holds) or "deferred" (the hour is spent: scheduled).
    ``retry``: try the org write again even if the org fell back less than `RETRY_SECONDS` ago."""
    lock = rt.redis.lock(keys.freeze_sync_lock(org), timeout=LOCK_SECONDS, sleep=0.05,
                         blocking_timeout=LOCK_SECONDS, lock_class=WorkerLock)
    with lock:
        return _sync_org(rt, org.lower(), now, verify=verify, retry=retry)


def _sync_org(rt: Runtime, org: str, now: datetime, *, verify: bool, retry: bool) -> str:
    fallback = org_fallback(rt.redis, org)
    if fallback is not None:
        since = datetime.fromisoformat(str(fallback.get("at")))
        if not (retry or verify) or now - since < timedelta(seconds=RETRY_SECONDS):
            return "fallback"
    repos = ruleset_repos(rt, org)
    active = bool(repos) and org_frozen(org, room_holds.holds_in(rt.redis, keys.org_room_holds(org)), now)
    record = org_record(rt.redis, org)
    if fallback is not None and not active and record is None:
        return "fallback"  # nothing to write: the next org freeze tries the org ruleset again
    if fallback is None and org_in_step(record, repos, active) and \
            not (verify and record is not None and _drifted(rt, org, record)):
        if not active:
            rt.redis.delete(keys.freeze_deferred(org))  # thawed before its deferred activation
        return "unchanged"
    if not rt.settings.github_app_id:
        return _fall_back(rt, org, "dry run: no App to require") if active else "unchanged"
    via = repos[0] if repos else next(iter(org_repos(rt.redis, org)), None)
    if via is None:
        return "unchanged"  # no managed repo left to write through: nothing the ruleset could bind
    body = org_ruleset_body(repos, active, rt.settings.github_app_id)
    pacer = Pacer.of(rt.redis, rt.settings, bucket_of(rt.redis, via) if via else GLOBAL_BUCKET)
    activation = active and not (record is not None and record.get("enforcement") == "active")
    try:
        status, answer = _write(rt, pacer, org, via, record, body, activation)
    except SlotTooFar as far:
        return defer(rt, org, now, far.seconds)
    if status in (403, 404) or status == 0:
        return _fall_back(rt, org, NO_ORG_RULESETS.format(status=status) if status
                          else str((answer or {}).get("message", "")))
    if status != 200:
        raise RuntimeError(f"org ruleset write on {org} refused: {status} {answer}")
    entry = {"id": answer["id"], "enforcement": body["enforcement"], "repos": short_names(repos),
             "include": [ALL], "at": now.isoformat(timespec="seconds")}
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.org_freeze_ruleset(org), json.dumps(entry))
        pipe.delete(keys.org_freeze_fallback(org), keys.freeze_deferred(org))
        pipe.execute()
    pacer.owe(f"org:{org}", body["enforcement"] == "active")
    audit.record(rt.redis, via, "freeze.org_ruleset", org=org, enforcement=body["enforcement"],
                repos=len(repos), ruleset_id=answer["id"])
    return str(body["enforcement"])


def _write(rt: Runtime, pacer: Pacer, org: str, via: str, record: dict[str, Any] | None, body: dict[str, Any],
           activation: bool) -> tuple[int, Any]:
    """PUT our org ruleset, or find it by name, or create it: one write, two when our id went stale."""
    return write_ruleset(rt, pacer, via, f"/orgs/{org}/rulesets", record.get("id") if record else None, body,
                         activation=activation, max_wait=DEFER_AFTER, find=lambda: _find(rt, org, via))


def _find(rt: Runtime, org: str, via: str) -> int | None:
    status, listed = rt.github.get_answer(via, f"/orgs/{org}/rulesets")
    if status != 200 or not isinstance(listed, list):
        return None
    ours = (r for r in listed if r.get("name") == RULESET_NAME and r.get("source_type") == ORG_SOURCE)
    return next((int(r["id"]) for r in ours), None)


def _drifted(rt: Runtime, org: str, record: dict[str, Any]) -> bool:
    via = next(iter(org_repos(rt.redis, org)), None)
    if via is None:
        return False
    status, found = rt.github.get_answer(via, f"/orgs/{org}/rulesets/{record.get('id')}")
    if status != 200 or not isinstance(found, dict):
        return status in (404, 410)
    if drifted(found, record):
        log.warning("the merge-hold freeze org ruleset of %s was changed on GitHub: repairing it", org)
        audit.record(rt.redis, via, "freeze.ruleset_drift", org=org, found=found.get("enforcement"),
                    recorded=record.get("enforcement"))
        return True
    return False


def defer(rt: Runtime, name: str, now: datetime, seconds: float) -> str:
    """GitHub's hour has no room for the activation of ``name``'s ruleset (a repo's, or an org's) and
    its thaw's write: its sync is scheduled for when it has (`core.keys.freeze_deferred`)."""
    until = now + timedelta(seconds=seconds)
    rt.redis.set(keys.freeze_deferred(name), json.dumps({"until": until.isoformat(timespec="seconds")}),
                 ex=int(seconds) + 120)
    enqueue_after(rt.queue, jobs.FREEZE_SYNC, name, False, delay=seconds,
                  description=f"freeze ruleset sync {name} (deferred)")
    log.info("ruleset of %s bound at %s: GitHub's hourly write window is spent", name, until)
    return "deferred"


def _fall_back(rt: Runtime, org: str, reason: str) -> str:
    previous = org_fallback(rt.redis, org)
    if previous is None or previous.get("reason") != reason:
        log.warning("org freeze of %s goes through per-repo rulesets: %s", org, reason)
        via = next(iter(org_repos(rt.redis, org)), None)
        audit.record(rt.redis, via, "freeze.org_fallback", org=org, reason=reason)
    rt.redis.set(keys.org_freeze_fallback(org), json.dumps({"reason": reason, "at": datetime.now(UTC).isoformat(
        timespec="seconds")}))
    return "fallback"
