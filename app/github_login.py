"""Sign in with GitHub: the App's OAuth web flow for the dashboard, and what a signed-in user may see.

``GET /login/github`` sends the browser to ``GITHUB_WEB_URL/login/oauth/authorize`` with a random
``state`` kept in the (signed) session; ``GET /login/github/callback`` checks that state, trades the
code for a user access token (server to server, with ``GITHUB_CLIENT_SECRET``) and asks ``GET /user``
who it is. The token stays server-side in Redis (`core.keys.web_session`), never in the cookie.

A user sees only the repos they can read: this App's installations reachable with their token
(``GET /user/installations``, which lists only the calling App's installations) and, in each, the
repos they have access to (``GET /user/installations/{id}/repositories``), intersected with the repos
merge-hold manages; cached at most `REPOS_TTL` seconds, so a revoked permission is gone within ten
minutes. Without ``GITHUB_CLIENT_ID``/``GITHUB_CLIENT_SECRET`` (dry-run, no App) the token login
(`app.auth`) is the only sign-in.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
from urllib.parse import urlencode

import requests
from flask import Blueprint, abort, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app import reads
from app.security import safe_next
from app.services import services
from core import keys
from foundation.settings import Settings

log = logging.getLogger(__name__)

bp = Blueprint("github_login", __name__)

SESSION_TTL = 12 * 3600
"""As long as the cookie session (PERMANENT_SESSION_LIFETIME)."""
REPOS_TTL = 600
TIMEOUT = 10.0
MAX_PAGES = 20
"""Pages of 100 followed per listing: 2,000 installations or repos is far beyond a dashboard user."""


class GitHubLoginError(Exception):
    """GitHub refused or failed a step of the sign-in; the message is safe to show (no token in it)."""


def enabled(settings: Settings) -> bool:
    return bool(settings.github_client_id and settings.github_client_secret)


def _callback_url(settings: Settings) -> str:
    # The public URL, not the request's Host: the redirect URI must match the App's registered one.
    return settings.public_url + url_for("github_login.callback")


@bp.get("/login/github")
def start() -> Response:
    settings = services().settings
    if not enabled(settings):
        abort(404)
    state = secrets.token_urlsafe(24)
    session["oauth_state"] = state
    session["oauth_next"] = safe_next(request.args.get("next"), url_for("dashboard.index"))
    query = urlencode({"client_id": settings.github_client_id, "redirect_uri": _callback_url(settings),
                       "state": state, "allow_signup": "false"})
    return redirect(f"{settings.github_web_url}/login/oauth/authorize?{query}")


def _refused(message: str, status: int) -> tuple[str, int]:
    return render_template("login.html", error=message, next=None, github=True), status


@bp.get("/login/github/callback")
def callback() -> Response | tuple[str, int]:
    settings = services().settings
    if not enabled(settings):
        abort(404)
    expected, target = session.pop("oauth_state", None), session.pop("oauth_next", None)
    given = request.args.get("state", "")
    if not (isinstance(expected, str) and given and hmac.compare_digest(expected.encode(), given.encode())):
        return _refused("That sign-in did not start here or has expired; please sign in again.", 400)
    if request.args.get("error"):
        return _refused("GitHub did not authorize the sign-in.", 401)
    try:
        token = exchange(settings, request.args.get("code", ""))
        login = whoami(settings, token)
    except GitHubLoginError as exc:
        log.warning("sign in with GitHub failed: %s", exc)
        return _refused(f"Signing in with GitHub failed: {exc}", 502)
    sid = secrets.token_urlsafe(32)
    services().redis.set(keys.web_session(sid), json.dumps({"login": login, "token": token}), ex=SESSION_TTL)
    session.clear()
    session.permanent = True
    session.update(user=login, kind="github", sid=sid)
    log.info("dashboard sign-in with GitHub: %s", login)
    return redirect(safe_next(target if isinstance(target, str) else None, url_for("dashboard.index")))


def exchange(settings: Settings, code: str) -> str:
    """The user access token for an authorization code (single use)."""
    if not code:
        raise GitHubLoginError("no authorization code")
    try:
        answer = requests.post(f"{settings.github_web_url}/login/oauth/access_token", timeout=TIMEOUT,
                               headers={"Accept": "application/json"},
                               data={"client_id": settings.github_client_id,
                                     "client_secret": settings.github_client_secret,
                                     "code": code, "redirect_uri": _callback_url(settings)})
        body = answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise GitHubLoginError(f"the token exchange failed ({type(exc).__name__})") from None
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        reason = body.get("error") if isinstance(body, dict) else None
        raise GitHubLoginError(f"GitHub refused the code ({reason or answer.status_code})")
    return token


def _get(settings: Settings, token: str, path: str) -> requests.Response:
    try:
        answer = requests.get(f"{settings.github_api_url}{path}", timeout=TIMEOUT, allow_redirects=False,
                              headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                                       "X-GitHub-Api-Version": "2022-11-28"})
    except requests.RequestException as exc:
        raise GitHubLoginError(f"GitHub did not answer ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise GitHubLoginError(f"GitHub answered {answer.status_code} to {path.split('?')[0]}")
    return answer


def whoami(settings: Settings, token: str) -> str:
    login = _get(settings, token, "/user").json().get("login")
    if not isinstance(login, str) or not login:
        raise GitHubLoginError("GitHub did not say who signed in")
    return login


def _pages(settings: Settings, token: str, path: str, field: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for page in range(1, MAX_PAGES + 1):
        body = _get(settings, token, f"{path}?per_page=100&page={page}").json()
        items = body.get(field) if isinstance(body, dict) else None
        if not isinstance(items, list):
            break
        found += [item for item in items if isinstance(item, dict)]
        if len(items) < 100:
            break
    return found


ROLES = ("admin", "maintain", "push", "triage", "pull")
"""GitHub's ``permissions`` flags, strongest first; ``push`` is the role repo config calls ``write``."""


