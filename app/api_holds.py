"""Room holds over the API, for machines: ``POST /api/v1/holds`` and ``DELETE /api/v1/holds/{id}``.

A deploy pipeline freezes merges while it runs: a ``hold``-scoped token places a room hold on a PR,
branch, repo or org within its orgs, and lifts it after. ``paths`` (gitignore-style globs) scopes the hold
to the PRs that change a matching file. The hold is recorded the way a chat hold is
(`state.room_holds`, held and audited as ``token:NAME``, never a bare name that could pass for a GitHub
user's; origin ``api:NAME``) and the same republish job then publishes the statuses. Who may place and
lift is the one rule of `core.hold_rights`: a ``hold`` token lifts the holds it placed, an ``admin``
token any room hold within its orgs — as on the page.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, jsonify, request

from app import reads
from app.auth import current_identity, require_token
from app.json_body import json_object
from app.services import services
from app.token_store import Identity
from core import hold_rights, jobs
from core.chat_request import REPUBLISH_JOB
from core.comments import clean_reason
from core.durations import format_duration, parse_duration
from core.hold_rights import Facts, Token
from core.paths import PathsError, check
from core.scopes import scope_repo
from core.targets import TargetError, parse_target
from state import room_holds
from state.queueing import options

bp = Blueprint("api_holds", __name__, url_prefix="/api/v1")

Reply = tuple[Response, int]
MAX_BODY = 16 * 1024
"""A hold request is a target, a reason (500 characters at most) and a duration."""


def _error(message: str, status: int) -> Reply:
    return jsonify(error=message), status


def managed(scope: str) -> bool:
    """Whether the App serves the scope: its repo, or (an org scope) at least one repo of the org."""
    redis = services().redis
    repo = scope_repo(scope)
    if repo is not None:
        return reads.is_managed(redis, repo)
    return any(r.split("/", 1)[0].lower() == scope.lower() for r in reads.managed_repos(redis))


def republish(scope: str) -> None:
    services().queue.enqueue(REPUBLISH_JOB, scope, **options(jobs.REPUBLISH),
                             description=f"republish {scope} after an API hold change")


def _body() -> tuple[dict[str, Any] | None, Reply | None]:
    request.max_content_length = MAX_BODY  # beyond it Werkzeug raises 413, answered as JSON
    parsed = json_object()
    if parsed is None:
        return None, _error('body must be JSON: {"target": ..., "reason": ..., "for": "30m"}', 400)
    return parsed, None


def _holder(identity: Identity) -> str:
    return _token(identity).holder_id


def _token(identity: Identity) -> Token:
    return Token(identity.name, identity.scope, identity.orgs)


@bp.post("/holds")
@require_token(permission="hold")
def place() -> Reply:
    identity = current_identity()
    assert identity is not None
    body, bad = _body()
    if bad is not None or body is None:
        return bad or _error("no body", 400)
    target, reason, span = body.get("target"), body.get("reason"), body.get("for")
    if not isinstance(target, str):
        return _error("target is required: owner, owner/repo, owner/repo@branch-glob or owner/repo#123", 400)
    try:
        scope = parse_target(target)
    except TargetError as exc:
        return _error(str(exc), 400)
    reason = clean_reason(reason) if isinstance(reason, str) else ""
    if not reason:
        return _error("reason is required: it is what the PR's status says", 400)
    duration = None
    if span is not None:
        duration = parse_duration(span) if isinstance(span, str) else None
        if duration is None:
            return _error('for must be a duration such as "30m", "2h" or "1d12h" (at most 90d)', 400)
    paths, bad_paths = _paths(body.get("paths"))
    if bad_paths is not None:
        return bad_paths
    if not identity.covers(scope):
        return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}", 403)
    if not hold_rights.may_place(_token(identity), scope, Facts()):
        return _error(f"token {identity.name!r} has scope {identity.scope!r}; placing a hold needs hold or admin", 403)
    if not managed(scope):
        return _error(f"merge-hold does not manage {scope}: is the GitHub App installed there?", 404)
    hold = room_holds.place_hold(services().redis, scope, holder=identity.actor, holder_id=_holder(identity),
                                 reason=reason, origin=_holder(identity), now=datetime.now(UTC), duration=duration,
                                 paths=paths)
    republish(scope)
    answer = {"hold": hold.to_dict(), "for": format_duration(duration) if duration else None}
    return jsonify(answer), 201


def _paths(value: Any) -> tuple[tuple[str, ...], Reply | None]:
    """The body's optional ``paths``: gitignore-style globs (`core.paths`), or the 400 saying why not."""
    if value is None:
        return (), None
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        return (), _error('paths must be a list of gitignore-style globs, e.g. ["db/migrations/**", '
                          '"!db/migrations/README.md"]', 400)
    try:
        return check(value), None
    except PathsError as exc:
        return (), _error(f"paths: {exc}", 400)


@bp.delete("/holds/<path:hold_id>")
@require_token(permission="hold")
def lift(hold_id: str) -> Reply:
    identity = current_identity()
    assert identity is not None
    redis = services().redis
    hold = room_holds.find_hold(redis, hold_id)
    if hold is None or not identity.covers(hold.scope):
        return _error("no such room hold", 404)  # outside the token's orgs: not even its existence
    token = _token(identity)
    if not hold_rights.may_lift(token, hold.id, hold.scope, Facts()):
        return _error(hold_rights.lift_refusal(token, hold.id, hold.scope, Facts()), 403)
    room_holds.lift_hold(redis, hold, actor=identity.actor, origin=_holder(identity))
    republish(hold.scope)
    return jsonify(lifted=hold.to_dict()), 200
