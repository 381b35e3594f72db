"""`POST /webhooks/github`: verify, filter cheaply, queue durably, acknowledge. Nothing else.

Contract (design §4, invariant 4): a delivery gets a 2xx only once it is in the rq queue; any failure
to queue answers 503 so that GitHub (and our redelivery sweep) brings it back. No GitHub call and no
state change happen here; the workers decide everything beyond "is this worth a job".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
from typing import Any

from flask import Blueprint, Response, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from app.services import services
from core.status import CONTEXT
from core.treecloser import status_may_matter
from workers.queueing import enqueue_delivery

log = logging.getLogger(__name__)

bp = Blueprint("webhooks", __name__)

RELEVANT_ACTIONS: dict[str, frozenset[str] | None] = {
    "issue_comment": frozenset({"created"}),
    "pull_request_review": frozenset({"submitted", "dismissed"}),
    "pull_request": frozenset({
        "opened", "reopened", "synchronize", "edited", "ready_for_review", "labeled", "unlabeled", "closed",
    }),
    "push": None,
    "merge_group": frozenset({"checks_requested"}),
    # Rare events: every action goes to the workers, which know what suspend/unsuspend mean.
    "installation": None,
    "installation_repositories": None,
    "status": None,
    "issues": frozenset({"closed"}),  # a /hold-for waiting on the issue (workers/holdfor.py)
    "check_run": frozenset({"completed"}),  # the tree closer (workers/treecloser.py)
    "check_suite": frozenset({"completed"}),
}
"""Events the service handles, with the actions that matter (None: every action). Design §4."""

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
    if request.content_length is not None and request.content_length > limit:
        return None
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


def ignore_reason(event: str, payload: dict[str, Any]) -> str | None:
    """Why a delivery cannot matter, judged from a few top-level fields; None when it may matter."""
    if event not in RELEVANT_ACTIONS:
        return "event not handled"
    actions = RELEVANT_ACTIONS[event]
    if actions is not None and payload.get("action") not in actions:
        return "action not handled"
    if event == "issue_comment":
        issue = payload.get("issue")
        if not isinstance(issue, dict) or not issue.get("pull_request"):
            return "comment on an issue, not a pull request"
    elif event == "pull_request" and payload.get("action") == "edited":
        changes = payload.get("changes")
        if not isinstance(changes, dict) or "base" not in changes:
            return "edit without a base change"
    elif event == "push":
        ref = payload.get("ref")
        if isinstance(ref, str) and not ref.startswith("refs/heads/"):
            return "not a branch push"
    elif event == "status" and payload.get("context") != CONTEXT and not status_may_matter(payload):
        return "another status context"
    return None


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
    try:
        payload = json.loads(body)
    except ValueError:  # UnicodeDecodeError is a ValueError too
        return _error("body is not valid JSON", 400), "malformed"
    if not isinstance(payload, dict):
        return _error("body is not a JSON object", 400), "malformed"
    if event == "ping":
        return (jsonify(ok=True, zen=payload.get("zen")), 200), "ping"
    reason = ignore_reason(event, payload)
    if reason is not None:
        return (jsonify(ignored=event, reason=reason), 202), "ignored"
    try:
        job_id = enqueue_delivery(svc.queue, event, delivery_id, body)
    except Exception:
        # Whatever failed (Redis down, a timeout, rq), the delivery is not durably queued: say so.
        log.exception("could not queue delivery %s (%s)", delivery_id or "-", event)
        return _error("could not queue the delivery; retry later", 503), "unavailable"
    return (jsonify(queued=job_id), 202), "queued"
