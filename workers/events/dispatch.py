"""Apply one GitHub webhook delivery to the hold state, then ask for the affected PRs' recompute.

Each handler translates an event into "record this in the state, then recompute PR X" — the rules
themselves live in `core/`. Handlers are idempotent: a duplicate delivery records nothing new, and
an unchanged verdict posts nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core import keys
from core.comment_rules import apply_comment, apply_review
from core.events import action_matters
from core.holds import from_iso
from core.merge_groups import group_number
from core.permissions import Permission, permission_from_association
from core.prstate import EPOCH, REVIEW_REF, PullState, record_facts, record_label, record_push
from core.repo_config import CONFIG_PATH, DEFAULT_CONFIG, RepoConfig
from core.status import CONTEXT
from state import audit, store
from workers.events import deployments, feedback, holdfor, installations, moves, own_status, tree_heads, treecloser
from workers.events.incidents import on_closed as judge_merge
from workers.events.installations import installation_id
from workers.events.repos import ensure_repo, load_repo_config
from workers.events.republish import republish
from workers.events.tamper import on_gate_event
from workers.github.pulls import facts_from_pull, repo_name
from workers.publishing import expedite, merge_groups
from workers.publishing.recompute import repo_config, run_expedited
from workers.publishing.request import RecomputeRequest, request_recompute
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

PERMISSION_TTL = 600
"""Permission look-ups are cached ten minutes: a revoked maintainer keeps lifting power that long at most."""
DELIVERY_SEEN_TTL = 3600
"""A delivery processed once is skipped for an hour: it covers GitHub's retry of a 503 and our redelivery
sweep (every 10 minutes). Later duplicates are still harmless, since every handler is idempotent (design
§4 invariant 2); the marker only saves the work. Three days of markers at 50 deliveries/s were ~1 GB."""
AUDITED_TTL = 3 * 24 * 3600
"""Per comment or review (far fewer than deliveries): GitHub's whole redelivery window, so the audit
history never lists one comment's outcomes twice."""
ZERO_SHA = "0" * 40
CONFIG_LOCK_TIMEOUT = 30
"""A config reload is one contents read; a lock held longer belongs to a dead worker."""

Handler = Callable[[Runtime, dict[str, Any]], str]


def handle_delivery(event: str, delivery_id: str, body: bytes | str | dict[str, Any]) -> str:
    """The rq job for one webhook delivery (the raw JSON body as received, or its parsed payload).
    Returns what happened (kept as the job's result)."""
    rt = current()
    payload: dict[str, Any] = body if isinstance(body, dict) else json.loads(body)
    if event != "status" and _is_own(rt, payload):
        return "own-event"
    handler = HANDLERS.get(event)
    # The pump's table (`core.events`) again, for jobs queued past it: handlers keep no action lists.
    if handler is None or not action_matters(event, payload.get("action")):
        return "ignored"
    repo = repo_name(payload) if event not in ("installation", "installation_repositories") else None
    with rt.redis.pipeline(transaction=False) as pipe:  # one round trip for both checks
        pipe.exists(keys.delivery_seen(delivery_id or "-"))
        pipe.exists(keys.repo_dropped(repo or "-/-"))
        seen, dropped = pipe.execute()
    if delivery_id and seen:
        return "duplicate"
    if repo is not None and dropped:
        return "dropped repo"  # a late or redelivered event of a repo the App has left
    with expedite.collecting() as collected:
        outcome = handler(rt, payload)
    # The recomputes it asked for run here and now, not behind the queue (their jobs are the backstop).
    run_expedited(rt, collected)
    if delivery_id:
        rt.redis.set(keys.delivery_seen(delivery_id), "1", ex=DELIVERY_SEEN_TTL)
    return outcome


def _is_own(rt: Runtime, payload: dict[str, Any]) -> bool:
    sender = (payload.get("sender") or {}).get("login")
    return bool(sender) and sender == rt.bot_login


