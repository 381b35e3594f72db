"""Freeze and thaw from `/rooms` (issue 14 item 5): an org, a repo or a branch glob, by an admin.

A freeze is a room hold recorded exactly as chat's ``/hold TARGET`` records it (`state.room_holds`), with
the form's optional ``paths`` (gitignore-style globs, comma-separated) scoping it to PRs changing those files,
with origin ``dashboard`` and the signed-in GitHub user as holder (id ``dashboard:LOGIN``, so the
Lift button and a later freeze of theirs renew the same hold). A thaw lifts room holds on exactly that
scope, as chat's ``/unhold TARGET`` does; holds on narrower or wider scopes stay. Both then queue
the republish the lift form uses, which brings the freeze rulesets in step before fanning out.

Who may is the one rule of `core.hold_rights`: a freeze needs admin on the repo for a repo or branch, for
an org admin on every managed repo of it, or a login linked to a chat admin (`/hold link`) of a workspace
bound to the target's org; and a GitHub sign-in, since its holder is a GitHub user. A thaw lifts, of the
holds on exactly that scope, those the user may lift — a GitHub admin any, a linked chat admin only the
ones placed from chat (as ``/unhold`` would), an admin token any within its orgs, a hold token its own —
and names the ones that stay.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, flash, redirect, request, url_for
from werkzeug.wrappers import Response

from app import reads, rights
from app.auth import login_required, may_see
from app.chat_links import refusal_hint
from app.dashboard_actions import (
    acting_login,
    dashboard_holder_id,
    github_login,
    may_freeze,
    may_lift,
    may_see_scope,
    reason_and_duration,
    republish_scope,
)
from app.services import services
from core import hold_rights
from core.durations import format_duration
from core.hold_rights import GitHubUser
from core.holds import Hold, named
from core.paths import PathsError, check, describe, split_list
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


def _why(hold: Hold) -> str:
    return hold_rights.lift_refusal(rights.actor(), hold.id, hold.scope, rights.facts(hold.scope))


def _refused(scope: str, verb: str, holds: list[Hold] | None = None) -> Response:
    repo = scope_repo(scope)
    what = f"admin access to {repo}" if repo else f"admin access to every repository of {scope}"
    if holds and (github_login() is None or _linked_chat_acts(scope)):
        # A token sign-in, or a linked chat user facing holds chat may not lift: the rule's own reason.
        flash(f"{verb} {scope} lifted nothing: {named(holds[0].holder)}'s hold stays: {_why(holds[0])}.", "error")
    else:
        flash(f"{verb} {scope} needs {what} on GitHub, {refusal_hint(github_login(), scope)}.", "error")
    return redirect(url_for("actions.rooms"))


def _linked_chat_acts(scope: str) -> bool:
    """Whether the user's linked chat user may act on ``scope`` in chat: then only the holds' doors
    (placed elsewhere than chat) refused them."""
    actor = rights.actor()
    chat = actor.chat if isinstance(actor, GitHubUser) else None
    return chat is not None and hold_rights.may_place(chat, scope, rights.facts(scope))


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
    given = reason_and_duration("A freeze", "frozen")
    if given is None:
        return back
    reason, duration = given
    listed = split_list(request.form.get("paths", ""))
    try:
        paths = check(listed) if listed else ()
    except PathsError as exc:
        flash(f"Not frozen: {exc} (gitignore-style globs, comma-separated: db/migrations/**, !db/README.md).",
              "error")
        return back
    room_holds.place_hold(services().redis, scope, holder=login, holder_id=dashboard_holder_id(login), reason=reason,
                          origin="dashboard", now=datetime.now(UTC), duration=duration, paths=paths)
    republish_scope(scope)
    span_text = f" for {format_duration(duration)}" if duration else ""
    where = f" where a PR changes {describe(paths)}" if paths else ""
    flash(f"Froze {scope}{where}{span_text}: {reason}. Its progress shows below as the rulesets and statuses follow.",
          "ok")
    return back


@bp.post("/rooms/thaw")
@login_required
def thaw() -> Response:
    """Lift every room hold on exactly the target that the signed-in user may lift (`core.hold_rights`:
    the rule chat's ``/unhold`` and the API apply); the others stay, named in the answer."""
    back = redirect(url_for("actions.rooms"))
    scope = _target()
    if scope is None:
        return back
    redis = services().redis
    present = room_holds.room_holds_on(redis, scope)
    if not present:
        flash(f"No room hold on exactly {scope} to thaw.", "error")
        return back
    liftable = {h.id for h in present if may_lift(h)}
    if not liftable:
        return _refused(scope, "Thawing", present)
    lifted = room_holds.lift_holds(redis, scope, actor=acting_login(), origin="dashboard", only=liftable)
    republish_scope(scope)
    holders = ", ".join(named(h.holder) for h in lifted)
    kept = [h for h in present if h.id not in liftable]
    left = f" {len(kept)} stay{'s' if len(kept) == 1 else ''} ({', '.join(named(h.holder) for h in kept)}): " \
        f"{_why(kept[0])}." if kept else ""
    flash(f"Thawed {scope}: lifted {len(lifted)} hold{'s' if len(lifted) > 1 else ''} ({holders}).{left}", "ok")
    return back
