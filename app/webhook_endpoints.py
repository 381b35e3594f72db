"""Outgoing webhook endpoints over the API, for an org's admins: ``/api/v1/orgs/{org}/webhooks``.

An ``admin`` token within the org registers, lists and removes endpoints, reads an endpoint's delivery log
and redelivers a message. The page `/orgs/{org}/webhooks` (`app.webhook_page`) does the same for an admin
signed in. Both go through `register_endpoint` and `endpoint_rows` here, so they check URLs and event types
alike (`core.outgoing_urls`, as strictly as a chat ``response_url``) and audit the same way. The secret
is returned once, when the endpoint is made.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Response, jsonify, request

from app import reads
from app.auth import current_identity, require_token
from app.json_body import json_object
from app.services import services
from core import keys
from core.holds import to_iso
from core.outgoing import TYPES
from core.outgoing_urls import EndpointUrlError, check, networks
from core.targets import OWNER
from state import audit, outgoing, webhook_endpoints
from state.decoding import as_text
from state.webhook_endpoints import Endpoint

bp = Blueprint("webhook_endpoints", __name__, url_prefix="/api/v1/orgs")

Reply = tuple[Response, int]
LOG_LIMIT = 50


def _error(message: str, status: int) -> Reply:
    return jsonify(error=message), status


def org_managed(org: str) -> bool:
    """Whether the App serves at least one repo of the org (a name it could be sent events about)."""
    return bool(OWNER.fullmatch(org)) and any(r.split("/", 1)[0] == org.lower()
                                              for r in reads.managed_repos(services().redis))


def register_endpoint(org: str, url: Any, events: Any, description: Any, by: str) -> Endpoint:
    """Check and store a new endpoint, audit it, start the freeze clock when it listens; `ValueError`
    (with the reason to show) when the input is refused."""
    if not isinstance(url, str):
        raise ValueError("url is required: the https:// address that receives the webhooks")
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        raise ValueError(f"events is a list of event types: {', '.join(TYPES)}")
    if description is not None and not isinstance(description, str):
        raise ValueError("description is text")
    settings = services().settings
    try:
        check(url.strip(), networks(settings.webhook_allow_networks))
    except EndpointUrlError as exc:
        raise ValueError(str(exc)) from None
    redis = services().redis
    endpoint = webhook_endpoints.register(redis, org.lower(), url=url.strip(), events=tuple(events),
                                          description=(description or "").strip(), created_by=by,
                                          created_at=to_iso(datetime.now(UTC)) or "", queue=settings.queue_name)
    audit.record(redis, None, "webhook.registered", org=endpoint.org, endpoint=endpoint.id,
                 host=urlsplit(endpoint.url).hostname, events=list(endpoint.events), by=by)
    outgoing.kick_clock(redis, endpoint.org)  # its first look remembers what is frozen now
    return endpoint


def remove_endpoint(org: str, endpoint_id: str, by: str) -> bool:
    redis = services().redis
    removed = webhook_endpoints.remove(redis, org.lower(), endpoint_id)
    if removed:
        audit.record(redis, None, "webhook.removed", org=org.lower(), endpoint=endpoint_id, by=by)
    return removed


def set_enabled(endpoint: Endpoint, enabled: bool, by: str) -> Endpoint:
    redis = services().redis
    changed = webhook_endpoints.set_disabled(redis, endpoint, "" if enabled else f"paused by {by}")
    audit.record(redis, None, "webhook.enabled" if enabled else "webhook.paused", org=endpoint.org,
                 endpoint=endpoint.id, by=by)
    if enabled:
        outgoing.arm(redis, changed)  # what waited goes now
    return changed


def endpoint_rows(org: str, *, log_limit: int = 0) -> list[dict[str, Any]]:
    """Each endpoint (no secret) with its health, waiting count and, when asked, its newest deliveries."""
    redis = services().redis
    rows = []
    for endpoint in webhook_endpoints.endpoints(redis, org.lower()):
        health = {as_text(k): as_text(v)
                  for k, v in redis.hgetall(keys.webhook_health(endpoint.org, endpoint.id)).items()}
        row = {**endpoint.public(), "failing": int(health.get("streak") or 0),
               "last_attempt_at": health.get("last_at") or None, "last_result": health.get("last") or None,
               "waiting": int(redis.llen(keys.webhook_pending(endpoint.org, endpoint.id)))}
        if log_limit:
            row["deliveries"] = outgoing.deliveries(redis, endpoint, log_limit)
        rows.append(row)
    return rows


def _admin_for(org: str) -> Reply | None:
    identity = current_identity()
    if identity is not None and not identity.covers(org):
        return _error(f"token {identity.name!r} is limited to {', '.join(identity.orgs)}", 403)
    if not org_managed(org):
        return _error(f"merge-hold manages no repository of {org}", 404)
    return None


def _endpoint(org: str, endpoint_id: str) -> Endpoint | Reply:
    """The org's endpoint, or the reply refusing it: `_admin_for`'s, or 404 when the org has no such endpoint."""
    refused = _admin_for(org)
    endpoint = webhook_endpoints.get(services().redis, org.lower(), endpoint_id) if refused is None else None
    return refused or endpoint or _error("no such endpoint", 404)


def _by() -> str:
    identity = current_identity()
    return f"api:{identity.name}" if identity is not None else "api"


@bp.get("/<org>/webhooks")
@require_token(permission="admin")
def list_endpoints(org: str) -> Reply:
    refused = _admin_for(org)
    return refused or (jsonify(endpoints=endpoint_rows(org), event_types=TYPES), 200)


@bp.post("/<org>/webhooks")
@require_token(permission="admin")
def create(org: str) -> Reply:
    refused = _admin_for(org)
    if refused is not None:
        return refused
    body = json_object()
    if body is None:
        return _error('body must be JSON: {"url": "https://…", "events": ["freeze.started", …]}', 400)
    try:
        endpoint = register_endpoint(org, body.get("url"), body.get("events"), body.get("description"), _by())
    except ValueError as exc:
        return _error(str(exc), 400)
    return jsonify(endpoint=endpoint.public(), secret=endpoint.secret), 201


@bp.delete("/<org>/webhooks/<endpoint_id>")
@require_token(permission="admin")
def delete(org: str, endpoint_id: str) -> Reply:
    refused = _admin_for(org)
    if refused is not None:
        return refused
    if not remove_endpoint(org, endpoint_id, _by()):
        return _error("no such endpoint", 404)
    return jsonify(removed=endpoint_id), 200


@bp.post("/<org>/webhooks/<endpoint_id>/<any(enable, disable):action>")
@require_token(permission="admin")
def toggle(org: str, endpoint_id: str, action: str) -> Reply:
    endpoint = _endpoint(org, endpoint_id)
    if not isinstance(endpoint, Endpoint):
        return endpoint
    return jsonify(endpoint=set_enabled(endpoint, action == "enable", _by()).public()), 200


@bp.get("/<org>/webhooks/<endpoint_id>/deliveries")
@require_token(permission="admin")
def deliveries(org: str, endpoint_id: str) -> Reply:
    endpoint = _endpoint(org, endpoint_id)
    if not isinstance(endpoint, Endpoint):
        return endpoint
    try:
        limit = int(request.args.get("limit", LOG_LIMIT))
    except ValueError:
        return _error("limit must be a whole number", 400)
    if not 1 <= limit <= outgoing.LOG_MAX:
        return _error(f"limit must be between 1 and {outgoing.LOG_MAX}", 400)
    return jsonify(deliveries=outgoing.deliveries(services().redis, endpoint, limit)), 200


@bp.post("/<org>/webhooks/<endpoint_id>/deliveries/<message_id>/redeliver")
@require_token(permission="admin")
def redeliver(org: str, endpoint_id: str, message_id: str) -> Reply:
    endpoint = _endpoint(org, endpoint_id)
    if not isinstance(endpoint, Endpoint):
        return endpoint
    record = outgoing.redeliver(services().redis, endpoint, message_id)
    if record is None:
        return _error("no such delivery in the endpoint's log", 404)
    return jsonify(delivery=record), 202