def _meta(rt: Runtime, repo: str, payload: dict[str, Any]) -> tuple[store.RepoMeta, RepoConfig]:
    repository = payload.get("repository") or {}
    meta = ensure_repo(rt, repo, installation_id=installation_id(payload),
                       default_branch=repository.get("default_branch"), private=bool(repository.get("private")))
    config, _error = repo_config(meta)
    # Commands are recorded under the defaults while the config is invalid; the verdict is `error`
    # until it is fixed, so nothing merges on the strength of a guess.
    return meta, config or DEFAULT_CONFIG


def _permission(rt: Runtime, repo: str, login: str, association: str | None) -> Permission:
    settled = permission_from_association(association)
    if settled is not None:
        return settled
    key = keys.permission_cache(repo, login)
    cached = rt.redis.get(key)
    if cached is not None:
        return Permission(int(cached))
    found = rt.github.permission(repo, login)
    rt.redis.set(key, int(found), ex=PERMISSION_TTL)
    return found


def _record_outcomes(rt: Runtime, repo: str, number: int, outcomes: list[Any], item: str) -> None:
    """Audit what a comment or review did, once per ``item``: the same comment redelivered under a new
    delivery id (GitHub's redelivery, our sweep's) applies as a no-op and must not log it again."""
    if not outcomes or not rt.redis.set(keys.audited(repo, item), "1", nx=True, ex=AUDITED_TTL):
        return
    for outcome in outcomes:
        audit.record(rt.redis, repo, f"hold.{outcome.kind}", number=number, actor=outcome.actor,
                    target=outcome.target, reason=outcome.reason, message=outcome.message)


def _first(rt: Runtime, repo: str, item: str) -> bool:
    """Whether ``item`` is seen for the first time (a redelivered event is told once)."""
    return bool(rt.redis.set(keys.audited(repo, item), "1", nx=True, ex=AUDITED_TTL))


def apply_change(rt: Runtime, repo: str, number: int, change: Callable[[PullState], PullState]) -> bool:
    """Record a change in the PR's state and ask for its recompute in the same EXEC (a worker killed
    in between leaves neither). Unchanged, it still asks when the PR has no verdict yet (met for the
    first time, or state lost) or one older than its state (a recompute that never finished): a retried
    delivery finishes what its killed first run began."""
    request = RecomputeRequest(rt.queue, repo, number)
    _state, changed = store.update_pull(rt.redis, repo, number, change, request=request)
    if not changed:
        verdict = store.load_verdict(rt.redis, repo, number)
        if verdict is None or int(verdict.get("state_version") or 0) < store.state_version(rt.redis, repo, number):
            request_recompute(rt, repo, number)
            expedite.touch(rt.queue, repo, number)  # and at once, even if that request was coalesced
    return changed


def on_issue_comment(rt: Runtime, payload: dict[str, Any]) -> str:
    issue = payload.get("issue") or {}
    repo = repo_name(payload)
    if payload.get("action") != "created" or not issue.get("pull_request") or repo is None:
        return "ignored"
    comment = payload["comment"]
    number = int(issue["number"])
    actor = comment["user"]["login"]
    _, config = _meta(rt, repo, payload)
    permission = _permission(rt, repo, actor, comment.get("author_association"))
    outcomes: list[Any] = []
    before: list[PullState] = []

    def change(state: PullState) -> PullState:
        before[:] = [state]
        new_state, found = apply_comment(
            state, comment.get("body") or "", actor=actor, permission=permission,
            is_author=actor == (issue.get("user") or {}).get("login"),
            at=from_iso(comment.get("created_at")) or EPOCH, ref=str(comment["id"]),
            origin=comment.get("html_url", ""), config=config,
        )
        outcomes[:] = found
        return new_state

    changed = apply_change(rt, repo, number, change)
    outcomes += holdfor.on_comment(rt, repo, number, comment, permission=permission, config=config,
                                   is_author=actor == (issue.get("user") or {}).get("login"))
    _record_outcomes(rt, repo, number, outcomes, f"comment:{comment['id']}")
    # The reaction may wait until the status is written (it is best effort, the status is the gate).
    answered = list(outcomes)
    expedite.after(lambda: feedback.answer_comment(rt, repo, number, comment, answered,
                                                   before[0] if before else None, config))
    if not outcomes:
        return "no-command"
    return "applied" if changed else "unchanged"


