"""`check_run`: clicks on the buttons of merge-hold's check run (`requested_action`), and the tree closer's
completed runs (`workers.events.treecloser`).

A click is the act its button names, by the clicker (the delivery's ``sender``), authorised exactly as the
same act by them through a comment or the PR's page would be:

- **Lift my hold** (``lift``): their own comment-like hold (`core.comment_rules.apply_click`, the rule of
  their ``/unhold``) and any hold they placed on this PR from the page (`core.hold_rights.may_lift`, the
  page's rule). Someone who holds nothing here is told so in the run, not silently ignored. The lift is
  dated after the hold the clicked run showed them (its time is kept with the run written), as on the page.
- **Request exemption** (``exempt``): while a freeze or a room hold reaches the PR, anyone who can read the
  repository may ask; the request is audited and the freeze's room is told (`workers.chat.exemption_requests`,
  queued: a delivery never posts to chat itself). Granting stays with those who may exempt.
- **Refresh** (``refresh``, and GitHub's own *Re-run* of the run: ``rerequested``): anyone who can read the
  repository; the PR is recomputed now.

Each click is audited with origin ``check_run`` (so it shows in the PR's history) and answered by updating
the run, ahead of other runs (`workers.publishing.check_runs`, rank ``ANSWER``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from functools import partial
from typing import Any

from core import check_run, jobs
from core.comment_rules import CHECK_RUN_ORIGIN, apply_click
from core.events import repo_name
from core.hold_rights import Facts, GitHubUser, holder_id_of, may_lift
from core.holds import EXEMPTIBLE
from core.permissions import Permission
from core.prstate import DASHBOARD_REF, PullState, comment_hold_active
from core.repo_config import RepoConfig
from core.scopes import pr_scope
from state import audit, room_holds, store
from state.queueing import create_job
from workers.events import treecloser
from workers.events.handler_support import apply_rule, looked_up_permission
from workers.events.repos import pr_meta
from workers.publishing import (
    after_delivery,
    bucket_of,
    check_run_hold_seen,
    check_run_number,
    note_check_run,
    recompute_in_delivery,
    request_recompute,
)
from workers.runtime import Runtime


def on_check_run(rt: Runtime, payload: dict[str, Any]) -> str:
    if payload.get("action") == "requested_action":
        return on_requested_action(rt, payload)
    if payload.get("action") == "rerequested":
        # "Re-run" on the Checks tab: GitHub sends it to the App whose run it is; for ours it is a Refresh.
        payload = {**payload, "requested_action": {"identifier": check_run.REFRESH}}
        return on_requested_action(rt, payload)
    return treecloser.on_check_run(rt, payload)


def _number(rt: Runtime, repo: str, run: dict[str, Any]) -> int | None:
    """The PR the run stands for: GitHub's ``pull_requests`` (empty for a fork's head), else our record."""
    for pull in run.get("pull_requests") or []:
        base = ((pull.get("base") or {}).get("repo") or {}).get("name")
        if isinstance(pull.get("number"), int) and (base is None or base == repo.split("/", 1)[1]):
            return int(pull["number"])
    run_id = run.get("id")
    return check_run_number(rt.redis, repo, int(run_id)) if isinstance(run_id, int) else None


def on_requested_action(rt: Runtime, payload: dict[str, Any]) -> str:
    run = payload.get("check_run") or {}
    repo = repo_name(payload)
    login = str((payload.get("sender") or {}).get("login") or "")
    identifier = (payload.get("requested_action") or {}).get("identifier")
    # GitHub delivers a run's clicks to the App that wrote it only: its name tells ours from our other runs.
    if repo is None or not login or run.get("name") != check_run.NAME:
        return "ignored"
    number = _number(rt, repo, run)
    if number is None:
        return "ignored: no PR for this run"
    _meta, config = pr_meta(rt, repo, payload)
    permission = looked_up_permission(rt, repo, login)  # a click carries no author_association
    if identifier == check_run.LIFT:
        seen = check_run_hold_seen(rt.redis, repo, number, run.get("id"), login)
        outcome = _lift(rt, repo, number, login, permission, config, seen)
    elif identifier == check_run.EXEMPT:
        outcome = _ask_exemption(rt, repo, number, login, permission)
    elif identifier == check_run.REFRESH:
        outcome = _refresh(rt, repo, number, login, permission)
    else:
        return f"ignored: unknown action {identifier!r}"
    # The answer: the run updated ahead of the others, once the recompute the act asked for has run.
    after_delivery(rt, lambda: note_check_run(rt, bucket_of(rt.redis, repo), repo, number, None, config, answer=True))
    return outcome


def _refuse(rt: Runtime, repo: str, number: int, login: str, message: str, action: str) -> str:
    audit.record(rt.redis, repo, "hold.refused", number=number, actor=login, target=login, reason="",
                 message=message, origin=CHECK_RUN_ORIGIN, action=action)
    return f"refused: {message}"


def _own_comment_hold(state: PullState, login: str, now: datetime) -> bool:
    register = state.comments.get(login.lower())
    return register is not None and comment_hold_active(state, register, now)


def _lift(rt: Runtime, repo: str, number: int, login: str, permission: Permission, config: RepoConfig,
          seen: datetime | None) -> str:
    now = datetime.now(UTC)
    state = store.load_pull(rt.redis, repo, number)
    scope = pr_scope(repo, number)
    user = GitHubUser(login, {repo.lower(): permission})
    facts = Facts(lift_others={repo.lower(): Permission.parse(config.lift_others_permission)})
    own_id = user.holder_id.lower()
    mine = [h for h in room_holds.holds_in(rt.redis, room_holds.scope_key(scope))
            if h.scope == scope and holder_id_of(h.id).lower() == own_id]
    commented = _own_comment_hold(state, login, now)
    if not commented and not mine and not config.shared_holds:
        return _refuse(rt, repo, number, login, f"@{login}: nothing lifted, you hold nothing on this PR "
                       "(a hold is lifted by whoever placed it, or with /unhold @user by a maintainer)", "lift")
    done: list[str] = []
    if commented or config.shared_holds:
        ref = f"{DASHBOARD_REF}check-run-{uuid.uuid4().hex}"
        # The rule of `core` reads the author and dates the lift from the state it is applied to.
        rule = partial(apply_click, actor=login, permission=permission, now=now, seen=seen, ref=ref, config=config)
        _before, outcome, _changed = apply_rule(rt, repo, number, rule)
        audit.record(rt.redis, repo, f"hold.{outcome.kind}", number=number, actor=outcome.actor,
                     target=outcome.target, reason=outcome.reason, message=outcome.message, origin=CHECK_RUN_ORIGIN)
        done.append(outcome.kind)
    if mine:
        allowed = [h for h in mine if may_lift(user, h.id, scope, facts)]
        if not allowed:
            _refuse(rt, repo, number, login, f"@{login}: your hold on the page stays, lifting it needs write access",
                    "lift")
            done.append("refused")
        elif room_holds.lift_holds(rt.redis, scope, actor=login, origin=CHECK_RUN_ORIGIN,
                                   only={h.id for h in allowed}):
            request_recompute(rt, repo, number)
            recompute_in_delivery(rt, repo, number)
            done.append("lifted")
    return ", ".join(done)


def _ask_exemption(rt: Runtime, repo: str, number: int, login: str, permission: Permission) -> str:
    if permission < Permission.READ:
        return _refuse(rt, repo, number, login, f"@{login}: not done, asking for an exemption needs read access",
                       "exempt")
    record = store.load_verdict(rt.redis, repo, number) or {}
    freezes = [h for h in record.get("holds") or [] if h.get("source") in EXEMPTIBLE]
    if not freezes:
        return _refuse(rt, repo, number, login, f"@{login}: nothing to ask for, no freeze or room hold covers "
                       "this PR", "exempt")
    holds = [{k: h.get(k) for k in ("holder", "origin", "scope", "reason")} for h in freezes]
    audit.record(rt.redis, repo, "exemption.requested", number=number, actor=login, origin=CHECK_RUN_ORIGIN,
                 holds=holds)
    url = f"{rt.settings.public_url.rstrip('/')}/{repo}/pull/{number}"
    request = {"actor": login, "holds": holds, "pr_url": url}
    rt.queue.enqueue_job(create_job(rt.queue, jobs.EXEMPTION_REQUEST, (repo, number, request),
                                    description=f"exemption request {repo}#{number}"))
    return "exemption requested"


def _refresh(rt: Runtime, repo: str, number: int, login: str, permission: Permission) -> str:
    if permission < Permission.READ:
        return _refuse(rt, repo, number, login, f"@{login}: not done, a refresh needs read access", "refresh")
    audit.record(rt.redis, repo, "check_run.refreshed", number=number, actor=login, origin=CHECK_RUN_ORIGIN)
    request_recompute(rt, repo, number)
    recompute_in_delivery(rt, repo, number)
    return "refreshed"
