"""The API tokens file as the server reads it: hashed grants with scopes and orgs, reloaded on change.

No Flask here: `app.services` names `TokenStore` for its type and `merge-hold token` (`merge_hold.tokens`)
writes the same file, neither through the request-handling `app.auth` that imports the services.
The file holds ``name:sha256hex(token)[:scope[:org+org]]`` lines (see `app.auth` for what each scope
may do); the server never sees or stores a token in clear.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from core.holds import TOKEN_PREFIX

log = logging.getLogger(__name__)


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
GITHUB = "github"
"""The fingerprint of a GitHub sign-in's identity (a token's is a prefix of its hash)."""


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

    @property
    def is_github(self) -> bool:
        """A GitHub sign-in (or the demo's pretend GitHub user), not a token."""
        return self.fingerprint == GITHUB

    @property
    def actor(self) -> str:
        """Who acts, as holds and the audit log name them: the GitHub login, or ``token:NAME``. The two
        namespaces never meet: a token named ``ada`` is not the GitHub user ``ada``."""
        return self.name if self.is_github else f"{TOKEN_PREFIX}{self.name}"

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
