"""The repo's own ruleset, `merge-hold freeze` (``freeze_mode: ruleset``; rules in `core.freeze_gate`).

`sync` makes GitHub's ruleset what the repo's freeze holds and windows ask for, with one paced write
(urgent: it decides what may merge), and records what it wrote (`core.keys.freeze_ruleset`). The record
is what the verdicts read: a PR's ``merge-hold`` status leaves the freeze out only once the record says
the ruleset binds its branch, so every failure on the way — no permission, GitHub down, a crash between
the write and the record — leaves the freeze on the statuses, never nowhere.

- No Administration write permission (403) or no App to name (a dry run): the repo *falls back* to
  statuses, recorded under `core.keys.freeze_fallback` for the chat reply and ``doctor``; the next
  successful write ends the fallback.
- A ruleset deleted behind our back (404 on our id) is found again by name or created anew.
- ``verify`` (the reconcile) reads GitHub's ruleset first and repairs one whose enforcement or branches
  disagree with the holds — someone disabled it during an incident, or our record was lost.
- A hold on the whole org is the org ruleset's (`workers.publishing.org_rulesets`) while the org has one;
  the repo's own ruleset carries it only once the org fell back to per-repo rulesets.
- An activation keeps back its thaw's write of GitHub's hour (`Pacer.owe`); when the hour has no room
  for both it is *deferred* (`core.keys.freeze_deferred`) and its sync scheduled for when it has.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from redis import Redis

from core import jobs, keys
from core.freeze_gate import RULESET_NAME, binds, freeze_mark, per_pr_verdict, ruleset_body, wanted_include
from core.holds import Exemption, Hold
from core.org_freeze import org_binds, org_frozen, org_of, without_org_holds
from core.repo_config import RepoConfig, freeze_mode_of
from core.verdict import Verdict
from state import audit, room_holds, store
from state.config_file import repo_config
from state.decoding import maybe_text
from state.queueing import options
from workers.publishing.locks import WorkerLock
from workers.publishing.org_rulesets import DEFER_AFTER, defer, org_fallback, org_mode, org_record, sync_org
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer, SlotTooFar
from workers.publishing.ruleset_writes import write_ruleset
from workers.runtime import Runtime

log = logging.getLogger(__name__)

NO_PERMISSION = "the App lacks Administration: write on this repository"
SYNC_JOB = jobs.FREEZE_SYNC.address
SYNC_QUEUED_TTL = 600
SYNC_LOCK_SECONDS = 120
"""A sync holds its repo's lock at most this long (its write waits for a pacer slot meanwhile)."""
FALLBACK_SECONDS = 3600
"""A repo that could not write its ruleset freezes through statuses this long before the next try (a
granted permission, or `merge-hold doctor`'s check, ends it sooner)."""


def recorded(redis: Redis, repo: str) -> dict[str, Any] | None:
    raw = redis.get(keys.freeze_ruleset(repo))
    return json.loads(raw) if raw else None


def fallback_reason(redis: Redis, repo: str) -> str | None:
    raw = redis.get(keys.freeze_fallback(repo))
    return maybe_text(raw)


def wanted(rt: Runtime, repo: str, now: datetime, config: RepoConfig | None = None) -> tuple[str, ...]:
    """The include list the repo's ruleset should have now (empty: disabled, or not in ruleset mode)."""
    if config is None:
        meta = store.load_repo(rt.redis, repo)
        config = repo_config(meta)[0]
    if freeze_mode_of(config, rt.settings.freeze_mode) != "ruleset":
        return ()
    return wanted_include(repo, config, _carried(rt.redis, repo, room_holds.scoped_holds(rt.redis, repo)), now)


def _carried(redis: Redis, repo: str, holds: list[Hold]) -> list[Hold]:
    """The holds the repo's own ruleset carries: not the org's while the org ruleset carries them."""
    org = org_of(repo)
    return without_org_holds(holds, org) if org_mode(redis, org) else holds


def in_step(record: dict[str, Any] | None, include: tuple[str, ...]) -> bool:
    """Whether the recorded ruleset already is what ``include`` asks for (never created counts as
    disabled)."""
    if not include:
        return record is None or record.get("enforcement") != "active"
    return record is not None and record.get("enforcement") == "active" and tuple(record.get("include", ())) == include


def sync(rt: Runtime, repo: str, now: datetime, *, verify: bool = False,
         config: RepoConfig | None = None) -> str:
    """Bring the repo's ruleset in step with its freezes; "unchanged", "active", "disabled" or
    "fallback". One sync of a repo at a time: a thaw's `sync_scope` and a worker's sync of the same
    repo (asked for by a recompute that saw it out of step) would otherwise both write it."""
    lock = rt.redis.lock(keys.freeze_sync_lock(repo), timeout=SYNC_LOCK_SECONDS, sleep=0.05,
                         blocking_timeout=SYNC_LOCK_SECONDS, lock_class=WorkerLock)
    with lock:
        outcome = _sync(rt, repo, now, verify=verify, config=config)
    if verify:
        _verify_org(rt, org_of(repo), now)
    return outcome


