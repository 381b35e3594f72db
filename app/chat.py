"""`POST /chat/slack` and `POST /chat/mattermost`: room holds from slash commands.

Each request is authenticated (Slack's ``v0`` signature within its five-minute window; Mattermost's
command token), checked against the workspace's org binding, the allow-list and the chat admins
(`core.chat_request` states the trust model), parsed, and queued (subscriptions and chat links, mere
Redis writes, are made here: `app.notify_commands`, `app.chat_links`); the answer comes at once, only
to the user (Slack wants one within 3 s). The job (`workers.chat.rooms`, queued by name: this module imports
no worker code) does the work and reports through the command's ``response_url``. Anything refused or
malformed gets a reply and records nothing.
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qs

from flask import Blueprint, Response, current_app, jsonify, request
from slack_sdk.signature import Clock, SignatureVerifier

from app.chat_links import chat_reply as link_reply
from app.notify_commands import apply_subscription, subscription_refusal
from app.services import services
from app.webhooks import read_capped
from core import hold_rights, jobs
from core.chat_grammar import ChatCommand, ChatUsageError, parse_chat
from core.chat_request import CHAT_JOB, Binding, ChatRequest, bound_orgs, listed, reply_url_allowed, within
from core.escaping import for_chat
from core.exemptions import Door
from core.exemptions import refusal as exemption_refusal
from core.hold_rights import ChatUser, Facts, chat_user
from core.holds import to_iso
from core.permissions import Permission
from core.targets import is_pr_scope
from foundation.settings import Settings
from state.queueing import options

log = logging.getLogger(__name__)

bp = Blueprint("chat", __name__)

MAX_CHAT_BODY = 64 * 1024
"""Slash-command bodies are a few hundred bytes; anything near this is not from a chat platform."""
CLOCK = "MERGE_HOLD_CHAT_CLOCK"
"""App config key: a ``() -> float`` clock for the signature window (tests pin it to a vector's time)."""
NOT_ENABLED = "This workspace is not enabled for merge-hold: ask its operator to add it."
NOT_ALLOWED = "You are not on the list of people who may place or lift holds from chat."
NOT_BOUND = ("This workspace is not bound to any GitHub organisation, so merge-hold takes no commands from "
             "it: ask its operator to bind it (`TEAM=org+org` in MERGE_HOLD_SLACK_TEAMS or "
             "MERGE_HOLD_MATTERMOST_TEAMS).")
NOT_ADMIN = ("Org- and repo-wide holds, lifting them, and exemptions need a merge-hold chat admin "
             "(MERGE_HOLD_CHAT_ADMINS); a single PR (`owner/repo#123`) you may hold yourself.")
FOLLOWS = "X-Merge-Hold-Follows"
"""Header on an answer whose command was queued: its outcome comes later through the ``response_url``.
Chat platforms ignore it; `merge-hold simulate chat` waits for a reply only when it is there."""
BAD_RESPONSE_URL = "merge-hold answers only to this server's MATTERMOST_URL; this command's response_url is elsewhere."


class _Clock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


def ephemeral(text: str, platform: str) -> tuple[Response, int]:
    """An answer only the user sees, escaped for their platform (it may quote what they typed, scope
    names and reasons: `core.escaping`)."""
    return jsonify(response_type="ephemeral", text=for_chat(platform, text)), 200


def _form(body: bytes) -> dict[str, str]:
    """The url-encoded form, first value per field (repeated keys are Mattermost's mention lists)."""
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        return {}
    return {name: values[0] for name, values in fields.items()}


def may_change_holds(allowed: tuple[str, ...], platform: str, team_id: str, user_id: str, channel_id: str) -> bool:
    """Who may hold and lift single PRs from chat: empty list, anyone in a bound workspace; else the
    listed users and channels (`core.chat_request.listed` for the forms)."""
    return not allowed or listed(allowed, platform, team_id, user_id, channel_id)


def outside(orgs: tuple[str, ...], scope: str) -> str:
    bound = ", ".join(orgs)
    return (f"This workspace may act only on {bound}; {scope} is outside that. "
            "Nothing was recorded.")


def refusal(settings: Settings, req: ChatRequest, command: ChatCommand) -> str | None:
    """Why this command may not run from this workspace and user, or None when it may."""
    orgs = req.bound
    if command.scope is not None and not within(orgs, command.scope):
        return outside(orgs, command.scope)
    if command.action in ("list", "link", "unlink"):
        return None  # a link names only its own user; what it allows is checked where it is used
    admin = listed(settings.chat_admins, req.platform, req.team_id, req.user_id)
    if command.action in ("subscribe", "unsubscribe"):
        return subscription_refusal(settings, req, command, admin=admin)
    if command.action in ("hold", "unhold") and command.scope is not None:
        # The one rule of every surface (`core.hold_rights`): a PR for the allow-list, wider for admins.
        if hold_rights.may_place(chat_actor(settings, req), command.scope, Facts()):
            return None
        return NOT_ALLOWED if is_pr_scope(command.scope) else NOT_ADMIN
    if command.action in ("exempt", "unexempt"):  # who may exempt is decided in one place, for every door
        role = Permission.ADMIN if admin else Permission.NONE
        return None if exemption_refusal(Door.CHAT, role, sticky=command.sticky) is None else NOT_ADMIN
    # Anything else wide (exemptions of old forms, listings of an org) is for chat admins only.
    return None if admin else NOT_ADMIN


def chat_actor(settings: Settings, req: ChatRequest) -> ChatUser:
    """The command's user as `core.hold_rights` judges them (the workers judge them the same way)."""
    binding = settings.slack_teams if req.platform == "slack" else settings.mattermost_teams
    return chat_user(req.platform, req.team_id, req.user_id, admins=settings.chat_admins,
                     allowed_users=settings.chat_allowed_users, binding=binding, enterprise_id=req.enterprise_id,
                     channel_id=req.channel_id)


def _dispatch(req: ChatRequest) -> tuple[Response, int]:
    settings: Settings = services().settings
    parsed = parse_chat(req.command, req.text)
    if isinstance(parsed, ChatUsageError):
        return ephemeral(parsed.text, req.platform)
    refused = refusal(settings, req, parsed)
    if refused is not None:
        log.info("chat command refused: %s %s in %s", req.command, req.user_id, req.room)
        return ephemeral(refused, req.platform)
    # What the web tier judged travels with the job, which applies the same rule (`core.hold_rights`).
    req = dataclasses.replace(req, admin="1" if chat_actor(settings, req).admin else "")
    if parsed.action in ("subscribe", "unsubscribe"):
        return ephemeral(apply_subscription(services().redis, settings, req, parsed), req.platform)
    if parsed.action in ("link", "unlink"):
        return ephemeral(link_reply(services().redis, settings, req, parsed), req.platform)
    try:
        # A description of our own: rq's default shows the arguments, and response_url is a credential.
        services().queue.enqueue(CHAT_JOB, req.to_dict(), **options(jobs.CHAT_COMMAND),
                                 description=f"chat command {req.command} from {req.room}")
    except Exception:
        log.exception("could not queue a chat command from %s", req.room)
        return ephemeral("merge-hold could not queue that command just now; please try again.", req.platform)
    answer, status = ephemeral("Looking up the holds…" if parsed.action == "list" else
                               f"Working on `{req.command} {req.text.strip()}`; the channel will hear when it is done.",
                               req.platform)
    answer.headers[FOLLOWS] = "response_url"
    return answer, status


def _bound(platform: str, binding: Binding, *team_ids: str) -> tuple[tuple[str, ...] | None,
                                                                  tuple[Response, int] | None]:
    """The workspace's orgs, or the reply refusing it: unknown (not enabled) or bound to nothing."""
    orgs = bound_orgs(binding, *team_ids)
    if orgs is None:
        return None, ephemeral(NOT_ENABLED, platform)
    if not orgs:
        return None, ephemeral(NOT_BOUND, platform)
    return orgs, None


def _request(platform: str, form: dict[str, str], team_name: str, orgs: tuple[str, ...]) -> ChatRequest:
    return ChatRequest(
        platform=platform, team_id=form.get("team_id", ""), team_name=team_name,
        channel_id=form.get("channel_id", ""), channel_name=form.get("channel_name", ""),
        user_id=form.get("user_id", ""), user_name=form.get("user_name", ""), command=form.get("command", ""),
        text=form.get("text", ""), response_url=form.get("response_url", ""),
        received_at=to_iso(datetime.now(UTC)) or "", orgs="+".join(orgs),
        enterprise_id=form.get("enterprise_id", ""),
    )


@bp.post("/chat/slack")
def slack() -> tuple[Response, int]:
    settings = services().settings
    if not settings.slack_signing_secret:
        return jsonify(error="SLACK_SIGNING_SECRET is not configured"), 503
    body = read_capped(MAX_CHAT_BODY)
    if body is None:
        return jsonify(error="request too large"), 413
    clock = _Clock(current_app.config.get(CLOCK) or time.time)
    verifier = SignatureVerifier(settings.slack_signing_secret, clock=clock)
    try:
        valid = verifier.is_valid_request(body, dict(request.headers))
    except (ValueError, UnicodeDecodeError):  # a timestamp that is not a number, a body not UTF-8
        valid = False
    if not valid:
        return jsonify(error="missing, invalid or expired Slack signature"), 401
    form = _form(body)
    if form.get("ssl_check") == "1":
        return jsonify(ok=True), 200
    team = form.get("team_id", "")
    orgs, refused = _bound("slack", settings.slack_teams, team, form.get("enterprise_id", ""))
    if refused is not None or orgs is None:
        return refused or ephemeral(NOT_ENABLED, "slack")
    return _dispatch(_request("slack", form, form.get("team_domain") or team, orgs))


def _mattermost_token(form: dict[str, str]) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, credential = header.partition(" ")
    if scheme.lower() == "token" and credential.strip():
        return credential.strip()
    return form.get("token", "")


@bp.post("/chat/mattermost")
def mattermost() -> tuple[Response, int]:
    settings = services().settings
    # One token per slash command; a comma-separated list serves commands in several teams.
    expected = [t.strip() for t in (settings.mattermost_token or "").split(",") if t.strip()]
    if not expected:
        return jsonify(error="MATTERMOST_TOKEN is not configured"), 503
    body = read_capped(MAX_CHAT_BODY)
    if body is None:
        return jsonify(error="request too large"), 413
    form = _form(body)
    given = _mattermost_token(form).encode()
    # Compare against every configured token, without stopping early, in constant time each.
    matched = [hmac.compare_digest(given, token.encode()) for token in expected]
    if not given or not any(matched):
        return jsonify(error="missing or invalid Mattermost token"), 401
    orgs, refused = _bound("mattermost", settings.mattermost_teams, form.get("team_id", ""))
    if refused is not None or orgs is None:
        return refused or ephemeral(NOT_ENABLED, "mattermost")
    if not reply_url_allowed(form.get("response_url", ""), settings.mattermost_url):
        log.warning("mattermost command refused: its response_url is not under MATTERMOST_URL")
        return ephemeral(BAD_RESPONSE_URL, "mattermost")
    return _dispatch(_request("mattermost", form, form.get("team_domain") or form.get("team_id", ""), orgs))
