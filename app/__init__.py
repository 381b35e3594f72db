"""The web app: webhook receiver, chat commands, JSON API, dashboard, health and metrics.

Production runs ``gunicorn "app:create_app()"`` (or `merge-hold serve`). Importing this package does
nothing but define the factory: settings are read, and blueprints imported, only when it is called.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from flask import Flask, Response, jsonify, request
from redis.exceptions import RedisError
from werkzeug.exceptions import HTTPException

if TYPE_CHECKING:
    from redis import Redis

    from foundation.settings import Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, *, redis: Redis | None = None) -> Flask:
    """Build the app. ``settings`` default to `foundation.settings.from_env()`; ``redis`` to a client
    for ``REDIS_URL`` (required unless given)."""
    from app import (
        api,
        api_exemptions,
        api_holds,
        auth,
        calendar_feed,
        chat,
        chat_links,
        dashboard,
        dashboard_actions,
        demo_login,
        exemption_actions,
        freeze_actions,
        freeze_api,
        github_login,
        health,
        incidents,
        live,
        security,
        setup,
        webhook_endpoints,
        webhook_page,
        webhooks,
    )
    from app.intake_writer import IntakeWriter
    from app.metrics import Metrics
    from app.services import EXTENSION, Services, redis_client
    from app.startup import gunicorn_workers
    from app.token_store import TokenStore
    from core import keys
    from foundation.settings import SettingsError, from_env, require
    from state.queueing import work_queue

    settings = from_env() if settings is None else settings
    if redis is None:
        require(settings, "REDIS_URL")
        assert settings.redis_url is not None
        redis = redis_client(settings.redis_url)

    app = Flask(__name__)
    secret_key = settings.secret_key
    if not secret_key:
        workers = gunicorn_workers()
        if workers is not None and workers > 1:
            # Each worker would draw its own key and refuse the others' sessions (`app.startup`).
            raise SettingsError(
                f"MERGE_HOLD_SECRET_KEY is not set and gunicorn runs {workers} workers: each would sign "
                "sessions with a key of its own, and a sign-in made on one would be refused by the others. "
                "Set MERGE_HOLD_SECRET_KEY to one long random value for every worker and replica "
                "(`python -c 'import secrets; print(secrets.token_hex(32))'`), run `merge-hold serve`, "
                "or run one worker.")
        # Sessions then last as long as this process; `merge-hold serve` picks one key for all workers.
        log.warning("MERGE_HOLD_SECRET_KEY is not set: dashboard sessions end when the process restarts")
        secret_key = secrets.token_hex(32)
    app.config.update(
        SECRET_KEY=secret_key,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        SESSION_COOKIE_NAME="merge_hold_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.public_url.startswith("https://"),
        PERMANENT_SESSION_LIFETIME=timedelta(hours=12),
    )
    https = settings.public_url.startswith("https://")
    security.install(app, https=https, github_web_url=settings.github_web_url)
    metrics = Metrics()
    app.extensions[EXTENSION] = Services(
        settings=settings,
        redis=redis,
        queue=work_queue(redis, settings.queue_name),
        tokens=TokenStore(settings.api_tokens_file),
        metrics=metrics,
    )

    # The webhook receiver answers ahead of Flask (design §7's acknowledgement budget; `app.webhooks`).
    intake = IntakeWriter(redis, keys.intake(settings.queue_name), settings.min_replicas)
    headers = security.response_headers(settings.github_web_url)
    webhooks.install(app, webhooks.Receiver(settings, metrics, intake, headers, https=https))
    app.register_blueprint(api.bp)
    app.register_blueprint(api_holds.bp)
    app.register_blueprint(freeze_api.bp)  # GET /api/v1/freeze/{owner}/{repo}: for deploy scripts
    app.register_blueprint(calendar_feed.bp)  # GET /calendar/{org}.ics, /calendar/{owner}/{repo}.ics
    app.register_blueprint(webhook_endpoints.bp)  # /api/v1/orgs/{org}/webhooks: outgoing webhooks, admins
    app.register_blueprint(api_exemptions.bp)  # exemptions bound to a head, or sticky (admin tokens)
    app.register_blueprint(health.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(github_login.bp)
    app.register_blueprint(demo_login.bp)  # `merge-hold dev` only: answers 404 unless offered
    # Chat commands (`POST /chat/slack`, `POST /chat/mattermost`); static paths win over the
    # dashboard's `/<owner>/<repo>/pull/<n>` in Werkzeug's matcher whatever the order.
    app.register_blueprint(chat.bp)
    app.register_blueprint(dashboard.bp)
    app.register_blueprint(dashboard_actions.bp)
    app.register_blueprint(freeze_actions.bp)  # freeze and thaw on /rooms
    app.register_blueprint(exemption_actions.bp)  # exempt a PR's head from its page
    app.register_blueprint(chat_links.bp)  # /link/<code>: a chat user linked to a GitHub login
    app.register_blueprint(webhook_page.bp)  # /orgs/{org}/webhooks: outgoing webhooks on the dashboard
    incidents.install(app, redis, metrics.registry.register)  # /incidents, its API, banners, metrics
    metrics.registry.register(health.IntakeCollector(redis, settings.queue_name))  # the intake's dead letters
    setup.install(app, setup.SetupConfig(settings, setup.RedisStates(redis), redis=redis))
    live.install(app)  # the live pages' conditional refresh (static/live.js)

    _register_errors(app)
    return app


def _wants_json() -> bool:
    """Machine routes answer errors in JSON; so does a path under theirs that matched no route."""
    from app.security import MACHINE_ROUTES, machine_route

    if request.url_rule is not None:
        return machine_route()
    return request.path.startswith(MACHINE_ROUTES)


ERROR_PAGES = {
    400: ("Not accepted", "merge-hold could not use that request."),
    403: ("Not allowed", "Your sign-in does not allow this."),
    404: ("Not found", "There is no such page here, or it is about a repository your sign-in cannot see "
                       "(merge-hold does not say which)."),
    405: ("Not this way", "This address does not take that kind of request."),
    413: ("Too large", "That request is larger than merge-hold accepts."),
    500: ("Something went wrong", "merge-hold failed to answer this page; the error is logged. The holds are "
                                  "safe: they live in Redis and in GitHub's commit statuses, not on this page."),
    503: ("Unavailable for a moment", "The state store is unavailable; retry in a moment."),
}
"""Pages a browser gets for an error (JSON clients get JSON): code -> (title, what it means)."""


def _error_page(code: int, description: str | None = None) -> tuple[str, int]:
    from flask import render_template, session

    title, message = ERROR_PAGES.get(code, ("Error", "merge-hold could not answer this request."))
    hint = None
    if code == 403 and session.get("user"):
        hint = f"You are signed in as {session.get('user')}; another sign-in may have the access this needs."
    detail = description if description and code in (400, 403, 413) else None
    try:  # the page reads nothing from Redis: it must render when Redis is what failed
        return render_template("error.html", error_page=True, code=code, title=title, message=detail or message,
                               hint=hint), code
    except Exception:
        log.exception("the %s page failed to render", code)
        return f"{code} {title}: {detail or message}", code


def _register_errors(app: Flask) -> None:
    @app.errorhandler(RedisError)
    def redis_down(exc: RedisError) -> tuple[Response | str, int]:
        log.warning("redis unavailable: %s", exc)
        if _wants_json():
            return jsonify(error="state store unavailable; retry later"), 503
        return _error_page(503)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response | HTTPException | tuple[str, int]:
        # JSON clients get JSON errors (413 from the body cap, 404, 405...); browsers get a page.
        if _wants_json():
            response = jsonify(error=exc.description or exc.name)
            response.status_code = exc.code or 500
            return response
        if exc.code is None or exc.code < 400 or request.method == "HEAD":
            return exc
        page, code = _error_page(exc.code, exc.description)
        response = Response(page, status=code, mimetype="text/html")
        for name, value in exc.get_headers():
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value  # Allow on a 405, Retry-After on a 503
        return response
