"""What the server knows of one pull request, as registers that converge under any delivery order.

Every input is recorded as a last-writer-wins register keyed by its *own* timestamp (the comment's
``created_at``, the review's ``submitted_at``, the PR's ``updated_at``), never by arrival. GitHub stamps
to the second, but comment ids (and, among one PR's reviews, review ids) increase monotonically: two
comments of one second are ordered by id, so a `/hold` then `/unhold` in one second ends free. Where
nothing orders two events of one second (label events, snapshots, a review's body against a comment, a
dashboard command) the tie fails closed (design §3, invariant 9): the value that holds wins — a hold
over a lift, a snapshot carrying a label over one without it (the label is *contested*, and a contested
hold label holds while a contested exempt label exempts nothing) — and only then a stable reference
breaks the tie, so two workers applying the same events in different orders end with equal states.
Applying an event twice is a no-op. These functions are pure: they return a new state and never read
a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

from core.exempt_labels import LabelGrant, record_grant
from core.holds import active_until, from_iso, to_iso

EPOCH = datetime.fromtimestamp(0, UTC)
MAX_PUSH_EDGES = 16
"""Same-repo pushes remembered per PR (before -> after). Enough to bridge the gap until the
``synchronize`` event, which carries the authoritative head, arrives; small enough for the 2 KB budget."""


class PushEdge(NamedTuple):
    """A push that moved a same-repo head from ``before`` to ``after``."""

    before: str
    after: str
    at: int = 0
    """When GitHub took it (`repository.pushed_at`, epoch seconds), 0 when the event did not say. With
    it a push older than the facts' snapshot is known to be in that snapshot already: a force-push back
    to an earlier commit (A -> B -> A) leaves an edge A -> B that must not move the head again."""


REVIEW_REF = "review:"
"""The ``ref`` prefix of a command in a review's body: review ids and comment ids are separate sequences,
so such a command has no order against a comment of the same second."""
UNORDERED = 1 << 62
"""Above any GitHub id: an unordered hold beats every ordered command of its second."""


def _held_order(at: datetime, held: bool, ref: str) -> tuple[datetime, bool, int, str]:
    """A register's place in time, a total order. A numeric ref is an id of GitHub's own sequence
    (comment ids in the comment registers, review ids in the review registers): within one second the
    id decides, whatever the command. Any other ref (a review body's command, the dashboard, a label
    event) has no order against an id: in its second it beats every lift and every ordered command when
    it holds, and loses to them when it lifts — ties fail closed."""
    if ref.isdigit():
        return (at, True, int(ref), ref)
    return (at, held, UNORDERED if held else -1, ref)


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
        return other is None or _held_order(self.at, self.held, self.ref) > _held_order(other.at, other.held, other.ref)

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
    contested: tuple[str, ...] = ()
    """Labels that some but not all snapshots of this same second carry (a label and an unlabel in one
    second): which came last is unknowable, so a contested hold label holds and a contested exempt
    label does not exempt (ties fail closed)."""

    def key(self) -> tuple[datetime, bool, str]:
        # Equal `updated_at` seconds: an open snapshot wins (it keeps the status posted, a closed one
        # forgets the PR), then a stable text order, so any arrival order converges.
        return (self.at, self.open, repr(replace(self, contested=()).to_dict()))

    def maybe_labelled(self, name: str) -> bool:
        """The label is, or may be, on the PR (present, or contested in the snapshot's second)."""
        return name in self.labels or name in self.contested

    @property
    def sure_labels(self) -> tuple[str, ...]:
        """The labels certainly on the PR: present and not contested."""
        return tuple(label for label in self.labels if label not in self.contested)

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
            **({"contested": list(self.contested)} if self.contested else {}),
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
            contested=tuple(data.get("contested", ())),
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
    push_edges: tuple[PushEdge, ...] = ()
    synced: bool = False
    """True once the PR's comments and reviews were read from GitHub (first sight, or state lost):
    until then the registers may miss commands made before merge-hold saw the PR."""
    labels: dict[str, Register] = field(default_factory=dict)
    """The hold label's last `labeled`/`unlabeled` event (held = added): when it was placed. The facts
    say whether it is there; a snapshot's `updated_at` moves with every later event, so it cannot."""
    grants: dict[str, LabelGrant] = field(default_factory=dict)
    """Each exempt label's last `labeled`/`unlabeled` event: who, trusted or not, on which head."""

    # --- reads -------------------------------------------------------------------------------

    @property
    def head_sha(self) -> str | None:
        """The newest head known: the facts' head, moved along same-repo pushes made since. A timed
        push counts only if it is no older than where the walk stands (the snapshot, then the last
        push followed), and each push is followed once; an untimed one always counts, unless the
        pushes go round in a circle."""
        if self.facts is None:
            return None
        sha, since, seen = self.facts.head_sha, int(self.facts.at.timestamp()), {self.facts.head_sha}
        followed: set[PushEdge] = set()
        while True:
            later = [e for e in self.push_edges
                     if e.before == sha and (not e.at or e.at >= since) and e not in followed]
            if not later:
                return sha
            edge = max(later, key=lambda e: (e.at, e.after))  # the sha only makes ties deterministic
            followed.add(edge)
            sha, since = edge.after, max(since, edge.at)
            if sha in seen and not edge.at:
                # A circle closed by an untimed push: a force-push went back to an earlier commit, and
                # edges without times cannot tell where the head is now; the facts can. (Timed pushes
                # may come back to a commit — A -> C -> B -> C — and the walk goes on from there.)
                return self.facts.head_sha
            seen.add(sha)

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
            "push_edges": [list(e) if e.at else [e.before, e.after] for e in self.push_edges],
            "synced": self.synced,
            "labels": {k: r.to_dict() for k, r in sorted(self.labels.items())},
            "grants": {k: g.to_dict() for k, g in sorted(self.grants.items())},
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
            push_edges=tuple(PushEdge(str(e[0]), str(e[1]), int(e[2]) if len(e) > 2 else 0)
                             for e in data.get("push_edges", ())),
            synced=bool(data.get("synced", False)),
            labels={k: Register.from_dict(v) for k, v in data.get("labels", {}).items()},
            grants={k: LabelGrant.from_dict(v) for k, v in (data.get("grants") or {}).items()},
        )


