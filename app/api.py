"""The JSON API under ``/api/v1``: verdicts, holds and audit events to read, hook records to store.

Every route needs a bearer token (`app.auth`) whose scope grants the route's permission, and a repo
within the token's orgs. Hook records are stored for the audit log only; no verdict ever consults
them. Room holds are placed and lifted in `app.api_holds`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from app import reads
from app.auth import current_identity, require_token
from app.services import services
from core import json_text, keys
from state import branch_freezes, subscriptions

bp = Blueprint("api", __name__, url_prefix="/api/v1")

HOOK_EVENTS_MAX = 500
HOOK_EVENTS_MAX_BYTES = 1024 * 1024
HOOK_EVENTS_MAXLEN = 100_000
"""Approximate length the hook-records stream is trimmed to (``MAXLEN ~``): record only, bounded."""
EVENTS_DEFAULT_LIMIT = 50
EVENTS_MAX_LIMIT = 500

Reply = tuple[Response, int]


def _error(message: str, status: int, **extra: Any) -> Reply:
    return jsonify(error=message, **extra), status


def _repo(owner: str, name: str) -> str | None:
    repo = f"{owner}/{name}"
    return repo if reads.valid_repo(repo) else None


def outside_orgs(repo: str) -> Reply | None:
    """403 when the token is limited to orgs that do not include ``repo``'s."""
    identity = current_identity()
    if identity is None or identity.covers(repo):
        return None
    return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}", 403)


def _verdict_reply(repo: str, number: int | None, *, by_branch: bool = False) -> Reply:
    refused = outside_orgs(repo)
    if refused is not None:
        return refused
    redis = services().redis
    record = reads.verdict(redis, repo, number) if number is not None else None
    if record is None:  # a branch's PR without a verdict yet is named: the hook's stack rule reads it as unknown
        named = {"number": number} if by_branch and number is not None else {}
        return _error("no verdict", 404, managed=reads.is_managed(redis, repo), **named)
    return jsonify(record), 200


@bp.get("/verdicts/<owner>/<name>/<int:number>")
@require_token
def verdict(owner: str, name: str, number: int) -> Reply:
    repo = _repo(owner, name)
    if repo is None:
        return _error("not a repository name", 400)
    return _verdict_reply(repo, number)


@bp.get("/verdicts/<owner>/<name>/branches/<path:branch>")
@require_token
def verdict_by_branch(owner: str, name: str, branch: str) -> Reply:
    repo = _repo(owner, name)
    if repo is None:
        return _error("not a repository name", 400)
    return _verdict_reply(repo, reads.number_for_branch(services().redis, repo, branch), by_branch=True)


def _held_reply(owner: str, name: str, *, freezes: bool = False) -> Reply:
    """``managed``, ``held`` and each held PR's ``heads`` of a repo within the token's orgs, and with
    ``freezes`` its branch freezes record: the one read the agent guard makes."""
    repo = _repo(owner, name)
    if repo is None:
        return _error("not a repository name", 400)
    refused = outside_orgs(repo)
    if refused is not None:
        return refused
    redis = services().redis
    reply: dict[str, Any] = {"managed": reads.is_managed(redis, repo), "held": reads.held_numbers(redis, repo),
                             "heads": reads.held_heads(redis, repo)}
    if freezes:
        reply["freezes"] = branch_freezes.load(redis, repo)
    return jsonify(reply), 200


@bp.get("/repos/<owner>/<name>/held")
@require_token
def held(owner: str, name: str) -> Reply:
    return _held_reply(owner, name)


@bp.get("/repos/<owner>/<name>/guard")
@require_token
def guard(owner: str, name: str) -> Reply:
    """What the agent guard reads about a repo in one request: ``held`` (as ``/held``), each held PR's
    ``heads`` (base, head SHA, status description) and ``freezes``, the repo's branch freezes record
    (`core.branch_freezes`; null when none is written): a push into a freeze, the SessionStart context."""
    return _held_reply(owner, name, freezes=True)


