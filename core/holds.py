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
    ``paths`` (room and freeze holds): gitignore-style globs; the hold then holds only a PR that changes
    a matching file (`core.paths`). Empty: every PR in scope.
    """

    id: str
    source: Source
    scope: str
    holder: str
    reason: str
    created_at: datetime
    expires_at: datetime | None = None
    origin: str = ""
    paths: tuple[str, ...] = ()

    def active(self, now: datetime) -> bool:
        return active_until(self.expires_at, now)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "source": self.source.value,
            "scope": self.scope,
            "holder": self.holder,
            "reason": self.reason,
            "created_at": to_iso(self.created_at),
            "expires_at": to_iso(self.expires_at),
            "origin": self.origin,
        }
        if self.paths:
            data["paths"] = list(self.paths)  # absent when empty: records of holds without paths stay as they were
        return data

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
            paths=tuple(str(p) for p in data.get("paths") or ()),
        )


@dataclass(frozen=True)
class Exemption:
    """Lets one PR through room and freeze holds; recorded with who and why; may expire.

    It covers the head commit it was granted on (``head_sha``): a push ends it, a base move does not
    (Prow's ``/override`` against ``/override-sticky``). A ``sticky`` one follows every new head. An
    exemption stored before heads were recorded (no ``sticky`` field) was granted as following every
    head, and keeps doing so. ``channel`` (``slack:T123:C456``) is the chat room it was granted from,
    told when a push ends it.
    """

    pr_scope: str
    by: str
    reason: str
    created_at: datetime
    expires_at: datetime | None = None
    origin: str = ""
    head_sha: str | None = None
    sticky: bool = False
    channel: str = ""

    def active(self, now: datetime) -> bool:
        return active_until(self.expires_at, now)

    def covers(self, head_sha: str | None, now: datetime) -> bool:
        """Whether it lets the PR's head ``head_sha`` through at ``now``."""
        return self.active(now) and (self.sticky or (head_sha is not None and head_sha == self.head_sha))

    def ended_by_push(self, head_sha: str | None, now: datetime) -> bool:
        """Active, bound to a head, and the PR has moved on to another one."""
        return (self.active(now) and not self.sticky and self.head_sha is not None and head_sha is not None
                and head_sha != self.head_sha)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "pr_scope": self.pr_scope,
            "by": self.by,
            "reason": self.reason,
            "created_at": to_iso(self.created_at),
            "expires_at": to_iso(self.expires_at),
            "origin": self.origin,
            "head_sha": self.head_sha,
            "sticky": self.sticky,
        }
        if self.channel:
            data["channel"] = self.channel
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exemption:
        return cls(
            pr_scope=str(data["pr_scope"]),
            by=str(data.get("by", "")),
            reason=str(data.get("reason", "")),
            created_at=from_iso(data.get("created_at")) or datetime.fromtimestamp(0, UTC),
            expires_at=from_iso(data.get("expires_at")),
            origin=str(data.get("origin", "")),
            head_sha=str(data["head_sha"]) if data.get("head_sha") else None,
            # The old form (no field) followed every new head: it keeps doing so across the upgrade.
            sticky=bool(data.get("sticky", True)),
            channel=str(data.get("channel", "")),
        )
