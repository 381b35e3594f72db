"""A hold: "this must not merge yet", with an owner, a reason and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class Source(StrEnum):
    COMMENT = "comment"
    REVIEW = "review"
    LABEL = "label"
    ROOM = "room"
    FREEZE = "freeze"


EXEMPTIBLE = frozenset({Source.ROOM, Source.FREEZE})
"""Exceptions let a PR through room and freeze holds, never through comment, review or label holds."""


TOKEN_PREFIX = "token:"
"""The namespace of API tokens wherever a person's name would stand: holders, actors, sessions."""


def named(holder: str) -> str:
    """A holder or actor as people read it: ``@alice`` for a person, a token as its ``token:NAME``
    (never ``@NAME``: a token is not the GitHub user of the same name)."""
    return holder if holder.startswith(TOKEN_PREFIX) or not holder else f"@{holder}"


def to_iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def from_iso(text: str | None) -> datetime | None:
    """GitHub's ``2019-05-15T15:20:33Z`` (and any ISO 8601 with an offset) -> aware UTC datetime."""
    if not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def active_until(expires_at: datetime | None, now: datetime) -> bool:
    """The expiry rule, the one place it is spelled: a hold (or exemption) with an expiry counts while
    ``now`` is before it, and is gone from that instant on; no expiry, no end.

    The agent hook keeps a copy for its start-up budget (`hook/decide.py` ``_expired``), pinned to this
    rule by `tests/test_expiry_rule.py`."""
    return expires_at is None or now < expires_at


def record_hold_active(hold: dict[str, Any], now: datetime) -> bool:
    """The expiry rule on a hold as stored in a verdict record (``expires_at`` ISO 8601 or null). An
    unreadable expiry is not a reason to drop a hold: it still counts."""
    try:
        expires = from_iso(hold.get("expires_at"))
    except (TypeError, ValueError, AttributeError):
        return True
    return active_until(expires, now)


@dataclass(frozen=True)
class Hold:
    """One hold on one PR or on a scope of PRs.

    ``scope`` is ``owner/repo#12``, ``owner/repo``, ``owner/repo@branch-glob`` or ``owner``.
    ``origin`` says where it came from: a comment URL, a review id, the label, a chat room, a schedule.
    """

    id: str
    source: Source
    scope: str
    holder: str
    reason: str
    created_at: datetime
    expires_at: datetime | None = None
    origin: str = ""

    def active(self, now: datetime) -> bool:
        return active_until(self.expires_at, now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source.value,
            "scope": self.scope,
            "holder": self.holder,
            "reason": self.reason,
            "created_at": to_iso(self.created_at),
            "expires_at": to_iso(self.expires_at),
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hold:
        created = from_iso(data.get("created_at"))
        return cls(
            id=str(data["id"]),
            source=Source(data["source"]),
            scope=str(data.get("scope", "")),
            holder=str(data.get("holder", "")),
            reason=str(data.get("reason", "")),
            created_at=created or datetime.fromtimestamp(0, UTC),
            expires_at=from_iso(data.get("expires_at")),
            origin=str(data.get("origin", "")),
        )


@dataclass(frozen=True)
class Exemption:
    """Lets one PR through room and freeze holds; recorded with who and why; may expire."""

    pr_scope: str
    by: str
    reason: str
    created_at: datetime
    expires_at: datetime | None = None
    origin: str = ""

    def active(self, now: datetime) -> bool:
        return active_until(self.expires_at, now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pr_scope": self.pr_scope,
            "by": self.by,
            "reason": self.reason,
            "created_at": to_iso(self.created_at),
            "expires_at": to_iso(self.expires_at),
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exemption:
        return cls(
            pr_scope=str(data["pr_scope"]),
            by=str(data.get("by", "")),
            reason=str(data.get("reason", "")),
            created_at=from_iso(data.get("created_at")) or datetime.fromtimestamp(0, UTC),
            expires_at=from_iso(data.get("expires_at")),
            origin=str(data.get("origin", "")),
        )
