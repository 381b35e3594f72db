"""Freeze and thaw from `/rooms` (issue 14 item 5): an org, a repo or a branch glob, by an admin.

A freeze is a room hold recorded exactly as chat's ``/hold TARGET`` records it (`state.room_holds`),
with origin ``dashboard`` and the signed-in GitHub user as holder (id ``dashboard:LOGIN``, so the
Lift button and a later freeze of theirs renew the same hold). A thaw lifts every room hold on exactly
that scope, as chat's ``/unhold TARGET`` does; holds on narrower or wider scopes stay. Both then queue
the republish the lift form uses, which brings the freeze rulesets in step before fanning out.

Who may: admin on the repo for a repo or branch; for an org, admin on every managed repo of it; or a
user whose login is linked to a chat admin (`/hold link`) of a workspace bound to the target's org
(`app.dashboard_actions.may_freeze`, `app.chat_links`). A freeze needs a GitHub sign-in, since its
holder is a GitHub user; an admin token login may thaw, as it may lift any room hold.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, flash, redirect, request, url_for
from werkzeug.wrappers import Response

from app import reads
from app.auth import login_required, may_see
from app.chat_links import refusal_hint
from app.dashboard_actions import (
    acting_login,
    dashboard_holder_id,
    github_login,
    may_freeze,
    may_see_scope,
    republish_scope,
)
from app.services import services
from core.comments import clean_reason
from core.durations import format_duration, parse_duration
from core.scopes import scope_repo
from core.targets import TargetError, is_pr_scope, parse_target
from state import room_holds

bp = Blueprint("freeze", __name__)

USAGE = "A freeze target is an org (acme), a repo (acme/widgets) or a branch glob (acme/widgets@release/*)."


def _target() -> str | None:
    """The form's target as a scope, or None after flashing why it is not one we manage and show."""
    text = request.form.get("target", "").strip()
    try:
        scope = parse_target(text)
    except TargetError as exc:
        flash(f"{exc}. {USAGE}" if text else USAGE, "error")
        return None
    if is_pr_scope(scope):
        flash(f"{scope} is a pull request: hold it from its page. {USAGE}", "error")
        return None
    repo = scope_repo(scope)
    managed = reads.is_managed(services().redis, repo) and may_see(repo) if repo else may_see_scope(scope)
    if not managed:
        flash(f"merge-hold manages no {'repository' if repo else 'organisation'} {scope} that you can see.",
              "error")
        return None
    return scope


def _refused(scope: str, verb: str) -> Response:
    repo = scope_repo(scope)
    what = f"admin access to {repo}" if repo else f"admin access to every repository of {scope}"
    flash(f"{verb} {scope} needs {what} on GitHub, {refusal_hint(github_login(), scope)}.", "error")
    return redirect(url_for("actions.rooms"))


@bp.post("/rooms/freeze")
@login_required
def freeze() -> Response:
    back = redirect(url_for("actions.rooms"))
    scope = _target()
    if scope is None:
        return back
    login = github_login()
    if login is None:
        flash("Freezing needs Sign in with GitHub: the freeze is held by a GitHub user.", "error")
        return back
    if not may_freeze(scope):
        return _refused(scope, "Freezing")
    reason = clean_reason(request.form.get("reason", ""))
    span = request.form.get("for", "").strip()
    duration = parse_duration(span) if span else None
    if span and duration is None:  # blame what is wrong: the time, not a reason that was given
        flash(f"“{span}” is not a time merge-hold reads: write it like 30m, 2h or 1d (at most 90d). "
              "Nothing was frozen.", "error")
        return back
    if not reason:
        flash("A freeze needs a reason (why it must wait). Nothing was frozen.", "error")
        return back
    room_holds.place_hold(services().redis, scope, holder=login, holder_id=dashboard_holder_id(login), reason=reason,
                          origin="dashboard", now=datetime.now(UTC), duration=duration)
    republish_scope(scope)
    span_text = f" for {format_duration(duration)}" if duration else ""
    flash(f"Froze {scope}{span_text}: {reason}. Its progress shows below as the rulesets and statuses follow.",
          "ok")
    return back


@bp.post("/rooms/thaw")
@login_required
def thaw() -> Response:
    back = redirect(url_for("actions.rooms"))
    scope = _target()
    if scope is None:
        return back
    if not may_freeze(scope):
        return _refused(scope, "Thawing")
    lifted = room_holds.lift_holds(services().redis, scope, actor=acting_login(), origin="dashboard")
    if not lifted:
        flash(f"No room hold on exactly {scope} to thaw.", "error")
        return back
    republish_scope(scope)
    holders = ", ".join(f"@{h.holder}" for h in lifted)
    flash(f"Thawed {scope}: lifted {len(lifted)} hold{'s' if len(lifted) > 1 else ''} ({holders}).", "ok")
    return back
