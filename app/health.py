"""Liveness, readiness and Prometheus metrics.

`/metrics` answers only a scraper presenting ``Authorization: Bearer $MERGE_HOLD_METRICS_TOKEN``; with
no token configured it is not served at all (404): counts of deliveries by event and outcome tell an
outsider what runs here and when, and the app is public because GitHub must reach its webhook.

The counters live in `app.metrics`, one registry per app. Under gunicorn every worker process counts
its own requests; a scrape sees the worker that answered it.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterator

from flask import Blueprint, Response, abort, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import Redis
from redis.exceptions import RedisError

from app.services import services
from state import dead_letters

log = logging.getLogger(__name__)

bp = Blueprint("health", __name__)


class IntakeCollector(Collector):
    """The intake's dead letters, read from Redis at scrape time (the pump records them in the workers):
    every entry ever set aside, and how many records wait in the list for someone to look."""

    def __init__(self, redis: Redis, queue: str) -> None:
        self.redis = redis
        self.queue = queue

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        try:
            total = dead_letters.total(self.redis, self.queue)
            waiting = dead_letters.waiting(self.redis, self.queue)
        except RedisError as exc:
            log.warning("intake metrics unavailable: %s", exc)
            return
        counted = CounterMetricFamily("merge_hold_intake_dead_letters",
                                      "Webhook deliveries the intake pump could not use and set aside")
        counted.add_metric([], float(total))
        yield counted
        listed = GaugeMetricFamily("merge_hold_intake_dead_letters_waiting",
                                   "Dead-letter records waiting in the intake's dead-letter list")
        listed.add_metric([], float(waiting))
        yield listed


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
