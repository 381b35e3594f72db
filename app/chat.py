"""`POST /chat/slack` and `POST /chat/mattermost`: room holds from slash commands.

Each request is authenticated (Slack's ``v0`` signature within its five-minute window; Mattermost's
command token), checked against the served workspaces and the allowed users, parsed, and queued; the
answer comes at once, only to the user (Slack wants one within 3 s). The job (`workers.rooms`) does
the work and reports through the command's ``response_url``. Malformed text gets the usage text and
records nothing.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qs

from flask import Blueprint, Response, current_app, jsonify, request
from slack_sdk.signature import Clock, SignatureVerifier

from app.services import services
from app.webhooks import read_capped
from core.chat_grammar import ChatUsageError, parse_chat
from core.holds import to_iso
from merge_hold.settings import Settings
from workers.rooms import CHAT_JOB, ChatRequest

log = logging.getLogger(__name__)

bp = Blueprint("chat", __name__)

MAX_CHAT_BODY = 64 * 1024
"""Slash-command bodies are a few hundred bytes; anything near this is not from a chat platform."""
CLOCK = "MERGE_HOLD_CHAT_CLOCK"
"""App config key: a ``() -> float`` clock for the signature window (tests pin it to a vector's time)."""
NOT_ENABLED = "This workspace is not enabled for merge-hold: ask its operator to add it."
NOT_ALLOWED = "You are not on the list of people who may place or lift holds from chat."


class _Clock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


def ephemeral(text: str) -> tuple[Response, int]:
    return jsonify(response_type="ephemeral", text=text), 200


def _form(body: bytes) -> dict[str, str]:
    """The url-encoded form, first value per field (repeated keys are Mattermost's mention lists)."""
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        return {}
    return {name: values[0] for name, values in fields.items()}


def may_change_holds(allowed: tuple[str, ...], platform: str, team_id: str, user_id: str, channel_id: str) -> bool:
    """Who may hold and lift from chat. Empty list: anyone in a served workspace. Entries are user ids
    (``U024BE7LH``), channel ids with ``#`` (``#C0123``: anyone in that channel), either one optionally
    qualified by the workspace (``T123/U456``) and the platform (``slack:``/``mattermost:``)."""
    if not allowed:
        return True
    subjects = [user_id, f"#{channel_id}"]
    accepted = {form for s in subjects if s.strip("#") for form in (s, f"{team_id}/{s}")}
    accepted |= {f"{platform}:{form}" for form in accepted}
    return any(entry.strip() in accepted for entry in allowed)


def _dispatch(req: ChatRequest) -> tuple[Response, int]:
    settings: Settings = services().settings
    parsed = parse_chat(req.command, req.text)
    if isinstance(parsed, ChatUsageError):
        return ephemeral(parsed.text)
    if parsed.action != "list" and not may_change_holds(settings.chat_allowed_users, req.platform, req.team_id,
                                                        req.user_id, req.channel_id):
        return ephemeral(NOT_ALLOWED)
    try:
        services().queue.enqueue(CHAT_JOB, req.to_dict(), result_ttl=600, failure_ttl=7 * 86400)
    except Exception:
        log.exception("could not queue a chat command from %s", req.room)
        return ephemeral("merge-hold could not queue that command just now; please try again.")
    if parsed.action == "list":
        return ephemeral("Looking up the holds…")
    return ephemeral(f"Working on `{req.command} {req.text.strip()}`; the channel will hear when it is done.")


def _request(platform: str, form: dict[str, str], team_name: str) -> ChatRequest:
    return ChatRequest(
        platform=platform, team_id=form.get("team_id", ""), team_name=team_name,
        channel_id=form.get("channel_id", ""), channel_name=form.get("channel_name", ""),
        user_id=form.get("user_id", ""), user_name=form.get("user_name", ""), command=form.get("command", ""),
        text=form.get("text", ""), response_url=form.get("response_url", ""),
        received_at=to_iso(datetime.now(UTC)) or "",
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
    served = settings.slack_teams
    team, enterprise = form.get("team_id", ""), form.get("enterprise_id", "")
    if not (team and team in served) and not (enterprise and enterprise in served):
        return ephemeral(NOT_ENABLED)
    return _dispatch(_request("slack", form, form.get("team_domain") or team))


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
    return _dispatch(_request("mattermost", form, form.get("team_domain") or form.get("team_id", "")))
