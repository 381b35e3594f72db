"""Liveness, readiness and Prometheus metrics.

`/metrics` answers only a scraper presenting ``Authorization: Bearer $MERGE_HOLD_METRICS_TOKEN``; with
no token configured it is not served at all (404): counts of deliveries by event and outcome tell an
outsider what runs here and when, and the app is public because GitHub must reach its webhook.

Each app has its own `CollectorRegistry`: two apps in one process (tests, `merge-hold dev`) keep
separate counts, and nothing registers at import. Under gunicorn every worker process counts its own
requests; a scrape sees the worker that answered it.
"""

from __future__ import annotations

import hmac

from flask import Blueprint, Response, abort, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from app.services import services

KNOWN_EVENTS = frozenset({
    "ping", "issue_comment", "pull_request_review", "pull_request", "push", "merge_group",
    "installation", "installation_repositories", "status",
    "branch_protection_rule", "branch_protection_configuration", "repository_ruleset",  # the tamper watch
    "deployment_protection_rule",
})
"""Event label values; anything else is counted as ``other`` so a sender cannot grow the label set."""


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.webhooks = Counter(
            "merge_hold_webhooks",
            "Webhook deliveries by event and outcome (queued, ignored, ping, rejected, unavailable...)",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.webhook_seconds = Histogram(
            "merge_hold_webhook_seconds",
            "Time to acknowledge a webhook delivery",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=self.registry,
        )

    def count_webhook(self, event: str | None, outcome: str) -> None:
        label = event if event in KNOWN_EVENTS else ("none" if not event else "other")
        self.webhooks.labels(event=label, outcome=outcome).inc()


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
