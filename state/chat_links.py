"""Links between a GitHub login and a chat identity, and the one-time codes that make them.

`/hold link` in chat issues a code naming the chat user (`issue_code`); the dashboard shows it
(`peek_code`) to a user signed in with GitHub and, on their confirmation, consumes it and records the
link (`consume_code`). The link lets the dashboard ask "is this GitHub user a chat admin?" without
trusting anything the browser says: only the chat platform's signed request vouches for the chat side,
and only GitHub's sign-in for the login.

One link per login and one per chat identity: a new link of either side replaces the old, in the same
transaction (`core.keys.CHAT_LINKS` keeps both directions). Each chat identity has at most one
outstanding code: a new `/hold link`, or `/hold unlink`, voids the previous one, so what the user last
asked for is what holds.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from redis import Redis
from redis.exceptions import WatchError

from core import keys
from core.holds import to_iso
from state.decoding import as_text, maybe_text

CODE_BYTES = 24
"""32 URL-safe characters: unguessable within a code's ten minutes however many tries one makes."""


@dataclass(frozen=True)
class ChatIdentity:
    """A chat user as their platform's signed slash command named them."""

    platform: str  # "slack" | "mattermost"
    team_id: str
    user_id: str
    user_name: str = ""
    team_name: str = ""
    enterprise_id: str = ""
    """Slack Enterprise Grid: the enterprise a workspace may be bound under instead of its own id."""

    @property
    def key(self) -> str:
        """Stable across renames: ids only, as `MERGE_HOLD_CHAT_ADMINS` names people."""
        return f"{self.platform}:{self.team_id}:{self.user_id}"

    @property
    def name(self) -> str:
        return self.user_name or self.user_id

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatIdentity:
        return cls(**{name: str(data.get(name) or "") for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Link:
    login: str
    identity: ChatIdentity
    linked_at: str


def _github(login: str) -> str:
    return f"github:{login.lower()}"


def _chat(identity: ChatIdentity) -> str:
    return f"chat:{identity.key}"


def _pending(identity: ChatIdentity) -> str:
    return f"pending:{identity.key}"


def _identity(raw: Any) -> ChatIdentity | None:
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return ChatIdentity.from_dict(data) if isinstance(data, dict) else None


def issue_code(redis: Redis, identity: ChatIdentity,
               make: Callable[[int], str] = secrets.token_urlsafe) -> str:
    """A fresh code naming ``identity``, valid `core.keys.CHAT_LINK_TTL` seconds; the identity's previous
    code stops working."""
    code = make(CODE_BYTES)
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(keys.CHAT_LINKS)  # type: ignore[no-untyped-call]
                previous = pipe.hget(keys.CHAT_LINKS, _pending(identity))
                pipe.multi()
                if previous is not None:
                    pipe.delete(keys.chat_link_code(as_text(previous)))
                pipe.set(keys.chat_link_code(code), json.dumps(identity.to_dict()), ex=keys.CHAT_LINK_TTL)
                pipe.hset(keys.CHAT_LINKS, _pending(identity), code)
                pipe.execute()
                return code
            except WatchError:
                continue


def peek_code(redis: Redis, code: str) -> ChatIdentity | None:
    """The identity a live code names, without using it up (the confirm page); None when unknown or expired."""
    return _identity(redis.get(keys.chat_link_code(code)))


def consume_code(redis: Redis, code: str, login: str, now: datetime) -> Link | None:
    """Use the code up and link ``login`` to the identity it names, replacing either side's earlier link.
    None when the code is unknown, expired or already used: a code links once, even when two
    confirmations race (the transaction watches the code)."""
    code_key = keys.chat_link_code(code)
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(code_key, keys.CHAT_LINKS)  # type: ignore[no-untyped-call]
                identity = _identity(pipe.get(code_key))
                if identity is None:
                    pipe.unwatch()
                    return None
                old_login = pipe.hget(keys.CHAT_LINKS, _chat(identity))
                old_identity = _identity(pipe.hget(keys.CHAT_LINKS, _github(login)))
                link = Link(login=login, identity=identity, linked_at=to_iso(now) or "")
                pipe.multi()
                pipe.delete(code_key)
                pipe.hdel(keys.CHAT_LINKS, _pending(identity))
                if old_login is not None:
                    pipe.hdel(keys.CHAT_LINKS, _github(as_text(old_login)))
                if old_identity is not None:
                    pipe.hdel(keys.CHAT_LINKS, _chat(old_identity))
                pipe.hset(keys.CHAT_LINKS, mapping={
                    _github(login): json.dumps({**identity.to_dict(), "login": login, "linked_at": link.linked_at}),
                    _chat(identity): login})
                pipe.execute()
                return link
            except WatchError:
                continue


def linked(redis: Redis, login: str) -> Link | None:
    """The chat identity linked to this GitHub login, if any."""
    raw = redis.hget(keys.CHAT_LINKS, _github(login))
    identity = _identity(raw)
    if identity is None or raw is None:
        return None
    data = json.loads(raw)
    return Link(login=str(data.get("login") or login), identity=identity, linked_at=str(data.get("linked_at") or ""))


def unlink(redis: Redis, identity: ChatIdentity) -> str | None:
    """Remove the identity's link (and void its outstanding code); the login it was linked to, if any."""
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(keys.CHAT_LINKS)  # type: ignore[no-untyped-call]
                login = pipe.hget(keys.CHAT_LINKS, _chat(identity))
                code = pipe.hget(keys.CHAT_LINKS, _pending(identity))
                pipe.multi()
                if code is not None:
                    pipe.delete(keys.chat_link_code(as_text(code)))
                if login is not None:
                    pipe.hdel(keys.CHAT_LINKS, _github(as_text(login)))
                pipe.hdel(keys.CHAT_LINKS, _chat(identity), _pending(identity))
                pipe.execute()
                return maybe_text(login)
            except WatchError:
                continue