ORG_VERIFY_SECONDS = 60
"""A reconcile over an org's repos reads the org ruleset back once in this long, not once per repo."""


def _verify_org(rt: Runtime, org: str, now: datetime) -> None:
    """The reconcile's look at the org ruleset (drift repaired; after a refusal, the org write retried)."""
    if org_record(rt.redis, org) is None and org_fallback(rt.redis, org) is None:
        return
    if not rt.redis.set(keys.org_freeze_verified(org), "1", nx=True, ex=ORG_VERIFY_SECONDS):
        return
    try:
        sync_org(rt, org, now, verify=True)
    except Exception:
        log.exception("org ruleset check of %s failed; the next reconcile reads it again", org)


def _sync(rt: Runtime, repo: str, now: datetime, *, verify: bool, config: RepoConfig | None) -> str:
    include = wanted(rt, repo, now, config)
    record = recorded(rt.redis, repo)
    if in_step(record, include) and not (verify and record is not None and _drifted(rt, repo, record)):
        if not include:
            rt.redis.delete(keys.freeze_deferred(repo))  # thawed before its deferred activation
        if verify:  # the thaw writes kept back follow what is recorded (a record lost or repaired)
            Pacer.of(rt.redis, rt.settings, bucket_of(rt.redis, repo)).owe(
                repo, record is not None and record.get("enforcement") == "active")
        return "unchanged"
    app_id = rt.settings.github_app_id
    if not app_id:
        return _fall_back(rt, repo, "dry run: no App to require") if include else "unchanged"
    body = ruleset_body(include, app_id)
    pacer = Pacer.of(rt.redis, rt.settings, bucket_of(rt.redis, repo))
    activation = bool(include) and not (record is not None and record.get("enforcement") == "active")
    try:
        status, answer = _write(rt, pacer, repo, record, body, activation)
    except SlotTooFar as far:
        return defer(rt, repo, now, far.seconds)
    if status in (403, 404) or status == 0:
        return _fall_back(rt, repo, NO_PERMISSION if status else str((answer or {}).get("message", "")))
    if status != 200 and status != 201:
        raise RuntimeError(f"ruleset write on {repo} refused: {status} {answer}")
    entry = {"id": answer["id"], "enforcement": body["enforcement"], "include": list(include),
             "at": now.isoformat(timespec="seconds")}
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.freeze_ruleset(repo), json.dumps(entry))
        pipe.delete(keys.freeze_fallback(repo), keys.freeze_deferred(repo))
        pipe.execute()
    pacer.owe(repo, body["enforcement"] == "active")
    audit.record(rt.redis, repo, "freeze.ruleset", enforcement=body["enforcement"], include=list(include),
                ruleset_id=answer["id"])
    return str(body["enforcement"])


def deferred_until(redis: Redis, name: str) -> datetime | None:
    """When a deferred activation of ``name``'s ruleset (a repo, or an org) is tried again."""
    raw = redis.get(keys.freeze_deferred(name))
    return datetime.fromisoformat(json.loads(raw)["until"]) if raw else None


def _write(rt: Runtime, pacer: Pacer, repo: str, record: dict[str, Any] | None,
           body: dict[str, Any], activation: bool = False) -> tuple[int, Any]:
    """PUT our ruleset, or find it by name, or create it: one write, two when our id went stale. An
    activation keeps back its thaw's write of the hour; beyond `DEFER_AFTER` it raises `SlotTooFar`."""
    return write_ruleset(rt, pacer, repo, f"/repos/{repo}/rulesets", record.get("id") if record else None, body,
                         activation=activation, max_wait=DEFER_AFTER, find=lambda: _find(rt, repo))


def _find(rt: Runtime, repo: str) -> int | None:
    status, listed = rt.github.get_answer(repo, f"/repos/{repo}/rulesets", {"includes_parents": "false"})
    if status != 200 or not isinstance(listed, list):
        return None
    ours = (r for r in listed if r.get("name") == RULESET_NAME and r.get("source_type") == "Repository")
    return next((int(r["id"]) for r in ours), None)


