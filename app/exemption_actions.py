"""Exempting a PR from its page: ``POST /{owner}/{repo}/pull/{n}/exempt`` and ``…/unexempt``.

What the page shows of the PR's exemption (`page_exemption`) and who may act (`core.exemptions.refusal`
with the viewer's role in the repo): maintain or admin grants and ends an exemption bound to the head
shown on the page; admin may make it sticky (it then follows every push). The form carries the head the
page showed, so a push made while someone reads the page is never exempted unseen: the grant is refused
and the page shows the new head. Recorded as chat's ``/hold exempt`` records it (`state.room_holds`, by
the signed-in login, origin ``dashboard``), then the PR is republished.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, abort, flash, redirect, request, url_for
from werkzeug.wrappers import Response

from app import reads
from app.auth import login_required, may_see, role_in
from app.dashboard_actions import acting_login, republish_scope
from app.services import services
from core.comments import clean_reason
from core.durations import parse_duration
from core.exemptions import Door, coverage, refusal
from core.permissions import Permission
from state import room_holds, store

bp = Blueprint("exemptions", __name__)


def may_exempt(repo: str, *, sticky: bool = False) -> bool:
    return refusal(Door.PAGE, Permission.parse(role_in(repo)), sticky=sticky) is None


def page_exemption(repo: str, number: int, history: list[dict[str, Any]]) -> dict[str, Any]:
    """The PR page's exemption box: the exemption in force (what it covers), or the last one a push
    ended (newest history first), and what the viewer may do."""
    redis, now = services().redis, datetime.now(UTC)
    found = store.exemption(redis, repo, number)
    head = store.load_pull(redis, repo, number).head_sha
    current = None
    if found is not None and found.active(now):
        current = {**found.to_dict(), "covers": coverage(found.head_sha, found.sticky),
                   "in_force": found.covers(head, now)}
    ended = None
    for entry in history:
        if entry.get("event") == "room.exempted":
            break
        data = entry.get("data")
        if entry.get("event") == "exemption.ended" and isinstance(data, dict) and data.get("cause") == "push":
            ended = {**data, "at": entry.get("at")}
            break
    return {"current": current, "ended": ended, "head": head, "may": may_exempt(repo),
            "may_sticky": may_exempt(repo, sticky=True)}


def _page(owner: str, name: str, number: int) -> Response:
    return redirect(url_for("dashboard.pull", owner=owner, name=name, number=number))


def _repo_or_404(owner: str, name: str) -> str:
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo) or not may_see(repo) or not reads.is_managed(services().redis, repo):
        abort(404)
    return repo


@bp.post("/<owner>/<name>/pull/<int:number>/exempt")
@login_required
def exempt(owner: str, name: str, number: int) -> Response:
    repo, back = _repo_or_404(owner, name), _page(owner, name, number)
    sticky = request.form.get("sticky") == "1"
    refused = refusal(Door.PAGE, Permission.parse(role_in(repo)), sticky=sticky)
    if refused is not None:
        flash(f"Not exempted: {refused}.", "error")
        return back
    reason = clean_reason(request.form.get("reason", ""))
    span = request.form.get("for", "").strip()
    duration = parse_duration(span) if span else None
    if not reason or (span and duration is None):
        flash("An exemption needs a reason; the time, if given, reads like 30m, 2h or 1d (at most 90d).", "error")
        return back
    redis = services().redis
    head = store.load_pull(redis, repo, number).head_sha
    shown = request.form.get("head_sha", "")
    if head is None or (shown and shown != head):
        flash(f"Not exempted: {repo}#{number} is at {(head or '?')[:7]} now, not {shown[:7]} as the page "
              "showed. Look at the new head and exempt it again.", "error")
        return back
    scope = f"{repo}#{number}"
    room_holds.place_exemption(redis, scope, by=acting_login(), reason=reason, origin="dashboard",
                               now=datetime.now(UTC), head_sha=head, duration=duration, sticky=sticky)
    republish_scope(scope)
    flash(f"Exempted {scope} from room and freeze holds {coverage(head, sticky)}: {reason}.", "ok")
    return back


@bp.post("/<owner>/<name>/pull/<int:number>/unexempt")
@login_required
def unexempt(owner: str, name: str, number: int) -> Response:
    repo, back = _repo_or_404(owner, name), _page(owner, name, number)
    if not may_exempt(repo):
        flash(f"Not ended: {refusal(Door.PAGE, Permission.parse(role_in(repo)))}.", "error")
        return back
    scope = f"{repo}#{number}"
    ended = room_holds.lift_exemption(services().redis, scope, actor=acting_login(), origin="dashboard")
    if ended is None:
        flash(f"{scope} has no exemption.", "error")
        return back
    republish_scope(scope)
    flash(f"Ended the exemption of {scope} (granted by @{ended.by}: {ended.reason}).", "ok")
    return back
