"""Exemptions over the API: ``POST /api/v1/exemptions``, ``DELETE /api/v1/exemptions/{owner}/{repo}/{number}``,
``GET /api/v1/exemptions``.

An exemption lets one PR through room and freeze holds (never comment, review or label holds). It covers
the PR's head as merge-hold knows it now — a caller that reviewed a given commit says so with ``head_sha``,
and is refused (409) when the PR has moved on — and a push ends it. ``sticky: true`` follows every push.
Who may (`core.exemptions.refusal`): a ``hold`` token grants and ends exemptions within its orgs; a sticky
one needs an ``admin`` token. Recorded like a chat exemption (`state.room_holds`, by the token's name,
origin ``api:NAME``), then the PR is republished by the same job the holds API queues.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from flask import Blueprint, jsonify, request

from app import reads
from app.api_holds import Reply, managed, republish
from app.auth import current_identity, require_token
from app.json_body import json_object
from app.services import services
from app.token_store import Identity
from core import keys
from core.comments import clean_reason
from core.durations import format_duration, parse_duration
from core.exemptions import Door, coverage, refusal
from core.holds import Exemption
from core.permissions import Permission
from core.targets import TargetError, is_pr_scope, parse_target
from state import room_holds, store

bp = Blueprint("api_exemptions", __name__, url_prefix="/api/v1")

HEX = frozenset("0123456789abcdef")


def _error(message: str, status: int, **extra: object) -> Reply:
    return jsonify(error=message, **extra), status


def role(identity: Identity) -> Permission:
    """A token's scope as a repository role, for `core.exemptions.refusal`: admin is admin, hold maintain."""
    if identity.may("admin"):
        return Permission.ADMIN
    return Permission.MAINTAIN if identity.may("hold") else Permission.NONE


def _shown(exemption: Exemption) -> dict[str, object]:
    return {**exemption.to_dict(), "covers": coverage(exemption.head_sha, exemption.sticky)}


@bp.post("/exemptions")
@require_token(permission="hold")
def grant() -> Reply:
    identity = current_identity()
    assert identity is not None
    body = json_object()
    if body is None:
        return _error('body must be JSON: {"target": "owner/repo#12", "reason": ..., "sticky": false}', 400)
    target, reason, span, sticky, seen = (body.get("target"), body.get("reason"), body.get("for"),
                                          body.get("sticky", False), body.get("head_sha"))
    try:
        scope = parse_target(target) if isinstance(target, str) else ""
    except TargetError as exc:
        return _error(str(exc), 400)
    if not is_pr_scope(scope):
        return _error("target is one pull request: owner/repo#123 or its URL", 400)
    reason = clean_reason(reason) if isinstance(reason, str) else ""
    if not reason:
        return _error("reason is required: it is what the PR's history and the chat say", 400)
    duration = parse_duration(span) if isinstance(span, str) else None
    if span is not None and duration is None:
        return _error('for must be a duration such as "30m", "2h" or "1d12h" (at most 90d)', 400)
    if not isinstance(sticky, bool):
        return _error("sticky must be true or false", 400)
    if seen is not None and not (isinstance(seen, str) and 7 <= len(seen) <= 40 and set(seen.lower()) <= HEX):
        return _error("head_sha must be the commit you reviewed (hex, 7 to 40 characters)", 400)
    if not identity.covers(scope):
        return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}", 403)
    refused = refusal(Door.API, role(identity), sticky=sticky)
    if refused is not None:
        return _error(refused, 403)
    if not managed(scope):
        return _error(f"merge-hold does not manage {scope}: is the GitHub App installed there?", 404)
    repo, _, number = scope.partition("#")
    redis = services().redis
    head = store.load_pull(redis, repo, int(number)).head_sha
    if head is None:
        return _error(f"merge-hold has not seen the head commit of {scope} yet; try again in a moment", 409)
    if seen is not None and not head.lower().startswith(seen.lower()):
        return _error(f"{scope} is at {head[:7]} now, not {seen[:7]}: review that head and ask again", 409,
                      head_sha=head)
    exemption = room_holds.place_exemption(redis, scope, by=identity.actor, reason=reason,
                                           origin=f"api:{identity.name}", now=datetime.now(UTC), head_sha=head,
                                           duration=duration, sticky=sticky)
    republish(scope)
    return jsonify(exemption=_shown(exemption), **{"for": format_duration(duration) if duration else None}), 201


@bp.delete("/exemptions/<owner>/<name>/<int:number>")
@require_token(permission="hold")
def end(owner: str, name: str, number: int) -> Reply:
    identity = current_identity()
    assert identity is not None
    scope = f"{owner}/{name}#{number}"
    if not reads.valid_repo(f"{owner}/{name}") or not identity.covers(scope):
        return _error("no such exemption", 404)  # outside the token's orgs: not even its existence
    ended = room_holds.lift_exemption(services().redis, scope, actor=identity.actor, origin=f"api:{identity.name}")
    if ended is None:
        return _error("no such exemption", 404)
    republish(scope)
    return jsonify(ended=ended.to_dict()), 200


@bp.get("/exemptions")
@require_token
def listed() -> Reply:
    """The exemptions in force within the token's orgs (``?repo=owner/repo`` for one repo): each with the
    head it covers (or ``sticky``) and whether the PR is still on that head."""
    identity = current_identity()
    assert identity is not None
    redis, now = services().redis, datetime.now(UTC)
    wanted = request.args.get("repo")
    repos = [r for r in reads.managed_repos(redis) if identity.covers(r) and (wanted is None or r == wanted.lower())]
    found = []
    for repo in repos:
        for raw in redis.hvals(keys.exemptions(repo)):
            exemption = Exemption.from_dict(json.loads(raw))
            if not exemption.active(now):
                continue
            number = int(exemption.pr_scope.partition("#")[2])
            head = store.load_pull(redis, repo, number).head_sha
            found.append({**_shown(exemption), "in_force": exemption.covers(head, now)})
    return jsonify(exemptions=sorted(found, key=lambda e: str(e["pr_scope"]))), 200
