"""Liveness, readiness and Prometheus metrics.

`/metrics` answers only a scraper presenting ``Authorization: Bearer $MERGE_HOLD_METRICS_TOKEN``; with
no token configured it is not served at all (404): counts of deliveries by event and outcome tell an
outsider what runs here and when, and the app is public because GitHub must reach its webhook.

The counters live in `app.metrics`, one registry per app. Under gunicorn every worker process counts
its own requests; a scrape sees the worker that answered it.
"""

from __future__ import annotations

import hmac

from flask import Blueprint, Response, abort, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.services import services

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """Liveness: the process answers. Deliberately does not touch Redis (a Redis outage is not ours)."""
    return jsonify(ok=True)


@bp.get("/readyz")
def readyz() -> tuple[Response, int]:
    try:
        services().redis.ping()
    except Exception as exc:  # any failure to reach Redis means: do not route traffic here
        return jsonify(ok=False, error=f"redis unavailable: {type(exc).__name__}"), 503
    return jsonify(ok=True), 200


@bp.get("/metrics")
def metrics() -> Response | tuple[Response, int]:
    expected = services().settings.metrics_token
    if not expected:
        abort(404)
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        response = jsonify(error="a valid metrics bearer token is required")
        response.headers["WWW-Authenticate"] = 'Bearer realm="merge-hold metrics"'
        return response, 401
    body = generate_latest(services().metrics.registry)
    return Response(body, mimetype=None, content_type=CONTENT_TYPE_LATEST)
