"""What the server knows of one pull request, as registers that converge under any delivery order.

Every input is recorded as a last-writer-wins register keyed by its *own* timestamp (the comment's
``created_at``, the review's ``submitted_at``, the PR's ``updated_at``), never by arrival. Ties break
on a stable reference (comment or review id), so two workers applying the same events in different
orders end with equal states. Applying an event twice is a no-op. These functions are pure: they
return a new state and never read a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from core.holds import from_iso, to_iso

EPOCH = datetime.fromtimestamp(0, UTC)
MAX_PUSH_EDGES = 16
"""Same-repo pushes remembered per PR (before -> after). Enough to bridge the gap until the
``synchronize`` event, which carries the authoritative head, arrives; small enough for the 2 KB budget."""


def _order(at: datetime, ref: str) -> tuple[datetime, int, str]:
    # Numeric ids compare as numbers (comment 10 after comment 9), others as text.
    return (at, int(ref) if ref.isdigit() else -1, ref)


@dataclass(frozen=True)
class Register:
    """The latest command of one holder (comment holds) or one reviewer (review holds)."""

    at: datetime
    held: bool
    ref: str = ""
    reason: str = ""
    expires_at: datetime | None = None
    origin: str = ""
    name: str = ""
    """The login as GitHub spells it, for display; registers are keyed by the lower-cased login."""

    def newer_than(self, other: Register | None) -> bool:
        return other is None or _order(self.at, self.ref) > _order(other.at, other.ref)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": to_iso(self.at), "held": self.held, "ref": self.ref}
        if self.reason:
            data["reason"] = self.reason
        if self.expires_at:
            data["exp"] = to_iso(self.expires_at)
        if self.origin:
            data["origin"] = self.origin
        if self.name:
            data["name"] = self.name
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Register:
        return cls(
            at=from_iso(data["at"]) or EPOCH,
            held=bool(data["held"]),
            ref=str(data.get("ref", "")),
            reason=str(data.get("reason", "")),
            expires_at=from_iso(data.get("exp")),
            origin=str(data.get("origin", "")),
            name=str(data.get("name", "")),
        )


@dataclass(frozen=True)
class Facts:
    """The PR as GitHub last described it (``pull_request`` object of an event), ordered by ``at``."""

    at: datetime
    head_sha: str
    head_ref: str
    head_repo: str  # full name of the head's repo; differs from the PR's repo for forks
    base: str
    author: str
    open: bool = True
    draft: bool = False
    labels: tuple[str, ...] = ()

    def key(self) -> tuple[datetime, str]:
        # A stable tie-break for equal `updated_at` seconds: any total order converges.
        return (self.at, repr(self.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": to_iso(self.at),
            "sha": self.head_sha,
            "ref": self.head_ref,
            "head_repo": self.head_repo,
            "base": self.base,
            "author": self.author,
            "open": self.open,
            "draft": self.draft,
            "labels": list(self.labels),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Facts:
        return cls(
            at=from_iso(data["at"]) or EPOCH,
            head_sha=str(data["sha"]),
            head_ref=str(data.get("ref", "")),
            head_repo=str(data.get("head_repo", "")),
            base=str(data.get("base", "")),
            author=str(data.get("author", "")),
            open=bool(data.get("open", True)),
            draft=bool(data.get("draft", False)),
            labels=tuple(data.get("labels", ())),
        )


@dataclass(frozen=True)
class PullState:
    repo: str
    number: int
    facts: Facts | None = None
    comments: dict[str, Register] = field(default_factory=dict)
    lifted_all_at: tuple[datetime, str] | None = None
    reviews: dict[str, Register] = field(default_factory=dict)
    dismissed: frozenset[str] = frozenset()
    push_edges: tuple[tuple[str, str], ...] = ()
    synced: bool = False
    """True once the PR's comments and reviews were read from GitHub (first sight, or state lost):
    until then the registers may miss commands made before merge-hold saw the PR."""
    labels: dict[str, Register] = field(default_factory=dict)
    """The hold label's last `labeled`/`unlabeled` event (held = added): when it was placed. The facts
    say whether it is there; a snapshot's `updated_at` moves with every later event, so it cannot."""

    # --- reads -------------------------------------------------------------------------------

    @property
    def head_sha(self) -> str | None:
        """The newest head known: the facts' head, moved along same-repo pushes seen since."""
        if self.facts is None:
            return None
        edges = dict(self.push_edges)
        sha, seen = self.facts.head_sha, {self.facts.head_sha}
        while sha in edges:
            sha = edges[sha]
            if sha in seen:
                # The pushes go round in a circle: a force-push went back to an earlier commit. Edges
                # carry no order, so they cannot tell where the head is now; the facts can.
                return self.facts.head_sha
            seen.add(sha)
        return sha

    def label_since(self, name: str) -> datetime | None:
        """When the label was last added, if its `labeled` event was seen and no later `unlabeled`."""
        register = self.labels.get(name)
        return register.at if register is not None and register.held else None

    @property
    def is_fork(self) -> bool:
        return self.facts is not None and self.facts.head_repo.lower() != self.repo.lower()

    # --- serialisation -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "number": self.number,
            "facts": self.facts.to_dict() if self.facts else None,
            "comments": {k: r.to_dict() for k, r in sorted(self.comments.items())},
            "lifted_all_at": (
                [to_iso(self.lifted_all_at[0]), self.lifted_all_at[1]] if self.lifted_all_at else None
            ),
            "reviews": {k: r.to_dict() for k, r in sorted(self.reviews.items())},
            "dismissed": sorted(self.dismissed),
            "push_edges": [list(e) for e in self.push_edges],
            "synced": self.synced,
            "labels": {k: r.to_dict() for k, r in sorted(self.labels.items())},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PullState:
        lifted = data.get("lifted_all_at")
        return cls(
            repo=str(data["repo"]),
            number=int(data["number"]),
            facts=Facts.from_dict(data["facts"]) if data.get("facts") else None,
            comments={k: Register.from_dict(v) for k, v in data.get("comments", {}).items()},
            lifted_all_at=(from_iso(lifted[0]) or EPOCH, str(lifted[1])) if lifted else None,
            reviews={k: Register.from_dict(v) for k, v in data.get("reviews", {}).items()},
            dismissed=frozenset(data.get("dismissed", ())),
            push_edges=tuple((str(a), str(b)) for a, b in data.get("push_edges", ())),
            synced=bool(data.get("synced", False)),
            labels={k: Register.from_dict(v) for k, v in data.get("labels", {}).items()},
        )


