"""`POST /webhooks/github`: verify, filter on the event header, store durably, acknowledge. Nothing else.

The signature header is checked before the body is read: without one of GitHub's form the answer is
401 at once, and a body announced beyond the cap is 413 unread; only a sender that presents a
well-formed signature has its body read (up to the cap) for the HMAC, which needs all of it.

Contract (design §4, invariant 4): a delivery gets a 2xx only once its raw body is in Redis — in the
intake list, which the workers' pump turns into rq jobs without losing an entry (`workers/intake/pump.py`) —
and, with ``MERGE_HOLD_MIN_REPLICAS=N``, once N replicas have it too (`WAIT`), so a Sentinel failover
loses no acknowledged delivery (`app.intake_writer`). Any failure answers 503 so that GitHub (and our
redelivery sweep) brings it back. The body is not parsed here (design §7's acknowledgement budget): the
pump drops the actions that cannot matter (`core.deliveries.ignore_reason`). No GitHub call and no
state change here.

The receiver is a plain WSGI application (`Receiver`), and `FastPath` puts it in front of Flask for
exactly ``POST /webhooks/github``: Flask's per-request machinery (contexts, session, URL matching,
hooks) cost as much CPU as the receiver's own work, for a route that needs none of it. It answers what
the Flask route answered, byte for byte — same JSON bodies, security headers (`app.security`), metrics
and logs; the Flask route stays registered (405 for other methods, OPTIONS) and runs the same
`Receiver` when called without the fast path in front (``tests/test_webhook_fast_path.py`` holds the two
to the same answers).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, current_app, request
from werkzeug.exceptions import ClientDisconnected, HTTPException, InternalServerError, RequestEntityTooLarge
from werkzeug.http import HTTP_STATUS_CODES
from werkzeug.wrappers import Response as WerkzeugResponse
from werkzeug.wsgi import get_content_length, get_input_stream

from app.intake_writer import TooFewReplicas
from app.security import HSTS
from core import json_text
from core.deliveries import pack
from core.events import queued

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

    from app.intake_writer import IntakeWriter
    from app.metrics import Metrics
    from foundation.settings import Settings

log = logging.getLogger(__name__)

PATH = "/webhooks/github"
EXTENSION = "merge_hold.webhooks"

bp = Blueprint("webhooks", __name__)

DELIVERY_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""GitHub's X-GitHub-Delivery is a GUID; it becomes part of the rq job id, whose alphabet is this."""

_CHUNK = 64 * 1024
SIGNATURE = re.compile(r"sha256=[0-9a-f]{64}")
"""The only form of ``X-Hub-Signature-256`` GitHub sends (an HMAC-SHA256 in lower-case hex): anything else
is refused before the body is read."""

Answer = tuple[int, dict[str, Any]]


def signature_valid(secret: str | bytes, body: bytes, header: str | None) -> bool:
    """GitHub's ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>``, in constant time."""
    if not header or not header.startswith("sha256="):
        return False
    key = secret.encode() if isinstance(secret, str) else secret
    expected = "sha256=" + hmac.digest(key, body, hashlib.sha256).hex()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def read_body(environ: WSGIEnvironment, limit: int) -> bytes | None:
    """The raw body, or None when it exceeds ``limit`` (checked on Content-Length, then while reading).

    Werkzeug's own stream rules, as Flask's ``request.get_data`` applies them: a body cut short raises
    its ``ClientDisconnected`` (a 400) unless the server frames the stream itself
    (``wsgi.input_terminated``: then what came is the body), and a body with neither Content-Length nor
    a server that frames it reads as empty."""
    length = get_content_length(environ)
    if length is not None:
        if length > limit:
            return None
        # Announced and within the cap (GitHub always announces it): one read of exactly that many bytes
        # from the server's stream. Werkzeug's LimitedStream does the same behind a wrapper that costs
        # as much CPU as the read (design §7's acknowledgement budget).
        try:
            body: bytes = environ["wsgi.input"].read(length)
        except (OSError, ValueError) as exc:
            raise ClientDisconnected() from exc
        if len(body) < length and "wsgi.input_terminated" not in environ:
            raise ClientDisconnected()
        return body
    try:
        # Chunked: no Content-Length announces the size; the stream raises past the cap.
        stream = get_input_stream(environ, max_content_length=limit)
        parts: list[bytes] = []
        size = 0
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                return None
            parts.append(chunk)
    except RequestEntityTooLarge:
        return None
    return b"".join(parts)


def read_capped(limit: int) -> bytes | None:
    """`read_body` of the current Flask request (the chat endpoints')."""
    return read_body(request.environ, limit)


def looks_like_object(body: bytes) -> bool:
    """Malformed bodies get a 400 without a parse (design §7's acknowledgement budget): GitHub sends a
    JSON object, so anything not framed ``{ … }`` is refused here; a framed body that still does not
    parse is dropped, logged, by the pump (`core.deliveries`)."""
    framed = body.strip(b" \t\r\n")
    return framed.startswith(b"{") and framed.endswith(b"}")


# What Flask's `jsonify` writes (its default provider: sorted keys, compact, ASCII, a final newline).
# One encoder for all answers: `json.dumps` with options builds a new one per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True)


def _json(payload: dict[str, Any]) -> bytes:
    return _ENCODER.encode(payload).encode() + b"\n"


@functools.cache  # a handful of codes
def _status_line(code: int) -> str:
    # Werkzeug's form, upper-case reason included ("202 ACCEPTED").
    return f"{code} {HTTP_STATUS_CODES.get(code, 'UNKNOWN').upper()}"


