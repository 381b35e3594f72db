"""The demo sign-in of `merge-hold dev`: be a pretend GitHub user (`core.demo_users`) on this machine.

A dry run has no GitHub to sign in with, so the PR page's Hold and Lift, `/rooms` and its admin forms
would stay out of a newcomer's reach. `merge-hold dev` sets ``MERGE_HOLD_DEMO_SIGNIN`` when it runs
without App credentials on a loopback address; then ``GET /login/demo`` lists the demo users and
``POST /login/demo`` signs one in. The session is exactly a GitHub sign-in's — ``kind: github`` with a
server-side record under `core.keys.web_session` — and `viewer` fills the same ``(login, {repo: role})``
that `app.github_login.viewer` fills, with the roles the roster gives instead of GitHub's, so every
permission check downstream (`app.auth.role_in`) is the real one.

Never offered, and a demo session never honoured, unless all of these hold on every request: the
setting is on, no App is configured (credentials, or a completed `/setup` in the data folder), and the
request comes from loopback without any proxy's forwarding header (`Forwarded`, `X-Forwarded-*`,
`X-Real-IP`, `True-Client-IP`…: a proxy in front makes it remote, and the refusal names the header). The settings
refuse the variable next to App credentials and `merge-hold serve` refuses it on another address.
"""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

from flask import Blueprint, abort, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app import reads
from app.github_login import SESSION_TTL
from app.security import forwarding_header, safe_next
from app.services import services
from app.setup import configured, local
from core import demo_users, keys
from foundation.settings import Settings

log = logging.getLogger(__name__)

bp = Blueprint("demo_login", __name__)


def offered(settings: Settings) -> bool:
    """Whether this request may see or use the demo sign-in."""
    if not settings.demo_signin or settings.has_app_credentials or configured(settings):
        return False
    return local()


@bp.app_context_processor
def _offer() -> dict[str, Any]:
    # The login page links here only when the sign-in would be accepted.
    return {"demo_signin": offered(services().settings)}


@bp.route("/login/demo", methods=["GET", "POST"])
def demo() -> Response | str:
    settings = services().settings
    if not offered(settings):
        proxy = forwarding_header()
        if settings.demo_signin and proxy is not None:
            abort(403, description=f"The demo sign-in answers only requests made on this machine without a "
                                   f"proxy; this one came through one (it carries {proxy}).")
        abort(404)
    target = request.values.get("next")
    if request.method == "GET":
        return render_template("demo_login.html", users=demo_users.DEMO_USERS, next=target,
                               repos=reads.managed_repos(services().redis))
    user = demo_users.find(request.form.get("login", ""))
    if user is None:
        abort(400, "not a demo user")
    sid = secrets.token_urlsafe(32)
    services().redis.set(keys.web_session(sid), json.dumps({"login": user.login, "demo": True}), ex=SESSION_TTL)
    session.clear()
    session.permanent = True
    session.update(user=user.login, kind="github", sid=sid, demo=True)
    log.info("demo sign-in (dry run, loopback): %s", user.login)
    return redirect(safe_next(target, url_for("dashboard.index")))


def viewer() -> tuple[str, dict[str, str]] | None:
    """The demo user and the managed repos they may see with their role in each — the shape of
    `app.github_login.viewer` — or None when the session is gone or the demo is no longer offered."""
    svc = services()
    sid = session.get("sid")
    raw = svc.redis.get(keys.web_session(sid)) if isinstance(sid, str) else None
    if raw is None or not offered(svc.settings):
        return None
    stored = json.loads(raw)
    login = str(stored.get("login") or "")
    if stored.get("demo") is not True or demo_users.find(login) is None:
        return None
    return login, demo_users.roles(login, reads.managed_repos(svc.redis))
