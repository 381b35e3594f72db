"""``GET /api/v1/freeze/{owner}/{repo}?branch=B``: is the branch frozen, by what, until when, and may it deploy.

For deploy scripts and release tooling (issue 30 item 3). A ``read`` token within the repo's org, as every
``/api/v1`` read. The answer comes from the rule the gate and the deployment protection rule use
(`core.freeze_outlook`, over `core.deployments`): freeze windows of the repo config as the workers last
read it, and the room holds on the repo, a branch glob of it and its org. A config that cannot be read
(invalid, not read yet) answers ``frozen: null`` and ``allow_deployments: false``: never free on doubt.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, jsonify, request

from app import reads
from app.api import outside_orgs
from app.auth import require_token
from app.services import services
from core.deployments import phrase
from core.freeze_outlook import deployments_allowed, outlook
from core.holds import Hold, Source, to_iso
from state import room_holds, store
from state.config_file import repo_config

bp = Blueprint("freeze_api", __name__, url_prefix="/api/v1")

MAX_BRANCH = 255
"""Git refuses longer ref names on GitHub; anything longer is not a branch."""

Reply = tuple[Response, int]


def _error(message: str, status: int) -> Reply:
    return jsonify(error=message), status


def _name(value: str | None, what: str) -> tuple[str | None, Reply | None]:
    if value is None:
        return None, None
    if not value or len(value) > MAX_BRANCH or any(ord(c) < 0x20 or c == "\x7f" for c in value):
        return None, _error(f"{what} must be a name of 1 to {MAX_BRANCH} printable characters", 400)
    return value, None


def _hold(hold: Hold) -> dict[str, Any]:
    """A hold as the verdict record shows it, with what kind of freeze it is."""
    kind = "window" if hold.source is Source.FREEZE else "hold"
    return {**hold.to_dict(), "kind": kind}


@bp.get("/freeze/<owner>/<name>")
@require_token
def freeze(owner: str, name: str) -> Reply:
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo):
        return _error("not a repository name", 400)
    refused = outside_orgs(repo)
    if refused is not None:
        return refused
    branch, bad_branch = _name(request.args.get("branch"), "branch")
    environment, bad_environment = _name(request.args.get("environment"), "environment")
    for bad in (bad_branch, bad_environment):
        if bad is not None:
            return bad
    redis = services().redis
    if not reads.is_managed(redis, repo):
        return _error(f"merge-hold does not manage {repo}: is the GitHub App installed there?", 404)
    meta = store.load_repo(redis, repo)
    branch = branch or (meta.default_branch if meta is not None else None)
    if not branch:
        return _error("branch is required: ?branch=main", 400)
    now = datetime.now(UTC)
    scoped = room_holds.scoped_holds(redis, repo)
    config, error = repo_config(meta)
    answer: dict[str, Any] = {"repo": repo.lower(), "branch": branch, "checked_at": to_iso(now)}
    if config is None:
        return jsonify(**answer, frozen=None, frozen_by=[], reason=None, frozen_until=None, next_freeze_at=None,
                       next_thaw_at=None, allow_deployments=False, deployments=None,
                       error=f"the repo config cannot be read ({error}): freezes are not known"), 200
    seen = outlook(config, repo, branch, scoped, now)
    reason = phrase(seen.holds[0]) if seen.holds else None
    if reason is not None and len(seen.holds) > 1:
        reason += f" (+{len(seen.holds) - 1} more)"
    return jsonify(
        **answer,
        frozen=seen.frozen,
        frozen_by=[_hold(h) for h in seen.holds],
        reason=reason,
        frozen_until=to_iso(seen.next_thaw_at) if seen.frozen else None,
        next_freeze_at=to_iso(seen.next_freeze_at),
        next_thaw_at=to_iso(seen.next_thaw_at),
        allow_deployments=deployments_allowed(config, repo, branch, scoped, now, environment),
        deployments={"environments": list(config.freeze_deployments), "on_freeze": config.deployments_on_freeze,
                     **({"environment": environment} if environment is not None else {})},
        error=None,
    ), 200
