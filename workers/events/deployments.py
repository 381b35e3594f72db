"""Deployments: merge-hold answering as a custom deployment protection rule (`core.deployments` decides).

GitHub sends `deployment_protection_rule` (`requested`) for a workflow job that deploys to an environment
the App's rule is enabled on, and the job waits until the App answers through the run's callback. Unfrozen,
the answer is `approved` at once. Frozen, either `rejected` at once (`deployments_on_freeze: reject`) or the
request is kept in Redis (`keys.deployments_waiting`), a status report is posted on the run, and the
request is re-checked whenever the freeze may have lifted:

- after every room-hold change on the repo, its branches or its org (the fan-out job that follows each
  change asks for `request_recheck`), and after a config reload;
- at the next clock edge that could thaw it (a freeze window's end, a timed hold's expiry): a scheduled
  job of its own, since a repo with no open PR has no PR wakeup to ride on;
- in the scheduled reconcile (`sweep`), the backstop for anything missed.

One answer per request: answers for one repo are serialised by a lock, and an `answered` marker outlives
GitHub's redelivery window, so a redelivered request is not approved twice. A second answer that slipped
through (a worker killed between GitHub's acknowledgement and the marker) gets GitHub's refusal, which
counts as done.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Any

from core import jobs, keys
from core.deployments import APPROVE, MAX_REPORTS, WAIT, Decision, branch_of, decide, next_change
from core.events import repo_name
from core.holds import from_iso, to_iso
from state import audit, room_holds, store
from state.config_file import repo_config
from state.decoding import as_text
from state.queueing import options, request_deploy_recheck
from workers.events.repos import ensure_repo
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

RECHECK_JOB = jobs.RECHECK_DEPLOYS.address
ANSWERED_TTL = 4 * 24 * 3600
"""GitHub redelivers a delivery for three days: a day more, and a redelivered request finds its answer."""
LOCK_TIMEOUT = 60
"""A repo's answers take a few GitHub calls each; a lock held longer belongs to a dead worker."""
CALLBACK = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/actions/runs/(?P<run>\d+)/deployment_protection_rule$")


@dataclass(frozen=True)
class Waiting:
    """One deployment protection request, as kept while it waits."""

    run_id: int
    environment: str
    ref: str | None
    callback_url: str
    requested_at: str
    reports: int = 0
    """Status reports posted on it (GitHub takes ten at most)."""
    report: str = ""
    """The last report's text: a new one goes out only when what freezes the deployment changed."""

    @property
    def field(self) -> str:
        return f"{self.run_id}:{self.environment}"


def parse_request(repo: str, payload: dict[str, Any]) -> Waiting | str:
    """The request in a `requested` payload, or why it cannot be answered. The run id comes from the
    callback URL, which must name this repo's run: the answer is built from them, never sent to a URL
    a payload chose."""
    environment = payload.get("environment")
    callback = str(payload.get("deployment_callback_url") or "")
    match = CALLBACK.search(callback.split("?", 1)[0])
    if not isinstance(environment, str) or not environment:
        return "no environment"
    if match is None or match["repo"].lower() != repo.lower():
        return "callback URL is not this repo's deployment_protection_rule endpoint"
    deployment = payload.get("deployment") or {}
    ref = payload.get("ref") or deployment.get("ref")
    requested = from_iso(deployment.get("created_at")) if isinstance(deployment.get("created_at"), str) else None
    return Waiting(int(match["run"]), environment, str(ref) if ref else None, callback,
                   to_iso(requested or datetime.now(UTC)) or "")


def on_deployment_protection_rule(rt: Runtime, payload: dict[str, Any]) -> str:
    """The webhook handler: answer now, or keep the request waiting (design §4)."""
    repo = repo_name(payload)
    if payload.get("action") != "requested" or repo is None:
        return "ignored"
    request = parse_request(repo, payload)
    if isinstance(request, str):
        log.warning("deployment protection request in %s not answered: %s", repo, request)
        return f"ignored: {request}"
    inst = (payload.get("installation") or {}).get("id")
    repository = payload.get("repository") or {}
    ensure_repo(rt, repo, installation_id=int(inst) if inst else None,
                default_branch=repository.get("default_branch"), private=bool(repository.get("private")))
    with rt.redis.lock(keys.deployments_lock(repo), timeout=LOCK_TIMEOUT, blocking_timeout=LOCK_TIMEOUT):
        if rt.redis.exists(keys.deployment_answered(repo, request.run_id, request.environment)):
            return "already answered"
        kept = rt.redis.hget(keys.deployments_waiting(repo), request.field)
        if kept is not None:  # a redelivery while it waits: the report was posted already
            request = _load(kept)
        return _answer(rt, repo, request, datetime.now(UTC), waited=kept is not None)


def _load(raw: bytes | str) -> Waiting:
    return Waiting(**json.loads(raw))