def on_pull_request_review(rt: Runtime, payload: dict[str, Any]) -> str:
    repo = repo_name(payload)
    action = payload.get("action")  # submitted or dismissed (`core.events`)
    if repo is None:
        return "ignored"
    review, pull = payload["review"], payload["pull_request"]
    number = int(pull["number"])
    reviewer = review["user"]["login"]
    _, config = _meta(rt, repo, payload)
    at = from_iso(review.get("submitted_at")) or EPOCH
    facts = facts_from_pull(pull) if (pull.get("head") or {}).get("sha") else None
    permission = _permission(rt, repo, reviewer, review.get("author_association"))
    outcomes: list[Any] = []

    def change(state: PullState) -> PullState:
        if facts is not None:
            state = record_facts(state, facts)
        state, found = apply_review(
            state, reviewer=reviewer, review_state="dismissed" if action == "dismissed" else str(review.get("state")),
            review_id=str(review["id"]), at=at, origin=review.get("html_url", ""), config=config,
            permission=permission)
        if action == "submitted" and review.get("body"):
            state, more = apply_comment(
                state, review["body"], actor=reviewer, permission=permission,
                is_author=reviewer == (pull.get("user") or {}).get("login"), at=at,
                ref=f"{REVIEW_REF}{review['id']}",
                origin=review.get("html_url", ""), config=config)
            found = [*found, *more]
        outcomes[:] = found
        return state

    changed = apply_change(rt, repo, number, change)
    _record_outcomes(rt, repo, number, outcomes, f"review:{review['id']}:{action}")
    # The first delivery of an approval decides (a redelivery never adds to the history).
    if action == "submitted" and str(review.get("state")).lower() == "approved" and _first(
            rt, repo, f"approved:{review['id']}") and rt.redis.sismember(keys.held_prs(repo), str(number)):
        audit.record(rt.redis, repo, "pr.approved", number=number, by=reviewer)  # chat news: still held
    return "applied" if changed else "unchanged"


def on_pull_request(rt: Runtime, payload: dict[str, Any]) -> str:
    """Every action let in (`core.events`) records the facts (a draft goes last on the outbox)."""
    repo = repo_name(payload)
    if repo is None:
        return "ignored"
    pull = payload["pull_request"]
    number = int(pull["number"])
    _, config = _meta(rt, repo, payload)
    facts = facts_from_pull(pull)
    # A PR met at its opening has no history to read; any other first sight is synced in `publish`.
    fresh = payload.get("action") == "opened"
    label = str((payload.get("label") or {}).get("name", ""))
    added = payload.get("action") == "labeled"

    def change(state: PullState) -> PullState:
        state = record_facts(replace(state, synced=state.synced or fresh), facts)
        if label == config.hold_label and payload.get("action") in ("labeled", "unlabeled"):
            state = record_label(state, label, facts.at, added)
        return state

    if facts.open:
        rt.redis.sadd(keys.open_prs(repo), number)
    judge_merge(rt, repo, payload, config)  # now: the closing recorded below leads to forgetting its verdict
    changed = apply_change(rt, repo, number, change)
    holdfor.on_dependency_event(rt, repo, number, kind="pull", action=str(payload.get("action")),
                                merged=bool(pull.get("merged")))
    return "applied" if changed else "unchanged"


