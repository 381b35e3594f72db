"""An independent reference model of one PR's verdict, for the model-based tests (design §3, §4).

Deliberately plain and separate from `core.prstate`/`core.verdict`/`core.comment_rules`: no registers,
no tie-breaks, no grammar. It takes the events as the test generated them (already-structured
commands, not comment text), sorts them by their own timestamps and replays them, one after the
other, through the rules of design §3 as a person would read them:

- a comment ``/hold`` by someone allowed to hold (write or better, or the PR's author) places that
  person's hold, replacing their earlier one; ``/hold cancel``/``/unhold`` lifts their own;
  ``/unhold @x`` and ``/unhold all`` need maintain (a ``@x`` naming oneself is one's own lift);
- a timed hold is gone once ``now`` reaches its expiry;
- a reviewer holds while their latest changes-requested/approved review requests changes and has not
  been dismissed; a merely commented review changes nothing;
- the hold label holds while present, placed when it was last added;
- the head is the last pushed SHA.

The verdict lists the active holds in the order they were placed; the status names the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

HOLD_LABEL = "do-not-merge/hold"
ROLE_RANK = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}


@dataclass(frozen=True)
class Command:
    """What a comment means. ``verb``: hold, lift (one's own), lift_other (``target``), lift_all, noise."""

    verb: str
    reason: str = ""
    duration: timedelta | None = None
    target: str = ""


@dataclass(frozen=True)
class Opened:
    at: datetime
    sha: str


@dataclass(frozen=True)
class Commented:
    at: datetime
    comment_id: int
    user: str
    command: Command
    body: str


@dataclass(frozen=True)
class Reviewed:
    at: datetime
    review_id: int
    user: str
    state: str  # changes_requested | approved | commented


@dataclass(frozen=True)
class Dismissed:
    at: datetime
    review_id: int
    user: str
    submitted_at: datetime


@dataclass(frozen=True)
class Labeled:
    at: datetime
    name: str
    added: bool
    labels: tuple[str, ...]  # the PR's whole label set after this change


@dataclass(frozen=True)
class Pushed:
    at: datetime
    before: str
    after: str


Event = Opened | Commented | Reviewed | Dismissed | Labeled | Pushed


@dataclass(frozen=True)
class ModelHold:
    source: str  # comment | review | label
    holder: str  # login as spelled by its owner; "" for the label
    reason: str
    placed_at: datetime
    expires_at: datetime | None = None

    def phrase(self) -> str:
        if self.source == "comment":
            return f"Held by @{self.holder}" + (f": {self.reason}" if self.reason else "")
        if self.source == "review":
            return f"Changes requested by @{self.holder}"
        return f"Held by label {HOLD_LABEL}"


@dataclass(frozen=True)
class Expected:
    head_sha: str
    holds: tuple[ModelHold, ...]

    @property
    def held(self) -> bool:
        return bool(self.holds)

    @property
    def state(self) -> str:
        return "failure" if self.holds else "success"

    @property
    def description(self) -> str:
        if not self.holds:
            return "No holds"
        more = len(self.holds) - 1
        return self.holds[0].phrase() + (f" (+{more} more)" if more else "")


def rank(roles: dict[str, str], login: str) -> int:
    return ROLE_RANK[roles.get(login.lower(), "none")]


def expected(events: list[Event], *, roles: dict[str, str], author: str, now: datetime) -> Expected:
    """The verdict of one PR once all its ``events`` are applied, judged at ``now``.

    ``roles``: lower-case login -> repository role; ``author``: the PR's author."""
    comment_holds: dict[str, ModelHold] = {}
    review_of: dict[str, Reviewed] = {}  # reviewer -> their latest changes-requested or approval
    dismissed: set[int] = set()
    label_since: datetime | None = None
    head = ""
    for event in sorted(events, key=lambda e: e.at):
        if isinstance(event, Opened):
            head = event.sha
        elif isinstance(event, Pushed):
            head = event.after
        elif isinstance(event, Labeled):
            if event.name == HOLD_LABEL:
                label_since = event.at if event.added else None
        elif isinstance(event, Reviewed):
            if event.state in ("changes_requested", "approved"):
                review_of[event.user.lower()] = event
        elif isinstance(event, Dismissed):
            dismissed.add(event.review_id)
        else:
            _comment(event, comment_holds, roles=roles, author=author)
    holds = [h for h in comment_holds.values() if h.expires_at is None or now < h.expires_at]
    holds += [ModelHold("review", review.user, "changes requested", review.at)
              for review in review_of.values()
              if review.state == "changes_requested" and review.review_id not in dismissed]
    if label_since is not None:
        holds.append(ModelHold("label", "", f"label {HOLD_LABEL}", label_since))
    return Expected(head, tuple(sorted(holds, key=lambda h: h.placed_at)))


def _comment(event: Commented, holds: dict[str, ModelHold], *, roles: dict[str, str], author: str) -> None:
    command, actor = event.command, event.user
    may_hold = rank(roles, actor) >= ROLE_RANK["write"] or actor.lower() == author.lower()
    may_lift_others = rank(roles, actor) >= ROLE_RANK["maintain"]
    verb = command.verb
    if verb == "lift_other" and command.target.lower() == actor.lower():
        verb = "lift"
    if verb == "hold" and may_hold:
        expires = event.at + command.duration if command.duration is not None else None
        holds[actor.lower()] = ModelHold("comment", actor, command.reason, event.at, expires)
    elif verb == "lift" and may_hold:
        holds.pop(actor.lower(), None)
    elif verb == "lift_other" and may_lift_others:
        holds.pop(command.target.lower(), None)
    elif verb == "lift_all" and may_lift_others:
        holds.clear()
