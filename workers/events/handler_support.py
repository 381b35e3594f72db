"""What the event handlers share: a PR's repo meta and config as an event finds them, a commenter's
permission (cached), the one way a handler records a change (state and recompute in one EXEC), and the
audit of what a comment or review did (once per comment, however often it is redelivered)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core import keys
from core.permissions import Permission, permission_from_association
from core.prstate import PullState
from core.repo_config import DEFAULT_CONFIG, RepoConfig
from state import audit, store
from state.config_file import repo_config
from workers.events.installations import installation_id
from workers.events.repos import ensure_repo
from workers.publishing import RecomputeRequest, recompute_in_delivery, request_recompute
from workers.runtime import Runtime

PERMISSION_TTL = 600
"""Permission look-ups are cached ten minutes: a revoked maintainer keeps lifting power that long at most."""
AUDITED_TTL = 3 * 24 * 3600
"""Per comment or review (far fewer than deliveries): GitHub's whole redelivery window, so the audit
history never lists one comment's outcomes twice."""


def pr_meta(rt: Runtime, repo: str, payload: dict[str, Any]) -> tuple[store.RepoMeta, RepoConfig]:
    repository = payload.get("repository") or {}
    meta = ensure_repo(rt, repo, installation_id=installation_id(payload),
                       default_branch=repository.get("default_branch"), private=bool(repository.get("private")))
    config, _error = repo_config(meta)
    # Commands are recorded under the defaults while the config is invalid; the verdict is `error`
    # until it is fixed, so nothing merges on the strength of a guess.
    return meta, config or DEFAULT_CONFIG


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
    """Record a change in the PR's state and ask for its recompute in the same EXEC (a worker killed
    in between leaves neither). Unchanged, it still asks when the PR has no verdict yet (met for the
    first time, or state lost) or one older than its state (a recompute that never finished): a retried
    delivery finishes what its killed first run began."""
    request = RecomputeRequest(rt.queue, repo, number, rt.delivery)
    _state, changed = store.update_pull(rt.redis, repo, number, change, request=request)
    if not changed:
        verdict = store.load_verdict(rt.redis, repo, number)
        if verdict is None or int(verdict.get("state_version") or 0) < store.state_version(rt.redis, repo, number):
            request_recompute(rt, repo, number)
            recompute_in_delivery(rt, repo, number)  # and at once, even if that request was coalesced
    return changed
