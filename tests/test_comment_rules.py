"""Who may hold and lift, per holder and shared; reviews; convergence under reordering."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.comment_rules import Outcome, apply_comment, apply_review
from core.permissions import Permission
from core.prstate import PullState, Register, comment_hold_active
from core.repo_config import DEFAULT_CONFIG, RepoConfig

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
R, W, M, A, N = Permission.READ, Permission.WRITE, Permission.MAINTAIN, Permission.ADMIN, Permission.NONE


@dataclass(frozen=True)
class C:
    """One comment: who, with what access, whether they wrote the PR, what, and when (minutes)."""

    actor: str
    permission: Permission
    body: str
    minute: int = 0
    author: bool = False
    ref: str = ""


def run(comments: list[C], config: RepoConfig = DEFAULT_CONFIG) -> tuple[PullState, list[Outcome]]:
    state, outcomes = PullState("acme/widgets", 7), []
    for i, c in enumerate(comments):
        ref = c.ref or str(100 + c.minute * 10 + i)
        state, out = apply_comment(
            state, c.body, actor=c.actor, permission=c.permission, is_author=c.author,
            at=T0 + timedelta(minutes=c.minute), ref=ref,
            origin=f"https://github.com/acme/widgets/pull/7#issuecomment-{ref}", config=config,
        )
        outcomes += out
    return state, outcomes


def holders(state: PullState, now: datetime = T0 + timedelta(hours=1)) -> set[str]:
    return {who for who, reg in state.comments.items() if comment_hold_active(state, reg, now)}


SHARED = replace(DEFAULT_CONFIG, shared_holds=True)
NO_AUTHOR = replace(DEFAULT_CONFIG, author_can_hold=False)

ROWS: list[tuple[str, RepoConfig, list[C], set[str], list[str]]] = [
    ("writer holds", DEFAULT_CONFIG, [C("bob", W, "/hold")], {"bob"}, ["held"]),
    ("reader cannot hold", DEFAULT_CONFIG, [C("eve", R, "/hold")], set(), ["refused"]),
    ("non-collaborator cannot hold", DEFAULT_CONFIG, [C("eve", N, "/hold spam")], set(), ["refused"]),
    ("non-collaborator author holds", DEFAULT_CONFIG, [C("ann", N, "/hold", author=True)], {"ann"}, ["held"]),
    ("author rule off", NO_AUTHOR, [C("ann", N, "/hold", author=True)], set(), ["refused"]),
    ("author lifts own", DEFAULT_CONFIG,
     [C("ann", N, "/hold", 0, True), C("ann", N, "/unhold", 1, True)], set(), ["held", "lifted"]),
    ("reader may hold when configured", replace(DEFAULT_CONFIG, hold_permission="read"),
     [C("eve", R, "/hold")], {"eve"}, ["held"]),
    ("writer refused when maintain needed", replace(DEFAULT_CONFIG, hold_permission="maintain"),
     [C("bob", W, "/hold")], set(), ["refused"]),
    ("per holder: Bob's cancel keeps Alice's hold", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/hold cancel", 1)], {"alice"}, ["held", "lifted"]),
    ("writer cannot lift Alice's hold", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/unhold @alice", 1)], {"alice"}, ["held", "refused"]),
    ("maintainer lifts Alice's hold", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("carol", M, "/unhold @Alice", 1)], set(), ["held", "lifted"]),
    ("admin-only lifting refuses maintain", replace(DEFAULT_CONFIG, lift_others_permission="admin"),
     [C("alice", W, "/hold"), C("carol", M, "/unhold @alice", 1)], {"alice"}, ["held", "refused"]),
    ("unhold @self is an own lift", DEFAULT_CONFIG,
     [C("bob", W, "/hold"), C("bob", W, "/unhold @BOB", 1)], set(), ["held", "lifted"]),
    ("admin lifts all", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/hold", 1), C("root", A, "/unhold all", 2)],
     set(), ["held", "held", "lifted_all"]),
    ("writer cannot lift all", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/unhold all", 1)], {"alice"}, ["held", "refused"]),
    ("hold after lift-all stands", DEFAULT_CONFIG,
     [C("root", A, "/unhold all", 1), C("alice", W, "/hold", 2)], {"alice"}, ["lifted_all", "held"]),
    # deliveries out of order: an older command arriving late changes nothing, and says so
    ("older hold arriving after lift-all stays lifted", DEFAULT_CONFIG,
     [C("root", A, "/unhold all", 2), C("alice", W, "/hold", 1)], set(), ["lifted_all", "superseded"]),
    ("older own lift arriving late changes nothing", DEFAULT_CONFIG,
     [C("alice", W, "/hold", 2), C("alice", W, "/unhold", 1)], {"alice"}, ["held", "superseded"]),
    ("older hold arriving after its holder's lift is not held", DEFAULT_CONFIG,
     [C("alice", W, "/unhold", 2), C("alice", W, "/hold", 1)], set(), ["lifted", "superseded"]),
    ("older lift of another's hold arriving late changes nothing", DEFAULT_CONFIG,
     [C("alice", W, "/hold", 2), C("carol", M, "/unhold @alice", 1)], {"alice"}, ["held", "superseded"]),
    ("older hold under a newer hold of the same holder still holds", DEFAULT_CONFIG,
     [C("alice", W, "/hold b", 2), C("alice", W, "/hold a", 1)], {"alice"}, ["held", "held"]),
    ("the same hold delivered twice is held twice", DEFAULT_CONFIG,
     [C("alice", W, "/hold", 1, ref="500"), C("alice", W, "/hold", 1, ref="500")], {"alice"}, ["held", "held"]),
    ("older lift under a newer lift is a lift", DEFAULT_CONFIG,
     [C("alice", W, "/hold", 0), C("alice", W, "/unhold", 2), C("alice", W, "/unhold", 1)], set(),
     ["held", "lifted", "lifted"]),
    ("hold and lift another in one comment", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("carol", M, "/hold mine\n/unhold @alice", 1)],
     {"carol"}, ["held", "held", "lifted"]),
    ("shared: anyone allowed lifts every hold", SHARED,
     [C("alice", W, "/hold"), C("bob", W, "/hold cancel", 1)], set(), ["held", "lifted_all"]),
    ("shared: writer's unhold @alice lifts all", SHARED,
     [C("alice", W, "/hold"), C("dan", W, "/hold", 1), C("bob", W, "/unhold @alice", 2)],
     set(), ["held", "held", "lifted_all"]),
    ("shared: outsider cannot lift", SHARED,
     [C("alice", W, "/hold"), C("eve", N, "/unhold", 1)], {"alice"}, ["held", "refused"]),
    ("quoted command does nothing", DEFAULT_CONFIG, [C("bob", W, "> /hold")], set(), []),
    # lifts with a reason (Prow since May 2025); the first word after the command decides whose hold
    ("cancel with a reason lifts one's own", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/hold", 1), C("bob", W, "/hold cancel review done", 2)],
     {"alice"}, ["held", "held", "lifted"]),
    ("unhold with a reason is not a new hold", DEFAULT_CONFIG,
     [C("bob", W, "/unhold looks good now", 1)], set(), ["lifted"]),
    ("maintainer lifts @alice's with a reason", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("carol", M, "/unhold @alice she is away", 1)], set(), ["held", "lifted"]),
    ("writer's @alice with a reason is refused", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/remove-hold @alice she is away", 1)], {"alice"}, ["held", "refused"]),
    ("admin lifts all with a reason", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/hold", 1), C("root", A, "/unhold all shipped", 2)],
     set(), ["held", "held", "lifted_all"]),
    ("writer's all with a reason is refused", DEFAULT_CONFIG,
     [C("alice", W, "/hold"), C("bob", W, "/unhold all shipped", 1)], {"alice"}, ["held", "refused"]),
    ("shared: remove-hold with a reason lifts the hold", SHARED,
     [C("alice", W, "/hold"), C("bob", W, "/remove-hold ready", 1)], set(), ["held", "lifted_all"]),
    ("shared: outsider's lift with a reason is refused", SHARED,
     [C("alice", W, "/hold"), C("eve", N, "/unhold please", 1)], {"alice"}, ["held", "refused"]),
]


@pytest.mark.parametrize(
    ("config", "comments", "held_by", "kinds"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_rules(config: RepoConfig, comments: list[C], held_by: set[str], kinds: list[str]) -> None:
    state, outcomes = run(comments, config)
    assert holders(state) == held_by
    assert [o.kind for o in outcomes] == kinds


def test_a_superseded_command_says_what_stands() -> None:
    _, outcomes = run([C("alice", W, "/unhold", 2), C("alice", W, "/hold", 1)])
    assert outcomes[-1].message == ("@alice: not held — this /hold (written 2026-03-02 09:01:00 UTC) arrived after a "
                                    "later lift of @alice's hold (2026-03-02 09:02:00 UTC), which stands")
    _, outcomes = run([C("alice", W, "/hold", 2), C("carol", M, "/unhold @alice", 1)])
    assert outcomes[-1].message == ("@carol: @alice's hold stays — this lift (written 2026-03-02 09:01:00 UTC) "
                                    "arrived after a later /hold of theirs (2026-03-02 09:02:00 UTC), which stands")
    _, outcomes = run([C("root", A, "/unhold all", 2), C("alice", W, "/hold", 1)])
    assert "arrived after a later `/unhold all` (2026-03-02 09:02:00 UTC)" in outcomes[-1].message


def test_hold_register_and_expiry() -> None:
    state, [outcome] = run([C("Alice", W, "/hold for 2h waiting on DB", ref="555")])
    at = T0
    assert state.comments["alice"] == Register(
        at=at, held=True, ref="555", reason="waiting on DB", expires_at=at + timedelta(hours=2),
        origin="https://github.com/acme/widgets/pull/7#issuecomment-555", name="Alice",
    )
    assert outcome == Outcome("held", "Alice", "Alice", "waiting on DB", "@Alice held this PR for 2h")
    assert holders(state, at + timedelta(hours=2) - timedelta(seconds=1)) == {"alice"}
    assert holders(state, at + timedelta(hours=2)) == set()


def test_lift_register_is_recorded_under_the_holder() -> None:
    state, _ = run([C("alice", W, "/hold"), C("carol", M, "/unhold @alice", 1, ref="9")])
    assert state.comments["alice"] == Register(at=T0 + timedelta(minutes=1), held=False, ref="9")
    assert "carol" not in state.comments


@pytest.mark.parametrize(("config", "comments", "outcome"), [
    (DEFAULT_CONFIG, [C("bob", W, "/hold"), C("bob", W, "/hold cancel further review has happened", 1)],
     Outcome("lifted", "bob", "bob", "further review has happened", "@bob lifted the hold")),
    (SHARED, [C("alice", W, "/hold"), C("bob", W, "/unhold looks good now", 1)],
     Outcome("lifted_all", "bob", "all", "looks good now", "@bob lifted the hold")),
    (DEFAULT_CONFIG, [C("alice", W, "/hold"), C("carol", M, "/unhold @Alice she is away", 1)],
     Outcome("lifted", "carol", "alice", "she is away", "@carol lifted @Alice's hold")),
    (DEFAULT_CONFIG, [C("alice", W, "/hold"), C("root", A, "/unhold all release is out", 1)],
     Outcome("lifted_all", "root", "all", "release is out", "@root lifted every comment hold")),
    (DEFAULT_CONFIG, [C("alice", W, "/hold"), C("bob", W, "/unhold @alice she is away", 1)],
     Outcome("refused", "bob", "alice", "she is away", "@bob: not done, lifting @alice's hold needs maintain access")),
])
def test_a_lift_keeps_its_reason(config: RepoConfig, comments: list[C], outcome: Outcome) -> None:
    _state, outcomes = run(comments, config)
    assert outcomes[-1] == outcome


def test_refusal_changes_nothing_and_says_why() -> None:
    state, [outcome] = run([C("eve", N, "/hold now")])
    assert state == PullState("acme/widgets", 7)
    assert outcome.kind == "refused" and outcome.reason == "now"
    assert "write access or being the PR author" in outcome.message


# --- reviews -----------------------------------------------------------------------------------


def review(state: PullState, who: str, kind: str, rid: str, minute: int,
           config: RepoConfig = DEFAULT_CONFIG, permission: Permission = W) -> tuple[PullState, list[Outcome]]:
    return apply_review(state, reviewer=who, review_state=kind, review_id=rid,
                        at=T0 + timedelta(minutes=minute), origin=f"review:{rid}", config=config,
                        permission=permission)


def review_holders(state: PullState) -> set[str]:
    return {who for who, reg in state.reviews.items() if reg.held and reg.ref not in state.dismissed}


REVIEW_ROWS: list[tuple[str, list[tuple[str, str, str, int]], set[str]]] = [
    ("changes requested holds", [("rex", "changes_requested", "1", 0)], {"rex"}),
    ("GraphQL spelling", [("rex", "CHANGES_REQUESTED", "1", 0)], {"rex"}),
    ("approval lifts", [("rex", "changes_requested", "1", 0), ("rex", "approved", "2", 1)], set()),
    ("late older approval keeps the hold", [("rex", "changes_requested", "2", 1), ("rex", "approved", "1", 0)],
     {"rex"}),
    ("another reviewer's approval keeps it",
     [("rex", "changes_requested", "1", 0), ("amy", "approved", "2", 1)], {"rex"}),
    ("comment review changes nothing", [("rex", "changes_requested", "1", 0), ("rex", "commented", "2", 1)],
     {"rex"}),
    ("dismissal lifts", [("rex", "changes_requested", "1", 0), ("rex", "dismissed", "1", 1)], set()),
    ("dismissal before the submission arrives", [("rex", "dismissed", "1", 1), ("rex", "changes_requested", "1", 0)],
     set()),
    ("a newer request after a dismissal holds",
     [("rex", "changes_requested", "1", 0), ("rex", "dismissed", "1", 1), ("rex", "changes_requested", "3", 2)],
     {"rex"}),
]


REVIEW_PERMISSION_ROWS: list[tuple[str, Permission, str, bool]] = [
    # (why, reviewer's access, config hold_permission, holds?)
    ("write holds under the default", W, "write", True),
    ("admin holds", A, "write", True),
    ("read access does not hold", R, "write", False),
    ("no access (anyone on a public repo) does not hold", N, "write", False),
    ("triage does not hold when write is needed", Permission.TRIAGE, "write", False),
    ("triage holds when the config asks only triage", Permission.TRIAGE, "triage", True),
    ("write does not hold when the config asks maintain", W, "maintain", False),
]


@pytest.mark.parametrize(("permission", "needed", "holds"), [r[1:] for r in REVIEW_PERMISSION_ROWS],
                         ids=[r[0] for r in REVIEW_PERMISSION_ROWS])
def test_changes_requested_holds_only_with_hold_permission(permission: Permission, needed: str,
                                                           holds: bool) -> None:
    config = replace(DEFAULT_CONFIG, hold_permission=needed)
    state, outcomes = review(PullState("acme/widgets", 7), "rex", "changes_requested", "1", 0, config, permission)
    assert review_holders(state) == ({"rex"} if holds else set())
    assert [o.kind for o in outcomes] == (["held"] if holds else ["refused"])
    if not holds:
        assert state == PullState("acme/widgets", 7)  # nothing recorded: a later permission grant needs a new review
        assert f"{needed} access" in outcomes[0].message


def test_unpermitted_review_does_not_displace_a_permitted_one() -> None:
    """An approval or request from someone without access never lifts anyone else's review hold."""
    state, _ = review(PullState("acme/widgets", 7), "rex", "changes_requested", "1", 0)
    state, _ = review(state, "eve", "changes_requested", "2", 1, permission=N)
    state, _ = review(state, "eve", "approved", "3", 2, permission=N)
    assert review_holders(state) == {"rex"}


