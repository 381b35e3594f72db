"""Who may read: API bearer tokens from the hashed tokens file, and the dashboard's login on top of them.

The file holds ``name:sha256hex(token)`` lines (written by `merge-hold token`); the server never sees
or stores a token in clear. It is read when the app is built and re-read whenever its mtime, size or
inode changes, so `merge-hold token revoke` takes effect without a restart.
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
from typing import Any, TypeVar, cast

from flask import Blueprint, jsonify, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from app.security import safe_next
from app.services import services

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def parse_tokens(text: str) -> dict[str, str]:
    """``name:hash`` lines -> {name: hash}; blank lines and ``#`` comments are skipped."""
    entries: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, digest = line.rpartition(":")
        if sep and name and len(digest) == 64:
            entries[name] = digest.lower()
        else:
            log.warning("tokens file: skipping a malformed line")
    return entries


@dataclass(frozen=True)
class Identity:
    name: str
    fingerprint: str
    """A prefix of the stored hash: ties a dashboard session to this token, not to a reused name."""


class TokenStore:
    """The hashed tokens file, reloaded on change. No file configured -> no token is valid."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._entries: dict[str, str] = {}
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
                entries = {} if stamp is None else parse_tokens(Path(self._path).read_text(encoding="utf-8"))
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
        for name, digest in self._entries.items():
            # No early exit: the time taken does not tell how many entries were compared.
            if hmac.compare_digest(presented, digest):
                found = Identity(name, digest[:16])
        return found

    def still_valid(self, name: str, fingerprint: str) -> bool:
        self._refresh()
        digest = self._entries.get(name)
        return digest is not None and hmac.compare_digest(digest[:16], fingerprint)


def _store() -> TokenStore:
    return services().tokens


def bearer_identity() -> Identity | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return _store().identify(token.strip())


def require_token(view: F) -> F:
    """API views: 401 JSON unless ``Authorization: Bearer <token>`` names a stored token."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        identity = bearer_identity()
        if identity is None:
            response = jsonify(error="a valid bearer token is required")
            response.status_code = 401
            response.headers["WWW-Authenticate"] = 'Bearer realm="merge-hold"'
            return response
        request.environ["merge_hold.identity"] = identity
        return view(*args, **kwargs)

    return cast(F, guarded)


def current_identity() -> Identity | None:
    found = request.environ.get("merge_hold.identity")
    return found if isinstance(found, Identity) else None


def login_required(view: F) -> F:
    """Dashboard views: redirect to the login form unless the session's token is still in the file."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        name, fingerprint = session.get("user"), session.get("key")
        if not (isinstance(name, str) and isinstance(fingerprint, str)
                and _store().still_valid(name, fingerprint)):
            session.clear()
            return redirect(url_for("auth.login", next=request.full_path.rstrip("?")))
        request.environ["merge_hold.identity"] = Identity(name, fingerprint)
        return view(*args, **kwargs)

    return cast(F, guarded)


bp = Blueprint("auth", __name__)


@bp.route("/login", methods=["GET", "POST"])
def login() -> Response | str | tuple[str, int]:
    target = request.values.get("next")
    if request.method == "POST":
        identity = _store().identify(request.form.get("token", "").strip())
        if identity is None:
            return render_template("login.html", error="That token is not valid.", next=target), 401
        session.clear()
        session.permanent = True
        session["user"], session["key"] = identity.name, identity.fingerprint
        return redirect(safe_next(target, url_for("dashboard.index")))
    return render_template("login.html", error=None, next=target)


@bp.route("/logout", methods=["POST"])
def logout() -> Response:
    session.clear()
    return redirect(url_for("auth.login"))