# --- updates (pure) ------------------------------------------------------------------------------


def record_facts(state: PullState, facts: Facts) -> PullState:
    old = state.facts
    if old is not None and facts.at < old.at:
        return state
    if old is not None and facts.at == old.at:
        # Two snapshots of one second: the key picks one, and the labels they disagree on stay
        # contested (a union: commutative and idempotent, so the order of arrival does not matter).
        winner = facts if facts.key() > old.key() else old
        contested = set(old.contested) | set(facts.contested) | (set(old.labels) ^ set(facts.labels))
        joined = replace(winner, contested=tuple(sorted(contested)))
        return state if joined == old else replace(state, facts=joined)
    # Edges that the new head has already passed stay harmless: they start from older shas.
    return replace(state, facts=facts)


def record_push(state: PullState, before: str, after: str, at: int = 0) -> PullState:
    """A push moved a same-repo head from ``before`` to ``after`` at ``at`` (epoch seconds, 0 unknown).
    The same move made again later (A -> B, back to A, then B again) keeps its latest time."""
    if before == after:
        return state
    same = [e for e in state.push_edges if (e.before, e.after) == (before, after)]
    if same and same[0].at >= at:
        return state
    edges = (*(e for e in state.push_edges if (e.before, e.after) != (before, after)), PushEdge(before, after, at))
    return replace(state, push_edges=edges[-MAX_PUSH_EDGES:])


def record_label(state: PullState, name: str, at: datetime, added: bool) -> PullState:
    """A `labeled`/`unlabeled` event at the PR's ``updated_at``; in the same second, added wins (held):
    label events carry no id that orders them."""
    register = Register(at=at, held=added, ref="label+" if added else "label-")
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
    if state.lifted_all_at is not None and not Register(at, False, ref).newer_than(
            Register(state.lifted_all_at[0], False, state.lifted_all_at[1])):
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
    for edge in other.push_edges:
        state = record_push(state, *edge)
    for name, register in sorted(other.labels.items()):
        state = record_label(state, name, register.at, register.held)
    for name, grant in sorted(other.grants.items()):
        state = replace(state, grants=record_grant(state.grants, name, grant))
    if other.synced and not state.synced:
        state = replace(state, synced=True)
    return state


DASHBOARD_REF = "dashboard:"
"""The ``ref`` prefix of a command made on the dashboard (`core.comment_rules.apply_dashboard`): it has
no comment on GitHub, so a rebuild from GitHub's history cannot find it and must carry it over."""


def from_dashboard(ref: str) -> bool:
    return ref.startswith(DASHBOARD_REF)


def keep_dashboard(rebuilt: PullState, live: PullState) -> PullState:
    """``rebuilt`` (read from GitHub's history) with the live state's dashboard commands and exempt-label
    grants joined in (GitHub's history has neither): the newest of each still wins. Pure, idempotent."""
    state = replace(rebuilt, grants={**live.grants, **rebuilt.grants}) if live.grants else rebuilt
    for holder, register in sorted(live.comments.items()):
        if from_dashboard(register.ref):
            state = record_comment(state, holder, register)
    if live.lifted_all_at is not None and from_dashboard(live.lifted_all_at[1]):
        state = record_lift_all(state, *live.lifted_all_at)
    return state


def comment_hold_active(state: PullState, register: Register, now: datetime) -> bool:
    """A comment hold counts until it expires or a lift of every hold is made after it; in the hold's
    second only a later comment id ends it (otherwise ties fail closed)."""
    if not register.held or not active_until(register.expires_at, now):
        return False
    if state.lifted_all_at is None:
        return True
    lifted_at, lifted_ref = state.lifted_all_at
    return register.newer_than(Register(at=lifted_at, held=False, ref=lifted_ref))
