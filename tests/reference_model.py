"""An independent reference model of one PR's verdict, for the model-based tests (design §3, §4).

Deliberately plain and separate from `core.prstate`/`core.verdict`/`core.comment_rules`: no registers,
no tie-breaks, no grammar. It takes the events as the test generated them (already-structured
commands, not comment text), sorts them by their own timestamps and replays them, one after the
other, through the rules of design §3 as a person would read them:

- a comment ``/hold`` by someone allowed to hold (write or better, or the PR's author) places that
  person's hold, replacing their earlier one; ``/hold cancel``/``/unhold`` lifts their own;
  ``/unhold @x`` and ``/unhold all`` need maintain (a ``@x`` naming oneself is one's own lift);
- a timed hold is gone once ``now`` reaches its expiry;
- a reviewer with write access or better holds while their latest changes-requested/approved review
  requests changes and has not been dismissed (a review from anyone else places nothing); a merely
  commented review changes nothing; commands in a review's body count as
  the reviewer's comment at the review's time;
- the hold label holds while present, placed when it was last added;
- the head is the last pushed SHA.

The verdict lists the active holds in the order they were placed; the status names the first.
The hypothesis strategies at the end say what may happen: the histories the model is asked to judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hypothesis import strategies as st

HOLD_LABEL = "do-not-merge/hold"
ROLE_RANK = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
ROLES = {"wanda": "write", "walt": "write", "mia": "maintain", "nora": "none", "otto": "none"}
AUTHORS = {1: "otto", 2: "nora"}
"""Each PR's author has no access of their own, so may hold their own PR and no other."""
REASONS = ("", "db migration", "for the release", "waiting on QA")
NOISE = ("LGTM", "/holdx", "please /hold this", "```\n/hold\n```", "> /hold", "`/hold`", "<!-- /hold -->")
PREFIXES = ("", "Looks risky.\n", "> /unhold all\n\n")


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
    command: Command = Command("noise")  # what the review's body says, as a comment would
    body: str = ""


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
            may_request = rank(roles, event.user) >= ROLE_RANK["write"]
            if event.state == "approved" or (event.state == "changes_requested" and may_request):
                review_of[event.user.lower()] = event
            _comment(event, comment_holds, roles=roles, author=author)
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


def _comment(event: Commented | Reviewed, holds: dict[str, ModelHold], *, roles: dict[str, str], author: str) -> None:
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


# --- what may happen: hypothesis strategies ----------------------------------------------------------


@st.composite
def commands(draw: st.DrawFn) -> tuple[Command, str]:
    """A comment's meaning and a body that says it (command words in any case, decoys around)."""
    kind = draw(st.sampled_from(("hold", "hold", "timed", "expired", "lift", "lift_other", "lift_all", "noise")))
    reason = draw(st.sampled_from(REASONS))
    word = draw(st.sampled_from(("/hold", "/HOLD", "/Hold")))
    prefix = draw(st.sampled_from(PREFIXES))
    if kind in ("hold", "timed", "expired"):
        duration = {"hold": None, "timed": timedelta(hours=1), "expired": timedelta(minutes=10)}[kind]
        spelled = {"hold": "", "timed": " for 1h", "expired": " for 10m"}[kind]
        return Command("hold", reason, duration), f"{prefix}{word}{spelled} {reason}".rstrip()
    if kind == "lift":
        return Command("lift"), prefix + draw(st.sampled_from(("/hold cancel", "/unhold", "/remove-hold", "/UNHOLD")))
    if kind == "lift_other":
        target = draw(st.sampled_from(sorted(ROLES)))
        spelled = draw(st.sampled_from((target, target.upper(), target.capitalize())))
        return Command("lift_other", target=target), f"{prefix}/unhold @{spelled}"
    if kind == "lift_all":
        return Command("lift_all"), prefix + draw(st.sampled_from(("/unhold all", "/remove-hold all")))
    return Command("noise"), draw(st.sampled_from(NOISE))


STEP = st.one_of(
    st.tuples(st.just("comment"), st.sampled_from(sorted(ROLES)), commands()),
    st.tuples(st.just("review"), st.sampled_from(sorted(ROLES)),
              st.sampled_from(("changes_requested", "approved", "commented")),
              st.one_of(st.just((Command("noise"), "")), commands())),
    st.tuples(st.just("dismiss"), st.integers(0, 7)),
    st.tuples(st.just("label"), st.sampled_from((HOLD_LABEL, "bug"))),
    st.tuples(st.just("push")),
    st.tuples(st.just("revert")),  # a force-push back to the commit before the head
)


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[int, tuple[Any, ...]]]:
    """Steps ``(pr, step)`` on PR 1, or on PRs 1 and 2; a step is ``("comment", user, (Command, body))``,
    ``("review", user, state, (Command, body))``, ``("dismiss", pick)``, ``("label", name)``,
    ``("push",)`` or ``("revert",)``."""
    prs = (1, 2) if draw(st.booleans()) else (1,)
    return draw(st.lists(st.tuples(st.sampled_from(prs), STEP), min_size=1, max_size=16))


def hold_step(user: str, reason: str = "") -> tuple[Any, ...]:
    return ("comment", user, (Command("hold", reason), f"/hold {reason}".rstrip()))


def review_step(user: str, state: str) -> tuple[Any, ...]:
    return ("review", user, state, (Command("noise"), ""))