def on_push(rt: Runtime, payload: dict[str, Any]) -> str:
    repo = repo_name(payload)
    ref = str(payload.get("ref", ""))
    before, after = str(payload.get("before", "")), str(payload.get("after", ""))
    if repo is None or not ref.startswith("refs/heads/") or after == ZERO_SHA:
        if repo is not None and after == ZERO_SHA:
            tree_heads.forget(rt, repo, ref.removeprefix("refs/heads/"))  # a deleted branch has no head
        return "ignored"
    branch = ref.removeprefix("refs/heads/")
    meta, config = _meta(rt, repo, payload)
    tree_heads.on_push(rt, repo, payload, config.close_on_failure)  # a tree closer follows the head
    moved = 0
    number = rt.redis.get(keys.head_index(repo, branch))
    taken = tree_heads.pushed_at(payload)
    at = int(taken.timestamp()) if taken else 0
    if number is not None and before != ZERO_SHA and apply_change(rt, repo, int(number),
                                                            lambda s: record_push(s, before, after, at)):
        moved = 1
    if branch == meta.default_branch and _touches_config(payload):
        # Read at the branch's current head, never at this push's `after`: pushes handled out of order
        # would otherwise restore an older config. Reloads of one repo are serialised, so the last to
        # write is the last to have read the branch, which already holds every push delivered so far.
        with rt.redis.lock(keys.config_lock(repo), timeout=CONFIG_LOCK_TIMEOUT, sleep=0.05,
                           blocking_timeout=CONFIG_LOCK_TIMEOUT):
            load_repo_config(rt, repo, installation_id=meta.installation_id, default_branch=meta.default_branch,
                             private=meta.private, previous=meta)
        audit.record(rt.redis, repo, "config.reloaded", sha=after, ref=meta.default_branch)
        deployments.request_recheck(rt, repo)  # an environment or a window dropped from the config thaws
        republish(rt, repo)
        return "config-reloaded, republished"
    return f"moved {moved}"


def _touches_config(payload: dict[str, Any]) -> bool:
    for commit in payload.get("commits") or []:
        for field in ("added", "modified", "removed"):
            if CONFIG_PATH in (commit.get(field) or []):
                return True
    head = payload.get("head_commit") or {}
    return any(CONFIG_PATH in (head.get(f) or []) for f in ("added", "modified", "removed"))


def on_merge_group(rt: Runtime, payload: dict[str, Any]) -> str:
    """A merge queue group's commit gets its PR's status too (the PR named by the group's branch)."""
    repo = repo_name(payload)
    group = payload.get("merge_group") or {}
    if repo is None or not group.get("head_sha"):  # checks_requested only (`core.events`)
        return "ignored"
    _meta(rt, repo, payload)
    queued = group_number(str(group.get("head_ref", "")))
    if queued is not None and _first(rt, repo, f"queued:{group['head_sha']}") and rt.redis.sismember(
            keys.held_prs(repo), str(queued)):  # news for chat channels, once per group
        audit.record(rt.redis, repo, "pr.queued", number=queued)
    return merge_groups.checks_requested(rt, repo, group)


def on_status(rt: Runtime, payload: dict[str, Any]) -> str:
    """A `merge-hold` status we did not post is forged: record it and put ours back, once per verdict."""
    treecloser.on_status(rt, payload)
    repo = repo_name(payload)
    if repo is None or payload.get("context") != CONTEXT:
        return "ignored"
    return own_status.on_status(rt, repo, payload)


def on_repository(rt: Runtime, payload: dict[str, Any]) -> str:
    """A renamed or transferred repo: its holds, exemptions, room holds, config and indexes move to the
    new name, and its PRs are republished under it."""
    new = repo_name(payload)
    old = moves.old_name(payload)
    if new is None or old is None:  # renamed or transferred (`core.events`)
        return "ignored"
    if store.load_repo(rt.redis, old) is None and store.load_repo(rt.redis, new) is None:
        return "not managed"
    moved = moves.move_repo(rt, old, new, installation_id(payload))
    audit.record(rt.redis, new, "repo.moved", old=old, new=new, action=payload.get("action"), keys=moved)
    republish(rt, new)
    return f"moved {moved} keys from {old}, republished"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


HANDLERS: dict[str, Handler] = {  # one per queued event of `core.events` (tests/test_event_table.py)
    "issue_comment": on_issue_comment,
    "pull_request_review": on_pull_request_review,
    "pull_request": on_pull_request,
    "push": on_push,
    "merge_group": on_merge_group,
    "installation": installations.on_installation,
    "installation_repositories": installations.on_installation_repositories,
    "status": on_status,
    "repository": on_repository,
    "issues": holdfor.on_issues,
    "check_run": treecloser.on_check_run,
    "check_suite": treecloser.on_check_suite,
    "branch_protection_rule": on_gate_event,
    "branch_protection_configuration": on_gate_event,
    "repository_ruleset": on_gate_event,
    "deployment_protection_rule": deployments.on_deployment_protection_rule,
}
