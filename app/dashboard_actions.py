"""Acting from the dashboard: place and lift holds on a PR's page, the room holds and freeze windows on
`/rooms`. Plain HTML forms (CSRF-checked by `app.security`), no script.

A dashboard hold is a room hold on the PR (``owner/repo#N``) with the holder's GitHub login and origin
``dashboard``, recorded through `workers.room_state` like a chat or API hold and then republished by
the same job. Who may: the repo config's ``hold_permission`` (write by default) or the PR's author
(``author_can_hold``) to hold; one's own hold to lift; ``lift_others_permission`` (maintain) for
others' holds and for room holds on `/rooms`. Roles come from GitHub for a GitHub sign-in and from the
token's scope for a token login (`app.auth.role_in`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import yaml
from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from app import reads
from app.auth import RANK, current_identity, login_required, may_see, role_in
from app.services import services
from core import keys
from core.chat_request import REPUBLISH_JOB
from core.comments import clean_reason
from core.durations import parse_duration
from core.holds import Exemption, Hold
from core.repo_config import DEFAULT_CONFIG, ConfigError, RepoConfig, from_mapping
from core.scopes import scope_repo
from workers import room_state, store

bp = Blueprint("actions", __name__)

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def repo_config(repo: str) -> RepoConfig:
    """The repo's `.github/merge-hold.yml` as the workers last read it (defaults when absent or invalid)."""
    meta = store.load_repo(services().redis, repo)
    if meta is None or not meta.config_text:
        return DEFAULT_CONFIG
    try:
        return from_mapping(yaml.safe_load(meta.config_text))
    except (ConfigError, yaml.YAMLError, ValueError):
        return DEFAULT_CONFIG


def _who() -> str:
    identity = current_identity()
    assert identity is not None
    return identity.name


def _holder_id(login: str) -> str:
    return f"dashboard:{login}"


def may_hold(repo: str, number: int) -> bool:
    config = repo_config(repo)
    if RANK[role_in(repo)] >= RANK[config.hold_permission]:
        return True
    facts = store.load_pull(services().redis, repo, number).facts
    return config.author_can_hold and facts is not None and facts.author.lower() == _who().lower()


def may_lift(hold: Hold) -> bool:
    """One's own hold; others' with ``lift_others_permission`` in the repo. An org-wide hold spans repos
    with different roles: only its holder or an admin token lifts it here."""
    if hold.id.removeprefix("room:").rpartition(":")[0] == _holder_id(_who()):
        return True
    repo = scope_repo(hold.scope)
    if repo is None:
        identity = current_identity()
        return identity is not None and identity.scope == "admin" and identity.fingerprint != "github"
    return RANK[role_in(repo)] >= RANK[repo_config(repo).lift_others_permission]


def may_see_scope(scope: str) -> bool:
    repo = scope_repo(scope)
    if repo is not None:
        return may_see(repo)
    # An org-wide hold is shown to whoever sees one of the org's repos.
    return any(may_see(r) for r in reads.managed_repos(services().redis) if r.split("/", 1)[0] == scope.lower())


def _republish(scope: str) -> None:
    services().queue.enqueue(REPUBLISH_JOB, scope, result_ttl=0, failure_ttl=7 * 86400,
                             description=f"republish {scope} after a dashboard hold change")


def _repo_or_404(owner: str, name: str) -> str:
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo) or not may_see(repo):
        abort(404)
    return repo


@bp.post("/<owner>/<name>/pull/<int:number>/hold")
@login_required
def hold(owner: str, name: str, number: int) -> Response:
    repo = _repo_or_404(owner, name)
    back = redirect(url_for("dashboard.pull", owner=owner, name=name, number=number))
    if not reads.is_managed(services().redis, repo):
        abort(404)
    if not may_hold(repo, number):
        flash(f"Holding needs {repo_config(repo).hold_permission} access to {repo}.", "error")
        return back
    reason = clean_reason(request.form.get("reason", ""))
    span = request.form.get("for", "").strip()
    duration = parse_duration(span) if span else None
    if not reason or (span and duration is None):
        flash("A hold needs a reason; the time, if given, reads like 30m, 2h or 1d (at most 90d).", "error")
        return back
    scope = f"{repo}#{number}"
    login = _who()
    room_state.place_hold(services().redis, scope, holder=login, holder_id=_holder_id(login), reason=reason,
                          origin="dashboard", now=datetime.now(UTC), duration=duration)
    _republish(scope)
    flash(f"Held {scope}: {reason}. The status updates in a moment.", "ok")
    return back


@bp.post("/holds/lift")
@login_required
def lift() -> Response:
    found = room_state.find_hold(services().redis, request.form.get("hold_id", ""))
    target = "pull" if request.form.get("back") == "pull" else "rooms"
    if found is None or not may_see_scope(found.scope):
        abort(404)
    if not may_lift(found):
        flash("Lifting someone else's hold needs maintain access.", "error")
    else:
        room_state.lift_hold(services().redis, found, actor=_who(), origin="dashboard")
        _republish(found.scope)
        flash(f"Lifted @{found.holder}'s hold on {found.scope}.", "ok")
    if target == "pull" and "#" in found.scope:
        owner, _, rest = found.scope.partition("/")
        name, _, number = rest.partition("#")
        return redirect(url_for("dashboard.pull", owner=owner, name=name, number=int(number)))
    return redirect(url_for("actions.rooms"))


def week(config: RepoConfig) -> list[dict[str, Any]]:
    """Each freeze window as a row of the week: its hours on the days it runs, in its own time zone."""
    rows = []
    for window in config.freeze_windows:
        hours = f"{window.start} to {window.end}"
        rows.append({"name": window.name, "timezone": window.timezone, "branches": ", ".join(window.branches),
                     "days": [hours if day in window.days else "" for day in DAYS]})
    return rows


@bp.get("/rooms")
@login_required
def rooms() -> str:
    redis = services().redis
    now = datetime.now(UTC)
    visible = [r for r in reads.managed_repos(redis) if may_see(r)]
    holds: list[Hold] = []
    for key in [keys.room_holds(r) for r in visible] + [keys.org_room_holds(o) for o in
                                                         sorted({r.split("/", 1)[0] for r in visible})]:
        holds += [h for h in room_state.holds_in(redis, key) if h.active(now)]
    holds.sort(key=lambda h: (h.scope, h.created_at))
    exemptions = [found for r in visible for raw in redis.hvals(keys.exemptions(r))
                  if (found := Exemption.from_dict(json.loads(raw))).active(now)]
    rows = [{"hold": h.to_dict(), "may_lift": may_lift(h)} for h in holds]
    freezes = [(r, week(c)) for r in visible if (c := repo_config(r)).freeze_windows]
    return render_template("rooms.html", rows=rows, exemptions=[e.to_dict() for e in exemptions],
                           freezes=freezes, days=DAYS)
