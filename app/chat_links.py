"""A chat user linked to a GitHub login: `/hold link` and `/hold unlink` in chat, `/link/<code>` on the
dashboard, and what a link lets its GitHub user do there (issue 14 item 5).

Nothing else ties the two: a chat id and a GitHub login are different namespaces, and neither platform
vouches for the other. So each side proves itself where it can: the chat platform's signed slash
command names the chat user, and issues a one-time code only they see (an ephemeral reply); GitHub's
sign-in names the login that opens the code's page and confirms. The stored link (`state.chat_links`)
then lets a chat admin (``MERGE_HOLD_CHAT_ADMINS``) freeze and thaw on `/rooms` the orgs their workspace
is bound to, as they could from chat. The rule is read again at every use, so removing someone from the
admins or unbinding a workspace takes effect at once, link or not.

Linking and unlinking are audited (``chat.linked``, ``chat.unlinked``) like room holds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from flask import Blueprint, flash, redirect, render_template, url_for
from redis import Redis
from werkzeug.wrappers import Response

from app import github_login
from app.auth import github_user, login_required
from app.services import services
from core import keys
from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, bound_orgs, listed, scope_owner
from core.hold_rights import ChatUser, chat_user
from foundation.settings import Settings
from state import audit, chat_links
from state.chat_links import ChatIdentity, Link

bp = Blueprint("links", __name__)

CODE = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""What `state.chat_links.issue_code` makes; anything else is answered without asking Redis."""
PLATFORMS = {"slack": "Slack", "mattermost": "Mattermost"}


def identity_of(req: ChatRequest) -> ChatIdentity:
    return ChatIdentity(platform=req.platform, team_id=req.team_id, user_id=req.user_id, user_name=req.user_name,
                        team_name=req.team_name,
                        enterprise_id=req.enterprise_id if req.platform == "slack" else "")


def describe(identity: ChatIdentity) -> str:
    """``@dana in Slack workspace acme-eng (T0MERGE1)``: who, as a person reads it, and the id that decides."""
    team = identity.team_name if identity.team_name and identity.team_name != identity.team_id else ""
    where = f"{team} ({identity.team_id})" if team else identity.team_id
    kind = "workspace" if identity.platform == "slack" else "team"
    return f"@{identity.name} in {PLATFORMS.get(identity.platform, identity.platform)} {kind} {where}"


def admin_orgs(settings: Settings, identity: ChatIdentity) -> tuple[str, ...] | None:
    """The orgs a chat identity may freeze as a chat admin: its workspace's bound orgs (none when the
    workspace is no longer served); None when it is not a chat admin. The same two rules as chat's
    (`app.chat.refusal`): listed in ``MERGE_HOLD_CHAT_ADMINS``, and only within the bound orgs."""
    if not listed(settings.chat_admins, identity.platform, identity.team_id, identity.user_id):
        return None
    binding = settings.slack_teams if identity.platform == "slack" else settings.mattermost_teams
    return bound_orgs(binding, identity.team_id, identity.enterprise_id) or ()


def linked_admin_orgs(login: str | None) -> tuple[str, ...]:
    """The orgs this GitHub user may freeze through their linked chat identity; () without one."""
    if login is None:
        return ()
    svc = services()
    link = chat_links.linked(svc.redis, login)
    return (admin_orgs(svc.settings, link.identity) or ()) if link is not None else ()


def chat_user_of(settings: Settings, identity: ChatIdentity) -> ChatUser:
    """A linked chat identity as chat judges it now (`core.hold_rights.chat_user`): what it gives its
    GitHub user on the page is exactly what it gives in chat."""
    binding = settings.slack_teams if identity.platform == "slack" else settings.mattermost_teams
    return chat_user(identity.platform, identity.team_id, identity.user_id, admins=settings.chat_admins,
                     allowed_users=settings.chat_allowed_users, binding=binding,
                     enterprise_id=identity.enterprise_id)


def linked_chat_user(login: str) -> ChatUser | None:
    """The chat user linked to this GitHub login, as chat judges them now; None without a link."""
    svc = services()
    link = chat_links.linked(svc.redis, login)
    return chat_user_of(svc.settings, link.identity) if link is not None else None