def _drifted(rt: Runtime, repo: str, record: dict[str, Any]) -> bool:
    """GitHub's ruleset is not what we recorded (disabled by someone, branches changed, deleted)."""
    status, found = rt.github.get_answer(repo, f"/repos/{repo}/rulesets/{record.get('id')}")
    if status != 200 or not isinstance(found, dict):
        return status in (404, 410)
    include = tuple(((found.get("conditions") or {}).get("ref_name") or {}).get("include", ()))
    drifted = found.get("enforcement") != record.get("enforcement") or (
        record.get("enforcement") == "active" and include != tuple(record.get("include", ())))
    if drifted:
        log.warning("the merge-hold freeze ruleset of %s was changed on GitHub: repairing it", repo)
        audit.record(rt.redis, repo, "freeze.ruleset_drift", found=found.get("enforcement"),
                    recorded=record.get("enforcement"))
    return drifted


def _fall_back(rt: Runtime, repo: str, reason: str) -> str:
    if fallback_reason(rt.redis, repo) != reason:
        log.warning("freeze on %s goes through statuses: %s", repo, reason)
        audit.record(rt.redis, repo, "freeze.fallback", reason=reason)
    rt.redis.set(keys.freeze_fallback(repo), reason, ex=FALLBACK_SECONDS)
    return "fallback"


def shaped(rt: Runtime, repo: str, verdict: Verdict, config: RepoConfig | None, scoped: list[Hold],
           exemption: Exemption | None, labels: tuple[str, ...],
           now: datetime) -> tuple[Verdict, dict[str, str] | None]:
    """For one PR's recompute: the verdict its ``merge-hold`` status carries and the `merge-hold/freeze`
    mark it should show. A repo whose ruleset is out of step with its holds gets a sync queued (the
    freeze window's edge, a room hold's expiry, a config change reach GitHub this way)."""
    org = org_of(repo)
    with rt.redis.pipeline(transaction=False) as pipe:  # one round trip per recompute
        for key in (keys.freeze_ruleset(repo), keys.org_freeze_ruleset(org)):
            pipe.get(key)
        for key in (keys.org_freeze_fallback(org), keys.freeze_fallback(repo), keys.freeze_deferred(repo),
                    keys.freeze_deferred(org)):
            pipe.exists(key)
        raw, raw_org, org_fell, fell, repo_later, org_later = pipe.execute()
    record = json.loads(raw) if raw else None
    carried = not org_fell
    held_by_org = json.loads(raw_org) if raw_org else None  # one left active by a permission since lost binds too
    bound = binds(record, verdict.base) or org_binds(held_by_org, repo, verdict.base)
    reason = exempt_reason(exemption, config, labels, now)
    mark = freeze_mark(verdict, bound, reason)
    if config is not None:
        ruled = freeze_mode_of(config, rt.settings.freeze_mode) == "ruleset"
        mine = without_org_holds(scoped, org) if carried else scoped
        include = wanted_include(repo, config, mine, now) if ruled else ()
        org_wanted = ruled and carried and org_frozen(org, scoped, now)
        org_behind = carried and (org_wanted != org_binds(held_by_org, repo, "~")) and not org_later
        if org_behind:
            request_sync(rt, org)  # the org's holds, an org's repo joining ruleset mode
        # A repo fallen back to statuses is tried again once its fallback lapses, not on every recompute.
        if not in_step(record, include) and not fell and not repo_later:
            request_sync(rt, repo)
            # The ruleset is about to change (a thaw recorded while its rulesets are being written): a
            # success for a PR that nothing freezes would be an urgent write per PR, racing the one
            # ruleset write that frees them all. An exempt PR's success still goes (its reason).
            org_behind = True
        if org_behind and mark is not None and mark["state"] == "success" and reason is None:
            mark = None
    return per_pr_verdict(verdict, bound), mark


def exempt_reason(exemption: Exemption | None, config: RepoConfig | None, labels: tuple[str, ...],
                  now: datetime) -> str | None:
    if exemption is not None and exemption.active(now):
        return f"{exemption.reason} (@{exemption.by})"
    if config is None:
        return None
    exempting = set(config.exempt_labels).union(*(w.exempt_labels for w in config.freeze_windows))
    label = next((name for name in labels if name in exempting), None)
    return f"label {label}" if label else None


def request_sync(rt: Runtime, repo: str, *, verify: bool = False) -> bool:
    """Queue a ruleset sync of the repo unless one is queued (a burst of recomputes asks once);
    ``verify`` reads GitHub's ruleset back first (a `repository_ruleset` event on ours)."""
    if not verify and not rt.redis.set(keys.freeze_sync_queued(repo), "1", nx=True, ex=SYNC_QUEUED_TTL):
        return False
    rt.queue.enqueue(SYNC_JOB, repo, verify, **options(jobs.FREEZE_SYNC),
                     description=f"freeze ruleset sync {repo}", at_front=True)
    return True