def _role(repo: dict[str, object]) -> str:
    flags = repo.get("permissions")
    found = next((r for r in ROLES if isinstance(flags, dict) and flags.get(r)), "pull")
    return {"push": "write", "pull": "read"}.get(found, found)


def readable_repos(settings: Settings, token: str) -> dict[str, str]:
    """Lower-cased full names of the repos in this App's installations the user can read, with the
    user's role in each (admin, maintain, write, triage, read: what the listing's ``permissions`` say)."""
    repos: dict[str, str] = {}
    for installation in _pages(settings, token, "/user/installations", "installations"):
        for repo in _pages(settings, token, f"/user/installations/{installation.get('id')}/repositories",
                           "repositories"):
            if isinstance(repo.get("full_name"), str):
                repos[str(repo["full_name"]).lower()] = _role(repo)
    return repos


def viewer() -> tuple[str, dict[str, str]] | None:
    """The signed-in GitHub user and the managed repos they may see, with their role in each; None
    when the session is gone
    (logged out, expired, or GitHub no longer accepts their token)."""
    sid = session.get("sid")
    svc = services()
    raw = svc.redis.get(keys.web_session(sid)) if isinstance(sid, str) else None
    if raw is None:
        return None
    stored = json.loads(raw)
    if stored.get("demo") or stored.get("kind") == "token":
        return None  # a demo user's or a token sign-in's record is never a GitHub sign-in
    login, token = str(stored.get("login") or ""), str(stored.get("token") or "")
    cached = svc.redis.get(keys.user_repos(login))
    if cached is not None:
        return login, dict(json.loads(cached))
    try:
        readable = readable_repos(svc.settings, token)
    except GitHubLoginError as exc:
        log.info("dashboard session of %s ended: %s", login, exc)
        svc.redis.delete(keys.web_session(str(sid)))
        return None
    managed = {r.lower() for r in reads.managed_repos(svc.redis)}
    visible = {repo: role for repo, role in sorted(readable.items()) if repo in managed}
    svc.redis.set(keys.user_repos(login), json.dumps(visible), ex=REPOS_TTL)
    return login, visible


def sign_out() -> None:
    sid = session.get("sid")
    if isinstance(sid, str):
        services().redis.delete(keys.web_session(sid))