def _answer(rt: Runtime, repo: str, request: Waiting, now: datetime, *, waited: bool) -> str:
    """Decide and answer one request (under the repo's lock); returns the decision's action."""
    config, error = repo_config(store.load_repo(rt.redis, repo))
    scoped = room_holds.scoped_holds(rt.redis, repo)
    decision = decide(config, request.environment, branch_of(request.ref), scoped, now, repo=repo,
                      config_error=error, waited=waited)
    if decision.action == WAIT:
        _schedule(rt, repo, next_change(config, decision.holds, now), now)
        return _wait(rt, repo, request, decision)
    body = {"environment_name": request.environment, "state": decision.action, "comment": decision.comment}
    pending = rt.github.review_deployment(repo, request.run_id, body)
    _done(rt, repo, request)
    audit.record(rt.redis, repo, f"deployment.{decision.action}", run_id=request.run_id,
                environment=request.environment, ref=request.ref, comment=decision.comment,
                **({} if pending else {"note": "GitHub had nothing pending: reviewed already"}))
    return decision.action


def _wait(rt: Runtime, repo: str, request: Waiting, decision: Decision) -> str:
    # Kept before the report goes out: a worker killed in between leaves a request the re-checks find.
    first = not rt.redis.hexists(keys.deployments_waiting(repo), request.field)
    rt.redis.hset(keys.deployments_waiting(repo), request.field, json.dumps(asdict(request)))
    if first:
        audit.record(rt.redis, repo, "deployment.waiting", run_id=request.run_id, environment=request.environment,
                    ref=request.ref, comment=decision.comment)
    if request.report != decision.comment and request.reports < MAX_REPORTS:
        report = {"environment_name": request.environment, "comment": decision.comment}  # no state: a report
        if not rt.github.review_deployment(repo, request.run_id, report):
            _done(rt, repo, request)  # approved or rejected by someone else (an admin's bypass), or gone
            return "answered elsewhere"
        reported = replace(request, reports=request.reports + 1, report=decision.comment)
        rt.redis.hset(keys.deployments_waiting(repo), request.field, json.dumps(asdict(reported)))
    return WAIT


def _done(rt: Runtime, repo: str, request: Waiting) -> None:
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.deployment_answered(repo, request.run_id, request.environment), "1", ex=ANSWERED_TTL)
        pipe.hdel(keys.deployments_waiting(repo), request.field)
        pipe.execute()


def _schedule(rt: Runtime, repo: str, when: datetime | None, now: datetime) -> None:
    """A re-check of the repo's waiting deployments at ``when`` (once per repo and moment)."""
    if when is None:
        return
    job_id = "wake-deploys-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{repo}-{int(when.timestamp())}")
    if rt.redis.set(keys.wake(job_id), "1", nx=True, ex=int((when - now).total_seconds()) + 3600):
        rt.queue.enqueue_at(when, RECHECK_JOB, repo, job_id=job_id, **options(jobs.RECHECK_DEPLOYS))
        log.info("scheduled the re-check of %s's waiting deployments at %s", repo, to_iso(when))


def recheck(rt: Runtime, repo: str, now: datetime) -> dict[str, int]:
    """Answer every waiting request of ``repo`` whose freeze lifted; counts by outcome."""
    counts: dict[str, int] = {}
    if not rt.redis.hlen(keys.deployments_waiting(repo)):
        return counts
    with rt.redis.lock(keys.deployments_lock(repo), timeout=LOCK_TIMEOUT, blocking_timeout=LOCK_TIMEOUT):
        for raw in rt.redis.hvals(keys.deployments_waiting(repo)):
            request = _load(raw)
            if rt.redis.exists(keys.deployment_answered(repo, request.run_id, request.environment)):
                rt.redis.hdel(keys.deployments_waiting(repo), request.field)
                continue
            outcome = _answer(rt, repo, request, now, waited=True)
            counts[outcome] = counts.get(outcome, 0) + 1
    return counts


def request_recheck(rt: Runtime, repo: str) -> bool:
    """Queue a re-check when ``repo`` has waiting deployments (one HLEN otherwise): a hold on it changed."""
    return request_deploy_recheck(rt.redis, rt.queue, repo)


def recheck_job(repo: str) -> str:
    """The rq job: re-check one repo's waiting deployments now."""
    counts = recheck(current(), repo, datetime.now(UTC))
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "none waiting"


def sweep(rt: Runtime, now: datetime) -> int:
    """The reconcile's backstop: re-check every managed repo with waiting deployments; how many were
    answered. One repo's trouble (GitHub refusing) leaves the others to go on."""
    answered = 0
    for raw in sorted(rt.redis.smembers(keys.MANAGED_REPOS)):
        repo = as_text(raw)
        try:
            counts = recheck(rt, repo, now)
        except Exception as exc:
            log.warning("deployments of %s stay waiting until the next sweep: %s", repo, exc)
            continue
        answered += sum(n for outcome, n in counts.items() if outcome != WAIT)
    return answered


__all__ = ["APPROVE", "RECHECK_JOB", "on_deployment_protection_rule", "recheck", "request_recheck", "sweep"]