# --- updates (pure) ------------------------------------------------------------------------------


def record_facts(state: PullState, facts: Facts) -> PullState:
    if state.facts is not None and facts.key() <= state.facts.key():
        return state
    # Edges that the new head has already passed stay harmless: they start from older shas.
    return replace(state, facts=facts)


def record_push(state: PullState, before: str, after: str) -> PullState:
    """A push moved a same-repo head from ``before`` to ``after``."""
    edge = (before, after)
    if edge in state.push_edges or before == after:
        return state
    edges = (*state.push_edges, edge)[-MAX_PUSH_EDGES:]
    return replace(state, push_edges=edges)


def record_label(state: PullState, name: str, at: datetime, added: bool) -> PullState:
    """A `labeled`/`unlabeled` event at the PR's ``updated_at``; in the same second, added wins (held)."""
    register = Register(at=at, held=added, ref="1" if added else "0")
    if not register.newer_than(state.labels.get(name)):
        return state
    return replace(state, labels={**state.labels, name: register})


def record_comment(state: PullState, holder: str, register: Register) -> PullState:
    """A holder's hold or lift, kept only if it is the holder's newest command."""
    key = holder.lower()
    if not register.newer_than(state.comments.get(key)):
        return state
    if register.held and not register.name:
        register = replace(register, name=holder)
    return replace(state, comments={**state.comments, key: register})


def record_lift_all(state: PullState, at: datetime, ref: str) -> PullState:
    """`/unhold all` (or any lift under shared semantics): every comment hold placed before it ends."""
    mark = _order(at, ref)
    if state.lifted_all_at is not None and mark <= _order(*state.lifted_all_at):
        return state
    return replace(state, lifted_all_at=(at, ref))


def record_review(state: PullState, reviewer: str, register: Register) -> PullState:
    """A review's effect on its reviewer's hold: ``held`` for changes requested, not held for approval."""
    key = reviewer.lower()
    if not register.newer_than(state.reviews.get(key)):
        return state
    if register.held and not register.name:
        register = replace(register, name=reviewer)
    return replace(state, reviews={**state.reviews, key: register})


def record_dismissal(state: PullState, review_id: str) -> PullState:
    """A dismissed review never holds, whenever its submission arrives (kept as a tombstone)."""
    if review_id in state.dismissed:
        return state
    return replace(state, dismissed=state.dismissed | {review_id})


def merge_states(mine: PullState, other: PullState) -> PullState:
    """The join of two states of one PR (e.g. the live one and one rebuilt from GitHub's history):
    every register keeps its newest value, tombstones and pushes are united. Commutative, idempotent."""
    state = mine
    if other.facts is not None:
        state = record_facts(state, other.facts)
    for holder, register in sorted(other.comments.items()):
        state = record_comment(state, holder, register)
    if other.lifted_all_at is not None:
        state = record_lift_all(state, *other.lifted_all_at)
    for reviewer, register in sorted(other.reviews.items()):
        state = record_review(state, reviewer, register)
    for review_id in sorted(other.dismissed):
        state = record_dismissal(state, review_id)
    for before, after in other.push_edges:
        state = record_push(state, before, after)
    for name, register in sorted(other.labels.items()):
        state = record_label(state, name, register.at, register.held)
    if other.synced and not state.synced:
        state = replace(state, synced=True)
    return state


def comment_hold_active(state: PullState, register: Register, now: datetime) -> bool:
    if not register.held:
        return False
    if register.expires_at is not None and now >= register.expires_at:
        return False
    return state.lifted_all_at is None or _order(register.at, register.ref) > _order(*state.lifted_all_at)
