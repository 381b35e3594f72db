"""Who may hold and lift: the one place the permission rules of comment and review holds apply.

The grammar (`core.comments`) says what a comment asks; these rules decide what it does to the PR's
registers (`core.prstate`). Each command becomes a register keyed by the comment's own timestamp and
id, so applying the same comments in any order, or twice, ends in the same state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from core import jobs
from core.comments import CommentCommand, parse_comment
from core.durations import format_duration
from core.permissions import Permission
from core.prstate import (
    DASHBOARD_REF,
    REVIEW_REF,
    Facts,
    PullState,
    Register,
    from_dashboard,
    record_comment,
    record_dismissal,
    record_facts,
    record_lift_all,
    record_review,
)
from core.repo_config import RepoConfig


@dataclass(frozen=True)
class Outcome:
    """What one command did, for the audit log and any reply.

    ``kind``: ``held``, ``lifted``, ``lifted_all``, ``refused``, or ``superseded`` (a command older than
    one already recorded, which stands: deliveries may arrive out of order, and the audit log, the
    answer on the PR and the verdict must still agree); ``target`` is whose hold (the holder for holds
    and lifts, ``all`` for a lift of every hold).
    """

    kind: str
    actor: str
    target: str
    reason: str
    message: str


def _may_hold(permission: Permission, is_author: bool, config: RepoConfig) -> bool:
    return permission >= Permission.parse(config.hold_permission) or (is_author and config.author_can_hold)


def _may_lift_others(permission: Permission, config: RepoConfig) -> bool:
    return permission >= Permission.parse(config.lift_others_permission)


def _hold_rule(config: RepoConfig) -> str:
    author = " or being the PR author" if config.author_can_hold else ""
    return f"{config.hold_permission} access{author}"


def apply_comment(
    state: PullState,
    body: str,
    *,
    actor: str,
    permission: Permission,
    is_author: bool,
    at: datetime,
    ref: str,
    origin: str,
    config: RepoConfig,
) -> tuple[PullState, list[Outcome]]:
    """Apply the commands in a comment by ``actor``; ``ref`` is the comment id (the tie-break),
    ``origin`` its URL. A refused command changes nothing and is reported as ``refused``."""
    outcomes: list[Outcome] = []
    for command in parse_comment(body):
        state, outcome = _apply_one(
            state, command, actor=actor, permission=permission, is_author=is_author,
            at=at, ref=ref, origin=origin, config=config,
        )
        outcomes.append(outcome)
    return state, outcomes


def _apply_one(
    state: PullState,
    command: CommentCommand,
    *,
    actor: str,
    permission: Permission,
    is_author: bool,
    at: datetime,
    ref: str,
    origin: str,
    config: RepoConfig,
) -> tuple[PullState, Outcome]:
    may_hold = _may_hold(permission, is_author, config)
    if command.kind == "hold":
        if not may_hold:
            return state, _refused(actor, actor, command.reason, f"placing a hold needs {_hold_rule(config)}")
        expires = at + command.duration if command.duration is not None else None
        register = Register(at=at, held=True, ref=ref, reason=command.reason, expires_at=expires, origin=origin)
        timed = f" for {format_duration(command.duration)}" if command.duration is not None else ""
        recorded = record_comment(state, actor, register)
        later = _later_lift(recorded, actor, register)
        if later is not None:
            return recorded, Outcome("superseded", actor, actor, command.reason,
                                     f"@{actor}: not held — this /hold (written {_when(at)}) arrived after {later}, "
                                     "which stands")
        return recorded, Outcome("held", actor, actor, command.reason, f"@{actor} held this PR{timed}")

    own = command.target is None or command.target.lower() == actor.lower()
    why = command.reason  # a lift's reason is kept with what it did, refused or not (audit log, history)
    if config.shared_holds:
        # Prow's semantics: one shared hold; anyone allowed to hold may lift it, whoever placed it.
        if not may_hold:
            return state, _refused(actor, command.target or actor, why, f"lifting needs {_hold_rule(config)}")
        return _lift_all(state, actor, at, ref, why, f"@{actor} lifted the hold")
    if own:
        if not may_hold:
            return state, _refused(actor, actor, why, f"lifting your hold needs {_hold_rule(config)}")
        lifted = record_comment(state, actor, Register(at=at, held=False, ref=ref))
        later = _later_hold(state, lifted, actor, ref)
        if later is not None:
            return lifted, Outcome("superseded", actor, actor, why, f"@{actor}: your hold stays — this lift (written "
                                   f"{_when(at)}) arrived after {later}, which stands")
        return lifted, Outcome("lifted", actor, actor, why, f"@{actor} lifted the hold")
    target = command.target or actor
    if not _may_lift_others(permission, config):
        whose = "every hold" if target == "all" else f"@{target}'s hold"
        return state, _refused(
            actor, target, why, f"lifting {whose} needs {config.lift_others_permission} access"
        )
    if target == "all":
        return _lift_all(state, actor, at, ref, why, f"@{actor} lifted every comment hold")
    lifted = record_comment(state, target, Register(at=at, held=False, ref=ref))
    later = _later_hold(state, lifted, target, ref)
    if later is not None:
        return lifted, Outcome("superseded", actor, target.lower(), why, f"@{actor}: @{target}'s hold stays — this "
                               f"lift (written {_when(at)}) arrived after {later}, which stands")
    return lifted, Outcome("lifted", actor, target.lower(), why, f"@{actor} lifted @{target}'s hold")


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S UTC")


def _later_lift(state: PullState, holder: str, register: Register) -> str | None:
    """What already lifted ``holder``'s hold after ``register`` was written, when something did: a later
    lift of it (theirs or a maintainer's), or a later ``/unhold all``. None when the hold stands."""
    standing = state.comments.get(holder.lower())
    if standing is not None and standing.ref != register.ref and not standing.held:
        return f"a later lift of @{holder}'s hold ({_when(standing.at)})"
    if state.lifted_all_at is not None:
        lifted_at, lifted_ref = state.lifted_all_at
        if not register.newer_than(Register(at=lifted_at, held=False, ref=lifted_ref)):
            return f"a later `/unhold all` ({_when(lifted_at)})"
    return None


def _later_hold(before: PullState, after: PullState, holder: str, ref: str) -> str | None:
    """What keeps ``holder``'s hold after a lift that changed nothing: a later hold of theirs."""
    if after is not before:
        return None
    standing = before.comments.get(holder.lower())
    if standing is None or standing.ref == ref or not standing.held:
        return None
    return f"a later /hold of theirs ({_when(standing.at)})"


DASHBOARD_ORIGIN = "dashboard"
DASHBOARD_JOB = jobs.DASHBOARD_COMMAND.address
"""The rq job the web tier enqueues for a hold or lift made on a PR's page (it never imports workers)."""


def apply_dashboard(
    state: PullState,
    command: CommentCommand,
    *,
    actor: str,
    permission: Permission,
    is_author: bool,
    at: datetime,
    ref: str,
    config: RepoConfig,
) -> tuple[PullState, Outcome]:
    """A hold or lift made on the PR's dashboard page by a GitHub user: exactly what the same command in
    a comment of theirs would do — the same permission rules, the same per-holder register (so their
    `/unhold` comment lifts it and a maintainer's `/unhold @user` or `/unhold all` too) — with origin
    ``dashboard``. ``at`` comes from `core.comment_rules.dashboard_time`; ``ref`` must start with
    `core.prstate.DASHBOARD_REF`, which is what keeps the command across a rebuild from GitHub."""
    if not from_dashboard(ref):
        raise ValueError(f"a dashboard command's ref starts with {DASHBOARD_REF!r}: {ref!r}")
    return _apply_one(state, command, actor=actor, permission=permission, is_author=is_author, at=at, ref=ref,
                      origin=DASHBOARD_ORIGIN, config=config)


def apply_dashboard_command(
    state: PullState,
    command: CommentCommand,
    *,
    actor: str,
    permission: Permission,
    is_author: bool,
    submitted: datetime,
    seen: datetime | None,
    ref: str,
    config: RepoConfig,
) -> tuple[PullState, Outcome]:
    """`apply_dashboard` for the page's job: the command dated against the very state it is applied to
    (`dashboard_time` of ``submitted``, the server clock when the page was submitted, and ``seen``, the
    time of the hold the page showed), so a retried write dates it again."""
    at = dashboard_time(state, submitted, lift=command.kind == "lift", seen=seen)
    return apply_dashboard(state, command, actor=actor, permission=permission, is_author=is_author, at=at, ref=ref,
                           config=config)


SEEN_SKEW = timedelta(seconds=60)  # how far ahead of our clock GitHub's may date a hold the page showed


def dashboard_time(state: PullState, now: datetime, *, lift: bool, seen: datetime | None = None) -> datetime:
    """When a dashboard command counts: the server clock to the second, the precision of GitHub's comment
    timestamps, so the tie rules apply (a comment hold of the same second beats a dashboard lift: ties
    fail closed). A lift still comes after every dashboard command it may lift, and after the comment hold
    the page showed (``seen``, its time): the person saw it, so the lift is causally later."""
    at = now.replace(microsecond=0)
    if not lift:
        return at
    marks = [r.at for r in state.comments.values() if from_dashboard(r.ref)]
    if state.lifted_all_at is not None and from_dashboard(state.lifted_all_at[1]):
        marks.append(state.lifted_all_at[0])
    after = [m + timedelta(microseconds=1) for m in marks if m <= now]
    if seen is not None and seen <= now + SEEN_SKEW and any(r.held and r.at == seen for r in state.comments.values()):
        after.append(seen + timedelta(microseconds=1))
    return max([at, *after])


CHECK_RUN_ORIGIN = "check_run"


def apply_click(
    state: PullState,
    *,
    actor: str,
    permission: Permission,
    now: datetime,
    seen: datetime | None,
    ref: str,
    config: RepoConfig,
) -> tuple[PullState, Outcome]:
    """*Lift my hold* clicked on the PR's check run: exactly the lift of their own hold a comment or the
    page would make — the same permission rule, the same per-holder register — with origin ``check_run``,
    dated as a page lift is (`dashboard_time`: after the hold the clicked run showed them, ``seen``), by
    the PR's author when the state says so. ``ref`` starts with `core.prstate.DASHBOARD_REF` like a page
    command's: no comment on GitHub carries it, so a rebuild from GitHub's history must carry it over."""
    if not from_dashboard(ref):
        raise ValueError(f"a click's ref starts with {DASHBOARD_REF!r}: {ref!r}")
    return _apply_one(state, CommentCommand("lift"), actor=actor, permission=permission,
                      is_author=bool(state.facts and state.facts.author == actor),
                      at=dashboard_time(state, now, lift=True, seen=seen), ref=ref, origin=CHECK_RUN_ORIGIN,
                      config=config)


def _lift_all(state: PullState, actor: str, at: datetime, ref: str, reason: str,
              message: str) -> tuple[PullState, Outcome]:
    return record_lift_all(state, at, ref), Outcome("lifted_all", actor, "all", reason, message)


def _refused(actor: str, target: str, reason: str, why: str) -> Outcome:
    return Outcome("refused", actor, target, reason, f"@{actor}: not done, {why}")


REVIEW_STATES = frozenset({"approved", "changes_requested", "commented", "dismissed", "pending"})
"""GitHub's review states (webhooks spell them in lower case, GraphQL in upper case)."""


def apply_review(
    state: PullState,
    *,
    reviewer: str,
    review_state: str,
    review_id: str,
    at: datetime,
    origin: str,
    config: RepoConfig,
    permission: Permission,
) -> tuple[PullState, list[Outcome]]:
    """A review's effect on its reviewer's hold. Recorded even when `review_holds` is off, so that
    switching it on later takes effect without re-reading the PR (the verdict applies the switch).

    A changes-requested review holds only from a reviewer with ``hold_permission`` (anyone may review
    a public repo's PR); from anyone else it changes nothing and is reported as ``refused``."""
    kind = review_state.lower()
    if kind == "changes_requested" and permission < Permission.parse(config.hold_permission):
        outcome = _refused(reviewer, reviewer, "changes requested",
                           f"a changes-requested review holds only with {config.hold_permission} access")
        return state, _only_if(config.review_holds, outcome)
    if kind == "changes_requested":
        register = Register(at=at, held=True, ref=review_id, reason="changes requested", origin=origin)
        outcome = Outcome("held", reviewer, reviewer, "changes requested", f"@{reviewer} requested changes")
        return record_review(state, reviewer, register), _only_if(config.review_holds, outcome)
    if kind == "approved":
        register = Register(at=at, held=False, ref=review_id, origin=origin)
        outcome = Outcome("lifted", reviewer, reviewer, "", f"@{reviewer} approved")
        return record_review(state, reviewer, register), _only_if(config.review_holds, outcome)
    if kind == "dismissed":
        outcome = Outcome("lifted", reviewer, reviewer, "", f"review {review_id} by @{reviewer} dismissed")
        return record_dismissal(state, review_id), _only_if(config.review_holds, outcome)
    return state, []


def _only_if(condition: bool, outcome: Outcome) -> list[Outcome]:
    return [outcome] if condition else []


def apply_review_event(
    state: PullState,
    *,
    facts: Facts | None,
    reviewer: str,
    review_state: str,
    review_id: str,
    body: str,
    is_author: bool,
    at: datetime,
    origin: str,
    config: RepoConfig,
    permission: Permission,
) -> tuple[PullState, list[Outcome]]:
    """What a ``pull_request_review`` delivery does: the PR's ``facts`` recorded (when it carried a head),
    the review's effect on its reviewer's hold (`apply_review`), and the commands in its ``body`` (a
    submitted review's; empty otherwise) as a comment of the reviewer's, ordered as a review body's
    (`core.prstate.REVIEW_REF`). Returns the state and the outcomes of both."""
    if facts is not None:
        state = record_facts(state, facts)
    state, found = apply_review(state, reviewer=reviewer, review_state=review_state, review_id=review_id, at=at,
                                origin=origin, config=config, permission=permission)
    if body:
        state, more = apply_comment(state, body, actor=reviewer, permission=permission, is_author=is_author, at=at,
                                    ref=f"{REVIEW_REF}{review_id}", origin=origin, config=config)
        found = [*found, *more]
    return state, found
