"""Exempt labels as grants (pure): who added one, with what permission, on which head.

An exempt label (the config's ``exempt_labels``, or a freeze window's own) lets a PR through room and
freeze holds — as an exemption does, so with the same limits (design §3 "Exceptions"): it counts only
when the `labeled` event's sender had maintain or admin permission (a label is easy to add for someone
with triage, and the PR's author controls nothing else that could stand in for it: branch name, title,
body), and only for the head commit the PR had when it was added: a push ends it, as it ends an
exemption; adding the label again covers the new head. A label merge-hold saw on the PR without its
`labeled` event (before the App was installed, or before this rule) exempts nothing until a maintainer
adds it again: never an exemption on doubt.

Each label keeps its latest `labeled`/`unlabeled` event as a register, ordered by the PR's
``updated_at`` like the hold label's. Within one second nothing orders two label events, so the tie
fails closed: a removal beats an addition, an untrusted addition a trusted one, and then a stable
order, so that any delivery order converges on one state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.holds import from_iso, to_iso
from core.permissions import Permission
from core.repo_config import RepoConfig

GRANT_PERMISSION = Permission.MAINTAIN
"""The least permission whose `labeled` event makes an exempt label count."""


@dataclass(frozen=True)
class LabelGrant:
    """The latest `labeled` (``added``) or `unlabeled` event of one exempt label on one PR."""

    at: datetime
    added: bool
    by: str = ""
    trusted: bool = False
    """The sender had `GRANT_PERMISSION` or more when the event was applied."""
    head_sha: str = ""
    """The PR's head when the label was added: the only commit it exempts."""

    def order(self) -> tuple[datetime, bool, bool, str, str]:
        return (self.at, not self.added, not self.trusted, self.by, self.head_sha)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": to_iso(self.at), "added": self.added, "by": self.by}
        if self.added:
            data.update(trusted=self.trusted, sha=self.head_sha)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelGrant:
        return cls(at=from_iso(data.get("at")) or datetime.fromtimestamp(0, UTC), added=bool(data.get("added")),
                   by=str(data.get("by", "")), trusted=bool(data.get("trusted")), head_sha=str(data.get("sha", "")))


def record_grant(grants: Mapping[str, LabelGrant], name: str, grant: LabelGrant) -> dict[str, LabelGrant]:
    """The grants with ``grant`` applied to label ``name``, kept only if it is the label's newest event."""
    old = grants.get(name)
    if old is not None and grant.order() <= old.order():
        return dict(grants)
    return {**grants, name: grant}


def exempting_labels(config: RepoConfig) -> frozenset[str]:
    """Every label that may exempt in this repo: config-wide, and each freeze window's own."""
    return frozenset(config.exempt_labels).union(*(w.exempt_labels for w in config.freeze_windows))


def granted_labels(grants: Mapping[str, LabelGrant], sure_labels: Iterable[str],
                   head_sha: str | None) -> tuple[str, ...]:
    """The labels that exempt the PR now: surely on it (not contested), last added by someone trusted,
    on the head it has now."""
    if head_sha is None:
        return ()
    return tuple(label for label in sure_labels
                 if (grant := grants.get(label)) is not None and grant.added and grant.trusted
                 and grant.head_sha == head_sha)


def ended_by_push(grants: Mapping[str, LabelGrant], sure_labels: Iterable[str],
                  head_sha: str | None) -> tuple[str, ...]:
    """Labels still on the PR that a trusted sender added for an earlier head: a push ended them."""
    if head_sha is None:
        return ()
    return tuple(label for label in sure_labels
                 if (grant := grants.get(label)) is not None and grant.added and grant.trusted
                 and grant.head_sha and grant.head_sha != head_sha)
