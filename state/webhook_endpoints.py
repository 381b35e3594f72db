"""An org's outgoing webhook endpoints as stored in Redis: registered, listed, disabled, removed.

Written by the web tier (the org's page and ``/api/v1/orgs/{org}/webhooks``, admins only), read by
`state.outgoing` when an event is noted and by the delivery job. Each endpoint has its own signing
secret (``whsec_`` + base64 of 32 random bytes, as the Standard Webhooks specification serialises one),
shown once when it is made; the rest of its record is shown to admins on the page and over the API.
The caller audits (this module stays below `state.audit`, which notes events into `state.outgoing`).
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import asdict, dataclass, replace
from typing import Any

from redis import Redis

from core import keys
from core.outgoing import TYPES

MAX_ENDPOINTS = 20
"""Endpoints per org: each event is one delivery per endpoint."""
MAX_DESCRIPTION = 200


@dataclass(frozen=True)
class Endpoint:
    id: str
    org: str
    url: str
    events: tuple[str, ...]
    secret: str
    description: str
    created_by: str
    created_at: str
    queue: str
    """The rq queue its deliveries go to (the registering server's MERGE_HOLD_QUEUE; `state.outgoing`)."""
    disabled: str = ""
    """Why deliveries stopped (the endpoint answered 410 Gone, an admin paused it); empty: enabled."""

    def wants(self, kind: str) -> bool:
        return not self.disabled and kind in self.events

    def public(self) -> dict[str, Any]:
        """Everything but the secret."""
        found = asdict(self)
        found.pop("secret")
        found["events"] = list(self.events)
        return found


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _load(raw: bytes | str) -> Endpoint:
    data = json.loads(raw)
    data["events"] = tuple(data.get("events") or ())
    return Endpoint(**data)


def _save(redis: Redis, endpoint: Endpoint) -> None:
    redis.hset(keys.webhook_endpoints(endpoint.org), endpoint.id,
               json.dumps({**asdict(endpoint), "events": list(endpoint.events)}, separators=(",", ":")))


def endpoints(redis: Redis, org: str) -> list[Endpoint]:
    found = [_load(raw) for raw in redis.hvals(keys.webhook_endpoints(org))]
    return sorted(found, key=lambda e: (e.created_at, e.id))


def get(redis: Redis, org: str, endpoint_id: str) -> Endpoint | None:
    raw = redis.hget(keys.webhook_endpoints(org), endpoint_id)
    return None if raw is None else _load(raw)


def register(redis: Redis, org: str, *, url: str, events: tuple[str, ...], description: str, created_by: str,
             created_at: str, queue: str) -> Endpoint:
    """A new endpoint with a fresh secret. ``events`` must be known types (`core.outgoing.TYPES`) and the
    URL already checked (`core.outgoing_urls.check`); `ValueError` when the org has `MAX_ENDPOINTS`."""
    unknown = [e for e in events if e not in TYPES]
    if unknown or not events:
        raise ValueError(f"unknown event type {unknown[0]!r}" if unknown else "pick at least one event type")
    if redis.hlen(keys.webhook_endpoints(org)) >= MAX_ENDPOINTS:
        raise ValueError(f"{org} has {MAX_ENDPOINTS} endpoints already; remove one first")
    endpoint = Endpoint(id="ep_" + secrets.token_hex(8), org=org.lower(), url=url,
                        events=tuple(e for e in TYPES if e in events), secret=new_secret(),
                        description=description[:MAX_DESCRIPTION], created_by=created_by, created_at=created_at,
                        queue=queue)
    _save(redis, endpoint)
    return endpoint


def set_disabled(redis: Redis, endpoint: Endpoint, reason: str) -> Endpoint:
    """Stop (``reason``) or resume (empty) deliveries to the endpoint."""
    changed = replace(endpoint, disabled=reason)
    _save(redis, changed)
    return changed


def remove(redis: Redis, org: str, endpoint_id: str) -> bool:
    """Forget the endpoint, its queue and its delivery log."""
    with redis.pipeline() as pipe:
        pipe.hdel(keys.webhook_endpoints(org), endpoint_id)
        pipe.delete(keys.webhook_pending(org, endpoint_id), keys.webhook_log(org, endpoint_id),
                    keys.webhook_log_order(org, endpoint_id), keys.webhook_armed(org, endpoint_id),
                    keys.webhook_health(org, endpoint_id))
        removed, _ = pipe.execute()
    return bool(removed)