def _error(message: str, status: int) -> Answer:
    return status, {"error": message}


class Receiver:
    """`POST /webhooks/github` as a WSGI application; the settings it needs are read once, here."""

    def __init__(self, settings: Settings, metrics: Metrics, intake: IntakeWriter,
                 headers: Iterable[tuple[str, str]], *, https: bool) -> None:
        """``headers``: `app.security.response_headers`; HSTS is added as Flask's hook adds it, when
        ``https`` (the public URL is https) or the request came in over https."""
        secret = settings.github_webhook_secret
        self._key = secret.encode() if secret else None
        self._limit = settings.max_body_bytes
        self._metrics = metrics
        self._intake = intake
        self._headers = list(headers)
        self._secure_headers = [*self._headers, HSTS]
        self._https = https

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        started = time.perf_counter()
        event: str | None = environ.get("HTTP_X_GITHUB_EVENT")
        outcome = "error"
        try:
            (status, payload), outcome = self._receive(environ, event)
        except HTTPException as exc:
            # A body cut short (Werkzeug's ClientDisconnected): the app's JSON error, as Flask gave it.
            status, payload = exc.code or 500, {"error": exc.description or exc.name}
        except Exception:
            log.exception("Exception on %s [POST]", PATH)
            status, payload = 500, {"error": InternalServerError.description}
        finally:
            self._metrics.count_webhook(event, outcome)
            self._metrics.webhook_seconds.observe(time.perf_counter() - started)
        body = _json(payload)
        secure = self._https or environ.get("wsgi.url_scheme") in ("https", "wss")
        start_response(_status_line(status), [("Content-Type", "application/json"),
                                              ("Content-Length", str(len(body))),
                                              *(self._secure_headers if secure else self._headers)])
        return [body]

    def _receive(self, environ: WSGIEnvironment, event: str | None) -> tuple[Answer, str]:
        if self._key is None:
            # Never accept an unsigned delivery: without a secret nothing can be verified.
            return _error("GITHUB_WEBHOOK_SECRET is not configured; refusing deliveries", 503), "unconfigured"
        signature = environ.get("HTTP_X_HUB_SIGNATURE_256")
        if signature is None or not SIGNATURE.fullmatch(signature.strip()):
            # Refused before a byte of the body is read: an unsigned sender never makes us read 25 MB.
            return _error("missing or invalid X-Hub-Signature-256", 401), "bad_signature"
        body = read_body(environ, self._limit)  # an announced length beyond the cap: 413 unread
        if body is None:
            return _error(f"payload larger than {self._limit} bytes", 413), "too_large"
        if not signature_valid(self._key, body, signature):
            return _error("missing or invalid X-Hub-Signature-256", 401), "bad_signature"
        if not event:
            return _error("missing X-GitHub-Event header", 400), "malformed"
        delivery_id: str = environ.get("HTTP_X_GITHUB_DELIVERY", "")
        if delivery_id and not DELIVERY_ID.fullmatch(delivery_id):
            return _error("malformed X-GitHub-Delivery header", 400), "malformed"
        if event == "ping":
            try:
                parsed = json_text.loads(body)
            except ValueError:  # UnicodeDecodeError and json_text.TooDeep are ValueErrors too
                parsed = None
            zen = parsed.get("zen") if isinstance(parsed, dict) else None
            return (200, {"ok": True, "zen": zen}), "ping"
        if not queued(event):  # the one event table: core/events.py
            return (202, {"ignored": event, "reason": "event not handled"}), "ignored"
        if not looks_like_object(body):
            return _error("body is not a JSON object", 400), "malformed"
        try:
            self._intake.push(pack(event, delivery_id, body))
        except TooFewReplicas as exc:
            log.warning("could not queue delivery %s (%s): %s", delivery_id or "-", event, exc)
            return _error("could not queue the delivery; retry later", 503), "unavailable"
        except Exception:
            # Whatever failed (Redis down, a timeout), the delivery is not durably queued: say so, and
            # GitHub (or the redelivery sweep) brings it back.
            log.exception("could not queue delivery %s (%s)", delivery_id or "-", event)
            return _error("could not queue the delivery; retry later", 503), "unavailable"
        # The delivery is in Redis, which is all the 202 promises: it names the delivery, not the job the
        # pump may make of it (an action that cannot matter is dropped, a malformed body dead-lettered).
        return (202, {"queued": True, "delivery": delivery_id or None}), "queued"


class FastPath:
    """WSGI middleware: ``POST /webhooks/github`` goes straight to the `Receiver`, all else to Flask."""

    def __init__(self, app: WSGIApplication, receiver: Receiver) -> None:
        self.app = app
        self.receiver = receiver

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == PATH and environ.get("REQUEST_METHOD") == "POST":
            return self.receiver(environ, start_response)
        return self.app(environ, start_response)


@bp.post(PATH)
def receive() -> WerkzeugResponse:
    """The same receiver under Flask, reached only without `FastPath` in front (a bare ``wsgi_app``)."""
    receiver: Receiver = current_app.extensions[EXTENSION]
    return Response.from_app(receiver, request.environ)


def install(app: Flask, receiver: Receiver) -> None:
    """Register the route and put the fast path in front of ``app``'s WSGI callable."""
    app.extensions[EXTENSION] = receiver
    app.register_blueprint(bp)
    app.wsgi_app = FastPath(app.wsgi_app, receiver)  # type: ignore[method-assign]
