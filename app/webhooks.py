"""`POST /webhooks/github`: verify, filter on the event header, store durably, acknowledge. Nothing else.

Contract (design §4, invariant 4): a delivery gets a 2xx only once its raw body is in Redis — in the
intake list, which the workers' pump turns into rq jobs without losing an entry (`workers/intake.py`) —
and, with ``MERGE_HOLD_MIN_REPLICAS=N``, once N replicas have it too (`WAIT`), so a Sentinel failover
loses no acknowledged delivery. Any failure answers 503 so that GitHub (and our redelivery sweep)
brings it back. The body is not parsed here (design §7's acknowledgement budget): the pump drops the
actions that cannot matter (`core.deliveries.ignore_reason`). No GitHub call and no state change here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time

from flask import Blueprint, Response, jsonify, request
from redis import Redis
from werkzeug.exceptions import RequestEntityTooLarge

from app.services import services
from core import keys
from core.deliveries import event_handled, pack
from workers.queueing import job_id

log = logging.getLogger(__name__)

bp = Blueprint("webhooks", __name__)

DELIVERY_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""GitHub's X-GitHub-Delivery is a GUID; it becomes part of the rq job id, whose alphabet is this."""

_CHUNK = 64 * 1024


def _error(message: str, status: int) -> tuple[Response, int]:
    return jsonify(error=message), status


def signature_valid(secret: str, body: bytes, header: str | None) -> bool:
    """GitHub's ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>``, in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def read_capped(limit: int) -> bytes | None:
    """The raw body, or None when it exceeds ``limit`` (checked on Content-Length, then while reading)."""
    if request.content_length is not None:
        if request.content_length > limit:
            return None
        # Announced and within the cap (GitHub always announces it): one read, as any receiver does.
        return request.get_data(cache=False)
    # Werkzeug enforces this on chunked bodies too, where no Content-Length announces the size.
    request.max_content_length = limit
    parts: list[bytes] = []
    size = 0
    try:
        stream = request.stream
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                return None
            parts.append(chunk)
    except RequestEntityTooLarge:
        return None
    return b"".join(parts)


def looks_like_object(body: bytes) -> bool:
    """Malformed bodies get a 400 without a parse (design §7's acknowledgement budget): GitHub sends a
    JSON object, so anything not framed ``{ … }`` is refused here; a framed body that still does not
    parse is dropped, logged, by the pump (`core.deliveries`)."""
    framed = body.strip(b" \t\r\n")
    return framed.startswith(b"{") and framed.endswith(b"}")


@bp.post("/webhooks/github")
def receive() -> tuple[Response, int]:
    started = time.perf_counter()
    event = request.headers.get("X-GitHub-Event")
    outcome = "error"
    try:
        response, outcome = _receive(event)
        return response
    finally:
        metrics = services().metrics
        metrics.count_webhook(event, outcome)
        metrics.webhook_seconds.observe(time.perf_counter() - started)


def _receive(event: str | None) -> tuple[tuple[Response, int], str]:
    svc = services()
    secret = svc.settings.github_webhook_secret
    if not secret:
        # Never accept an unsigned delivery: without a secret nothing can be verified.
        return _error("GITHUB_WEBHOOK_SECRET is not configured; refusing deliveries", 503), "unconfigured"
    body = read_capped(svc.settings.max_body_bytes)
    if body is None:
        return _error(f"payload larger than {svc.settings.max_body_bytes} bytes", 413), "too_large"
    if not signature_valid(secret, body, request.headers.get("X-Hub-Signature-256")):
        return _error("missing or invalid X-Hub-Signature-256", 401), "bad_signature"
    if not event:
        return _error("missing X-GitHub-Event header", 400), "malformed"
    delivery_id = request.headers.get("X-GitHub-Delivery", "")
    if delivery_id and not DELIVERY_ID.fullmatch(delivery_id):
        return _error("malformed X-GitHub-Delivery header", 400), "malformed"
    if event == "ping":
        try:
            payload = json.loads(body)
        except ValueError:  # UnicodeDecodeError is a ValueError too
            payload = None
        zen = payload.get("zen") if isinstance(payload, dict) else None
        return (jsonify(ok=True, zen=zen), 200), "ping"
    if not event_handled(event):
        return (jsonify(ignored=event, reason="event not handled"), 202), "ignored"
    if not looks_like_object(body):
        return _error("body is not a JSON object", 400), "malformed"
    try:
        durable(svc.redis, keys.intake(svc.settings.queue_name), pack(event, delivery_id, body),
                svc.settings.min_replicas)
    except TooFewReplicas as exc:
        log.warning("could not queue delivery %s (%s): %s", delivery_id or "-", event, exc)
        return _error("could not queue the delivery; retry later", 503), "unavailable"
    except Exception:
        # Whatever failed (Redis down, a timeout), the delivery is not durably queued: say so, and GitHub
        # (or the redelivery sweep) brings it back.
        log.exception("could not queue delivery %s (%s)", delivery_id or "-", event)
        return _error("could not queue the delivery; retry later", 503), "unavailable"
    return (jsonify(queued=job_id(delivery_id)), 202), "queued"


REPLICA_WAIT_MS = 1000
"""How long the receiver waits for MERGE_HOLD_MIN_REPLICAS replicas to confirm (well inside GitHub's 10 s)."""


class TooFewReplicas(RuntimeError):
    """WAIT returned fewer replicas than required: the delivery may not survive a failover."""


def durable(redis: Redis, intake: str, entry: bytes, min_replicas: int) -> None:
    """Push one intake entry, and with ``min_replicas`` wait until that many replicas have it — one round
    trip either way (LPUSH and WAIT pipelined). Raises on any failure; the caller answers 503."""
    if min_replicas <= 0:
        redis.lpush(intake, entry)
        return
    with redis.pipeline(transaction=False) as pipe:
        pipe.lpush(intake, entry)
        pipe.execute_command("WAIT", min_replicas, REPLICA_WAIT_MS)  # type: ignore[no-untyped-call]
        _length, replicas = pipe.execute()
    if int(replicas) < min_replicas:
        raise TooFewReplicas(f"{replicas} of {min_replicas} replicas confirmed within {REPLICA_WAIT_MS} ms")
