"""What the event handlers share: a commenter's permission (cached), the one way a handler records a
change (state and recompute in one EXEC: step 5 of a delivery's path, docs/architecture.md), and the
audit of what a comment or review did (once per comment, however often it is redelivered)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from core import keys
from core.permissions import Permission, permission_from_association
from core.prstate import PullState
from state import audit, store
from state.recompute_requests import RecomputeRequest
from workers.publishing import recompute_in_delivery, request_recompute
from workers.runtime import Runtime

T = TypeVar("T")

PERMISSION_TTL = 600
"""Permission look-ups are cached ten minutes: a revoked maintainer keeps lifting power that long at most."""
AUDITED_TTL = 3 * 24 * 3600
"""Per comment or review (far fewer than deliveries): GitHub's whole redelivery window, so the audit
history never lists one comment's outcomes twice."""


def permission_of(rt: Runtime, repo: str, login: str, association: str | None) -> Permission:
    settled = permission_from_association(association)
    if settled is not None:
        return settled
    return looked_up_permission(rt, repo, login)


def looked_up_permission(rt: Runtime, repo: str, login: str) -> Permission:
    """The login's permission on the repo as GitHub says (cached `PERMISSION_TTL`): for an event that
    carries no ``author_association``, such as a label's sender."""
    key = keys.permission_cache(repo, login)
    cached = rt.redis.get(key)
    if cached is not None:
        return Permission(int(cached))
    found = rt.github.permission(repo, login)
    rt.redis.set(key, int(found), ex=PERMISSION_TTL)
    return found


def record_outcomes(rt: Runtime, repo: str, number: int, outcomes: list[Any], item: str) -> None:
    """Audit what a comment or review did, once per ``item``: the same comment redelivered under a new
    delivery id (GitHub's redelivery, our sweep's) applies as a no-op and must not log it again."""
    if not outcomes or not rt.redis.set(keys.audited(repo, item), "1", nx=True, ex=AUDITED_TTL):
        return
    for outcome in outcomes:
        audit.record(rt.redis, repo, f"hold.{outcome.kind}", number=number, actor=outcome.actor,
                    target=outcome.target, reason=outcome.reason, message=outcome.message)


def first_time(rt: Runtime, repo: str, item: str) -> bool:
    """Whether ``item`` is seen for the first time (a redelivered event is told once)."""
    return bool(rt.redis.set(keys.audited(repo, item), "1", nx=True, ex=AUDITED_TTL))


def apply_change(rt: Runtime, repo: str, number: int, change: Callable[[PullState], PullState]) -> bool:
    """Record a change of the PR's state (a rule of `core`, partially applied: the state write calls it
    under its WATCH, so a function of the caller's would be a call up from `state/`; tests/test_state_write_rules.py
    checks every caller) and ask for its recompute in the same EXEC; returns whether anything changed (see
    `apply_rule`)."""
    _state, changed = store.update_pull(rt.redis, repo, number, change, request=_request(rt, repo, number))
    _finish(rt, repo, number, changed)
    return changed


def apply_rule(rt: Runtime, repo: str, number: int,
               rule: Callable[[PullState], tuple[PullState, T]]) -> tuple[PullState, T, bool]:
    """Record what a rule of `core` makes of the PR's state and ask for its recompute in the same EXEC
    (a worker killed in between leaves neither); returns the state before, what the rule found, and
    whether anything changed."""
    before, _after, found, changed = store.update_pull_with(rt.redis, repo, number, rule,
                                                            request=_request(rt, repo, number))
    _finish(rt, repo, number, changed)
    return before, found, changed


def _request(rt: Runtime, repo: str, number: int) -> RecomputeRequest:
    """Inside a delivery its scope makes the request (the job a backstop, the recompute run in place:
    `workers.publishing.in_delivery`); outside, a job queued with the state change."""
    return rt.delivery.ask_in_place(rt.queue, repo, number) if rt.delivery is not None \
        else RecomputeRequest(rt.queue, repo, number)


def _finish(rt: Runtime, repo: str, number: int, changed: bool) -> None:
    """Unchanged, still ask for the recompute when the PR has no verdict yet (met for the first time, or
    state lost) or one older than its state (a recompute that never finished): a retried delivery
    finishes what its killed first run began."""
    if changed:
        return
    verdict = store.load_verdict(rt.redis, repo, number)
    if verdict is None or int(verdict.get("state_version") or 0) < store.state_version(rt.redis, repo, number):
        request_recompute(rt, repo, number)
        recompute_in_delivery(rt, repo, number)  # and at once, even if that request was coalesced