def refusal_hint(login: str | None, scope: str) -> str:
    """What, besides GitHub admin, would let this user freeze ``scope``, and why their link does not."""
    ask = "or a linked chat admin — run /hold link in chat"
    link = chat_links.linked(services().redis, login) if login is not None else None
    if link is None:
        return ask
    who = f"your linked chat user {describe(link.identity)}"
    orgs = admin_orgs(services().settings, link.identity)
    if orgs is None:
        return f"or a linked chat admin; {who} is not one (MERGE_HOLD_CHAT_ADMINS)"
    if not orgs:
        return f"or a linked chat admin; {who} belongs to a workspace merge-hold no longer serves"
    return (f"or a linked chat admin of a workspace bound to {scope_owner(scope)}; {who} may act on "
            f"{', '.join(orgs)} only")


def link_note(login: str | None) -> str | None:
    """What `/rooms` says about the user's link, so they know what it gives them; None without one."""
    link = chat_links.linked(services().redis, login) if login is not None else None
    if link is None:
        return None
    orgs = admin_orgs(services().settings, link.identity)
    gives = f"a chat admin for {', '.join(orgs)}" if orgs else "not a chat admin of a served workspace"
    return (f"Your GitHub login is linked to chat user {describe(link.identity)}: {gives}. "
            "/hold unlink in chat undoes it.")


def _audit(redis: Redis, event: str, login: str, identity: ChatIdentity, origin: str) -> None:
    audit.record(redis, None, event, login=login, platform=identity.platform, team_id=identity.team_id,
                user_id=identity.user_id, user_name=identity.user_name, origin=origin)


def chat_reply(redis: Redis, settings: Settings, req: ChatRequest, command: ChatCommand) -> str:
    """Apply `/hold link` or `/hold unlink` (one or two Redis writes: done in the web tier, inside Slack's
    3 s, as subscriptions are); the ephemeral reply, which only this user sees."""
    identity = identity_of(req)
    if command.action == "unlink":
        login = chat_links.unlink(redis, identity)
        if login is None:
            return "This chat user is not linked to a GitHub login; there is nothing to unlink."
        _audit(redis, "chat.unlinked", login, identity, req.room)
        return f"Unlinked: GitHub @{login} no longer acts on the dashboard as this chat user."
    code = chat_links.issue_code(redis, identity)
    minutes = keys.CHAT_LINK_TTL // 60
    reply = (f"To link this chat user (@{identity.name}) to your GitHub login, open {settings.public_url}/link/{code} "
             f"within {minutes} minutes, sign in with GitHub and confirm. The link works once and replaces any "
             "earlier one; do not share it. `/hold unlink` undoes it.")
    if admin_orgs(settings, identity) is None:
        reply += (" Note: you are not a merge-hold chat admin (MERGE_HOLD_CHAT_ADMINS), so the link lets you do "
                  "nothing more on the dashboard until you are.")
    return reply


def _gone() -> tuple[str, int]:
    return render_template("link.html", identity=None, code=None, login=None, minutes=keys.CHAT_LINK_TTL // 60), 404


def _needs_github(code: str) -> tuple[str, int]:
    return render_template("link.html", identity=None, code=code, login=None, needs_github=True,
                           github=github_login.enabled(services().settings), minutes=keys.CHAT_LINK_TTL // 60), 403


@bp.get("/link/<code>")
@login_required
def confirm(code: str) -> str | tuple[str, int]:
    identity = chat_links.peek_code(services().redis, code) if CODE.fullmatch(code) else None
    if identity is None:
        return _gone()
    login = github_user()
    if login is None:
        return _needs_github(code)
    return render_template("link.html", identity=identity, who=describe(identity), code=code, login=login,
                           admin=admin_orgs(services().settings, identity), minutes=keys.CHAT_LINK_TTL // 60)


@bp.post("/link/<code>")
@login_required
def link(code: str) -> Response | tuple[str, int]:
    login = github_user()
    if login is None:
        return _needs_github(code)  # the code stays usable: the user can sign in with GitHub and retry
    redis = services().redis
    made: Link | None = chat_links.consume_code(redis, code, login, datetime.now(UTC)) if CODE.fullmatch(code) \
        else None
    if made is None:
        return _gone()
    _audit(redis, "chat.linked", login, made.identity, "dashboard")
    orgs = admin_orgs(services().settings, made.identity)
    can = (f" As a chat admin you may now freeze and thaw {', '.join(orgs)} here." if orgs else
           " That chat user is not a chat admin of a served workspace, so the link adds nothing yet.")
    flash(f"Linked chat user {describe(made.identity)} to GitHub @{login}.{can}", "ok")
    return redirect(url_for("actions.rooms"))
