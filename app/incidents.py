"""What went wrong afterwards, shown: ``GET /incidents`` (dashboard), ``GET /api/v1/incidents`` (API), the
tamper banner on every dashboard page, and the incident and tamper counts in ``/metrics``.

Read-only: the workers record incidents (`workers.events.incidents`) and gate readings (`workers.events.tamper`) in the
state layer (`state.incidents`, `state.gates`). A signed-in user sees only the repos they can read, a
token only its orgs, as everywhere else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Flask, Response, jsonify, render_template, request, session
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import Redis
from redis.exceptions import RedisError

from app import reads
from app.api import outside_orgs
from app.auth import current_identity, login_required, may_see, require_token
from app.services import services
from core import incidents as incident_rules
from core import tamper
from state import gates, incidents

log = logging.getLogger(__name__)

bp = Blueprint("incidents", __name__)
api_bp = Blueprint("api_incidents", __name__, url_prefix="/api/v1")

DEFAULT_LIMIT = 50
MAX_LIMIT = 500

Reply = tuple[Response, int]


def _limit() -> int | None:
    try:
        limit = int(request.args.get("limit", DEFAULT_LIMIT))
    except ValueError:
        return None
    return limit if 1 <= limit <= MAX_LIMIT else None


@bp.get("/incidents")
@login_required
def page() -> str | tuple[str, int]:
    redis = services().redis
    repo = request.args.get("repo") or None
    if repo is not None and not (reads.valid_repo(repo) and may_see(repo)):
        repo = None  # not a filter the reader may use: the whole (visible) list instead
    return render_template("incidents.html", repo=None, filter=repo, dry_run=services().settings.dry_run,
                           incidents=incidents.listing(redis, visible=may_see, repo=repo, limit=MAX_LIMIT),
                           tampered=gates.active(redis, may_see, repo), kinds=incident_rules.KINDS)


def _token_may_see(repo: str) -> bool:
    identity = current_identity()
    return identity is not None and identity.covers(repo)


@api_bp.get("/incidents")
@require_token
def api() -> Reply:
    repo = request.args.get("repo")
    if repo is not None:
        if not reads.valid_repo(repo):
            return jsonify(error="repo must be owner/repo"), 400
        refused = outside_orgs(repo)
        if refused is not None:
            return refused
    limit = _limit()
    if limit is None:
        return jsonify(error=f"limit must be a whole number between 1 and {MAX_LIMIT}"), 400
    redis = services().redis
    return jsonify(incidents=incidents.listing(redis, visible=_token_may_see, repo=repo, limit=limit),
                   tampered=gates.active(redis, _token_may_see, repo)), 200


def banners(repo: str | None = None) -> list[dict[str, Any]]:
    """The tamper banners a dashboard page shows: ``repo``'s on its pages, every visible repo's elsewhere.
    Never breaks a page: with Redis unreachable the page's own reads fail louder."""
    if not session.get("user"):
        return []
    try:
        return gates.active(services().redis, may_see, repo if isinstance(repo, str) and repo else None)
    except RedisError as exc:
        log.warning("tamper banners unavailable: %s", exc)
        return []


class WatchCollector(Collector):
    """Counts read from Redis at scrape time: the workers record, any web process reports the same."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        recorded = CounterMetricFamily("merge_hold_incidents", "PRs merged while merge-hold held them, by kind",
                                       labels=["kind"])
        episodes = CounterMetricFamily("merge_hold_tamper_episodes",
                                       "Branches that stopped (or started again) requiring merge-hold, by kind",
                                       labels=["kind"])
        banners_now = GaugeMetricFamily("merge_hold_gates_unenforced",
                                        "Managed branches (and suspensions) whose holds are not enforced now")
        try:
            found = incidents.counts(self.redis)
            told = gates.counts(self.redis)
            active = len(gates.active(self.redis, lambda _repo: True))
        except RedisError as exc:
            log.warning("incident metrics unavailable: %s", exc)
            return
        for kind in incident_rules.KINDS:
            recorded.add_metric([kind], float(found.get(kind, 0)))
        for kind in (*tamper.KINDS, tamper.RESTORED):
            episodes.add_metric([kind], float(told.get(kind, 0)))
        banners_now.add_metric([], float(active))
        yield recorded
        yield episodes
        yield banners_now


def install(app: Flask, redis: Redis, register: Callable[[Collector], None]) -> None:
    """Register the page, the API route, the banners' template global and the metrics collector."""
    app.register_blueprint(bp)
    app.register_blueprint(api_bp)
    app.add_template_global(banners, "tamper_banners")
    register(WatchCollector(redis))