def _repo_arg() -> tuple[str | None, Reply | None]:
    repo = request.args.get("repo")
    if repo is None:
        return None, None
    if not reads.valid_repo(repo):
        return None, _error("repo must be owner/repo", 400)
    return repo, outside_orgs(repo)


@bp.get("/holds")
@require_token
def holds() -> Reply:
    repo, bad = _repo_arg()
    if bad is not None:
        return bad
    identity = current_identity()
    rows = [row for row in reads.active_holds(services().redis, datetime.now(UTC), repo)
            if identity is None or identity.covers(str(row.get("repo") or ""))]
    return jsonify(holds=rows), 200


@bp.get("/events")
@require_token
def events() -> Reply:
    repo, bad = _repo_arg()
    if bad is not None:
        return bad
    identity = current_identity()
    if repo is None and identity is not None and identity.orgs:
        return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}: pass ?repo=OWNER/NAME", 403)
    try:
        limit = int(request.args.get("limit", EVENTS_DEFAULT_LIMIT))
    except ValueError:
        return _error("limit must be a whole number", 400)
    if not 1 <= limit <= EVENTS_MAX_LIMIT:
        return _error(f"limit must be between 1 and {EVENTS_MAX_LIMIT}", 400)
    before = request.args.get("before")
    if before is not None and not reads.stream_cursor(before):
        return _error("before must be a stream id such as 1700000000000-0 (each part below 2**64)", 400)
    page, cursor = reads.events(services().redis, repo=repo, limit=limit, before=before)
    return jsonify(events=page, next=cursor), 200


def _hook_events_body() -> tuple[list[dict[str, Any]] | None, Reply | None]:
    if request.content_length is not None and request.content_length > HOOK_EVENTS_MAX_BYTES:
        return None, _error(f"body larger than {HOOK_EVENTS_MAX_BYTES} bytes", 413)
    request.max_content_length = HOOK_EVENTS_MAX_BYTES
    try:
        body = request.get_data(cache=False)
    except RequestEntityTooLarge:
        return None, _error(f"body larger than {HOOK_EVENTS_MAX_BYTES} bytes", 413)
    try:
        parsed = json_text.loads(body)
    except json_text.TooDeep:
        return None, _error(f"body nests deeper than {json_text.MAX_DEPTH} levels", 400)
    except ValueError:
        return None, _error("body is not valid JSON", 400)
    items = parsed.get("events") if isinstance(parsed, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        return None, _error('body must be {"events": [objects]}', 400)
    if len(items) > HOOK_EVENTS_MAX:
        return None, _error(f"at most {HOOK_EVENTS_MAX} events per request", 413)
    return items, None


def _named_repos(item: dict[str, Any]) -> list[str]:
    """The repos a hook record names: its ``repo`` and each of its ``merges``' (the hook's record shape)."""
    merges = item.get("merges")
    named = [item.get("repo"), *(m.get("repo") for m in merges if isinstance(m, dict))] if isinstance(
        merges, list) else [item.get("repo")]
    return [repo for repo in named if isinstance(repo, str) and repo]


@bp.post("/hook-events")
@require_token(permission="hook-events")
def hook_events() -> Reply:
    items, bad = _hook_events_body()
    if bad is not None or items is None:
        return bad or _error("no events", 400)
    identity = current_identity()
    if identity is not None and identity.orgs:
        outside = sorted({repo for item in items for repo in _named_repos(item) if not identity.covers(repo)})
        if outside:
            return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}; "
                          f"the records name {', '.join(outside[:3])}", 403)
    pipe = services().redis.pipeline(transaction=True)
    for item in items:
        fields: dict[Any, Any] = {
            "event": "hook.gate.fired",
            "data": json.dumps(item, separators=(",", ":"), sort_keys=True),
        }
        if identity is not None:
            fields["by"] = identity.name  # which token folded the records, for the audit trail
        pipe.xadd(keys.HOOK_EVENTS, fields, maxlen=HOOK_EVENTS_MAXLEN, approximate=True)
    try:
        pipe.execute()
    except Exception:
        return _error("could not store the events; retry later", 503)
    subscriptions.note_hook_records(services().redis, items)  # blocked merges: subscribed channels hear
    return jsonify(stored=len(items)), 202