@pytest.mark.parametrize(("events", "held_by"), [r[1:] for r in REVIEW_ROWS], ids=[r[0] for r in REVIEW_ROWS])
def test_reviews(events: list[tuple[str, str, str, int]], held_by: set[str]) -> None:
    state = PullState("acme/widgets", 7)
    for who, kind, rid, minute in events:
        state, _ = review(state, who, kind, rid, minute)
    assert review_holders(state) == held_by


def test_review_outcomes_follow_the_switch() -> None:
    off = replace(DEFAULT_CONFIG, review_holds=False)
    state, outcomes = review(PullState("acme/widgets", 7), "rex", "changes_requested", "1", 0, off)
    assert outcomes == [] and review_holders(state) == {"rex"}  # recorded for a later switch-on
    _, outcomes = review(PullState("acme/widgets", 7), "rex", "changes_requested", "1", 0)
    assert [o.kind for o in outcomes] == ["held"]
    assert review(state, "rex", "commented", "2", 1) == (state, [])


# --- convergence -------------------------------------------------------------------------------

BODIES = ["/hold", "/hold for 1h x", "/unhold", "/hold cancel", "/unhold @alice", "/unhold all",
          "/unhold done", "/hold cancel @bob why", "/unhold all shipped",
          "/hold a\n/unhold @bob", "> /hold", "/unhold @carol"]
ACTORS = [("alice", W, False), ("bob", M, False), ("carol", N, True), ("dan", N, False), ("root", A, False)]

comment_st = st.builds(
    lambda who, body, minute: (who, body, minute),
    st.sampled_from(ACTORS), st.sampled_from(BODIES), st.integers(0, 3),
)


@settings(max_examples=150, deadline=None)
@given(
    comments=st.lists(comment_st, min_size=1, max_size=8),
    shared=st.booleans(),
    data=st.data(),
)
def test_any_order_and_duplicates_converge(
    comments: list[tuple[tuple[str, Permission, bool], str, int]], shared: bool, data: st.DataObject
) -> None:
    config = replace(DEFAULT_CONFIG, shared_holds=shared)
    events = [C(who, perm, body, minute, author, ref=str(1000 + i))
              for i, ((who, perm, author), body, minute) in enumerate(comments)]
    reordered = data.draw(st.permutations(events))
    duplicated = reordered + data.draw(st.lists(st.sampled_from(events), max_size=4))
    first, _ = run(events, config)
    second, _ = run(duplicated, config)
    assert second == first
    assert PullState.from_dict(second.to_dict()) == first
