"""Who may do what over the API: bearer tokens from the hashed tokens file, with scopes and orgs;
and the dashboard's token login on top of them.

The file holds ``name:sha256hex(token)[:scope[:org+org]]`` lines (written by `merge-hold token`); the
server never sees or stores a token in clear. It is read when the app is built and re-read whenever
its mtime, size or inode changes, so `merge-hold token revoke` takes effect without a restart.

Scopes (each includes reading): ``read`` (verdicts, holds, events), ``hook-events`` (plus storing the
agent hook's records), ``hold`` (plus placing and lifting its own room holds), ``admin`` (everything,
lifting any room hold). ``--org`` limits a token to those orgs; without it a token covers every org
the App serves. A line without a scope (made before scopes existed) acts as ``hook-events``, what
such tokens could do.

A token sign-in on the dashboard is ``token:NAME`` in the session, in holds and in the audit log, never
the GitHub user ``NAME``; its session is a server-side record (like a GitHub sign-in's) that sign-out
deletes, so a copied cookie stops working at sign-out, and it acts only within its scope and orgs, as
over the API (`core.hold_rights`).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast, overload

from flask import Blueprint, jsonify, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app import demo_login, github_login
from app.security import safe_next
from app.services import services
from app.token_store import GITHUB, Identity, TokenStore
from core import keys

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def _store() -> TokenStore:
    return services().tokens


def bearer_identity() -> Identity | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return _store().identify(token.strip())


@overload
def require_token(view: F, *, permission: str = ...) -> F: ...


@overload
def require_token(view: None = None, *, permission: str = ...) -> Callable[[F], F]: ...


def require_token(view: F | None = None, *, permission: str = "read") -> F | Callable[[F], F]:
    """API views: 401 JSON unless ``Authorization: Bearer <token>`` names a stored token, 403 unless
    its scope grants ``permission``. ``@require_token`` or ``@require_token(permission="hold")``."""

    def decorate(func: F) -> F:
        @wraps(func)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            identity = bearer_identity()
            if identity is None:
                response = jsonify(error="a valid bearer token is required")
                response.status_code = 401
                response.headers["WWW-Authenticate"] = 'Bearer realm="merge-hold"'
                return response
            if not identity.may(permission):
                response = jsonify(error=f"token {identity.name!r} has scope {identity.scope!r}; "
                                         f"this needs a scope that grants {permission!r}")
                response.status_code = 403
                return response
            request.environ["merge_hold.identity"] = identity
            return func(*args, **kwargs)

        return cast(F, guarded)

    return decorate(view) if view is not None else decorate


def current_identity() -> Identity | None:
    found = request.environ.get("merge_hold.identity")
    return found if isinstance(found, Identity) else None


def github_user() -> str | None:
    """The signed-in GitHub user's login (a demo sign-in's too); None for a token login."""
    identity = current_identity()
    return identity.name if identity is not None and identity.is_github else None


REPOS = "merge_hold.repos"
"""Request environ key: the repos a GitHub-signed-in user may see (absent for a token login)."""


def _session_identity() -> Identity | None:
    if session.get("kind") == "github":
        # `merge-hold dev`'s demo user fills the same viewer as a GitHub sign-in, with roster roles.
        seen = demo_login.viewer() if session.get("demo") else github_login.viewer()
        if seen is None:
            return None
        login, repos = seen
        request.environ[REPOS] = repos
        return Identity(login, GITHUB, "read", ())
    if session.get("kind") == "token":
        return _token_session()
    return None  # a cookie of an older form, or none: sign in again


def _token_session() -> Identity | None:
    """A token sign-in lives while its server-side record does (`core.keys.web_session`, dropped at
    sign-out: a copied cookie dies with it) and the token is still in the file."""
    sid = session.get("sid")
    raw = services().redis.get(keys.web_session(sid)) if isinstance(sid, str) else None
    stored = json.loads(raw) if raw is not None else None
    if not isinstance(stored, dict) or stored.get("kind") != "token":
        return None
    name, fingerprint = stored.get("token"), stored.get("key")
    if not (isinstance(name, str) and isinstance(fingerprint, str)):
        return None
    return _store().still_valid(name, fingerprint)


def login_required(view: F) -> F:
    """Dashboard views: redirect to the login page unless the session is still good: a token still in
    the file, or a GitHub sign-in whose server-side session lives and whose token GitHub accepts."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        identity = _session_identity()
        if identity is None:
            session.clear()
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        request.environ["merge_hold.identity"] = identity
        return view(*args, **kwargs)

    return cast(F, guarded)


def may_see(repo: str) -> bool:
    """Whether the signed-in user may see ``repo``: a GitHub user only their readable repos, a token
    login only its orgs. ``""`` asks whether they see every repo."""
    identity = current_identity()
    if identity is None:
        return False
    repos = request.environ.get(REPOS)
    if isinstance(repos, dict) and (not repo or repo.lower() not in repos):
        return False
    return not identity.orgs if not repo else identity.covers(repo)


RANK = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}


def role_in(repo: str) -> str:
    """The signed-in user's role in ``repo``: GitHub's for a GitHub sign-in. A token sign-in has no
    GitHub role (``read`` where it sees): it acts by its scope, as over the API (`app.rights`)."""
    identity = current_identity()
    if identity is None or not may_see(repo):
        return "none"
    repos = request.environ.get(REPOS)
    if isinstance(repos, dict):
        return str(repos.get(repo.lower(), "none"))
    return "read"


bp = Blueprint("auth", __name__)


@bp.route("/login", methods=["GET", "POST"])
def login() -> Response | str | tuple[str, int]:
    target = request.values.get("next")
    github = github_login.enabled(services().settings)
    if request.method == "POST":
        identity = _store().identify(request.form.get("token", "").strip())
        if identity is None:
            return render_template("login.html", error="That token is not valid.", next=target,
                                   github=github), 401
        sid = secrets.token_urlsafe(32)
        record = {"kind": "token", "token": identity.name, "key": identity.fingerprint}
        services().redis.set(keys.web_session(sid), json.dumps(record), ex=github_login.SESSION_TTL)
        session.clear()
        session.permanent = True
        # The token's own namespace: `token:NAME` is never the GitHub user NAME (`Identity.actor`).
        session.update(kind="token", user=identity.actor, sid=sid)
        return redirect(safe_next(target, url_for("dashboard.index")))
    return render_template("login.html", error=None, next=target, github=github)


@bp.route("/logout", methods=["POST"])
def logout() -> Response:
    github_login.sign_out()  # the server-side record of any sign-in: GitHub's, the demo's, a token's
    session.clear()
    return redirect(url_for("auth.login"))
