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
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast, overload

from flask import Blueprint, jsonify, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app import demo_login, github_login
from app.security import safe_next
from app.services import services

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


SCOPES: dict[str, frozenset[str]] = {
    "read": frozenset({"read"}),
    "hook-events": frozenset({"read", "hook-events"}),
    "hold": frozenset({"read", "hold"}),
    "admin": frozenset({"read", "hook-events", "hold", "admin"}),
}
"""Scope name -> the permissions it grants; routes ask for one permission each."""
LEGACY_SCOPE = "hook-events"


@dataclass(frozen=True)
class Grant:
    digest: str
    scope: str = LEGACY_SCOPE
    orgs: tuple[str, ...] = ()
    """Lower-cased; empty: every org."""


def parse_grants(text: str) -> dict[str, Grant]:
    """``name:hash[:scope[:org+org]]`` lines -> {name: grant}; blank lines and ``#`` comments are skipped,
    and so is any line that does not parse (an unknown scope grants nothing rather than guessing)."""
    entries: dict[str, Grant] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(":")
        name, digest = fields[0], fields[1] if len(fields) > 1 else ""
        scope = fields[2] if len(fields) > 2 else LEGACY_SCOPE
        orgs = tuple(sorted({o.lower() for o in (fields[3] if len(fields) > 3 else "").split("+") if o}))
        if name and len(digest) == 64 and scope in SCOPES and len(fields) <= 4:
            entries[name] = Grant(digest.lower(), scope, orgs)
        else:
            log.warning("tokens file: skipping a malformed line")
    return entries


def parse_tokens(text: str) -> dict[str, str]:
    """{name: hash} of the tokens file."""
    return {name: grant.digest for name, grant in parse_grants(text).items()}


@dataclass(frozen=True)
class Identity:
    name: str
    fingerprint: str
    """A prefix of the stored hash: ties a dashboard session to this token, not to a reused name."""
    scope: str = "read"
    orgs: tuple[str, ...] = ()

    def may(self, permission: str) -> bool:
        return permission in SCOPES.get(self.scope, frozenset())

    def covers(self, repo_or_scope: str) -> bool:
        """Whether an owner, repo or hold scope lies within this token's orgs."""
        owner = repo_or_scope.split("/", 1)[0].split("#", 1)[0].split("@", 1)[0].lower()
        return not self.orgs or owner in self.orgs


class TokenStore:
    """The hashed tokens file, reloaded on change. No file configured -> no token is valid."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._entries: dict[str, Grant] = {}
        self._refresh()

    def _refresh(self) -> None:
        if self._path is None:
            return
        try:
            st = os.stat(self._path)
        except OSError:
            stamp = None
        else:
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            if stamp == self._stamp:
                return
            try:
                entries = {} if stamp is None else parse_grants(Path(self._path).read_text(encoding="utf-8"))
            except OSError as exc:
                log.warning("tokens file %s unreadable: %s", self._path, exc.strerror)
                entries = {}
            self._entries, self._stamp = entries, stamp

    def names(self) -> list[str]:
        self._refresh()
        return sorted(self._entries)

    def identify(self, token: str) -> Identity | None:
        """The identity whose hash matches, compared in constant time against every entry."""
        if not token:
            return None
        self._refresh()
        presented = token_hash(token)
        found: Identity | None = None
        for name, grant in self._entries.items():
            # No early exit: the time taken does not tell how many entries were compared.
            if hmac.compare_digest(presented, grant.digest):
                found = Identity(name, grant.digest[:16], grant.scope, grant.orgs)
        return found

    def still_valid(self, name: str, fingerprint: str) -> Identity | None:
        """The session's identity, as the file now grants it; None once revoked or replaced."""
        self._refresh()
        grant = self._entries.get(name)
        if grant is None or not hmac.compare_digest(grant.digest[:16], fingerprint):
            return None
        return Identity(name, fingerprint, grant.scope, grant.orgs)


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
        return Identity(login, "github", "read", ())
    name, fingerprint = session.get("user"), session.get("key")
    if isinstance(name, str) and isinstance(fingerprint, str):
        return _store().still_valid(name, fingerprint)
    return None


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
TOKEN_ROLE = {"admin": "admin", "hold": "write"}
"""A token login acts with its scope: ``hold`` as a writer (its own holds), ``admin`` as an admin."""


def role_in(repo: str) -> str:
    """The signed-in user's role in ``repo``: GitHub's for a GitHub sign-in, the token scope's else."""
    identity = current_identity()
    if identity is None or not may_see(repo):
        return "none"
    repos = request.environ.get(REPOS)
    if isinstance(repos, dict):
        return str(repos.get(repo.lower(), "none"))
    return TOKEN_ROLE.get(identity.scope, "read")


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
        session.clear()
        session.permanent = True
        session["user"], session["key"] = identity.name, identity.fingerprint
        return redirect(safe_next(target, url_for("dashboard.index")))
    return render_template("login.html", error=None, next=target, github=github)


@bp.route("/logout", methods=["POST"])
def logout() -> Response:
    if session.get("kind") == "github":
        github_login.sign_out()
    session.clear()
    return redirect(url_for("auth.login"))
