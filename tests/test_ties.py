"""Ties fail closed (design §3, invariant 9): equal timestamps on a register that decides holdness
resolve toward held, whatever the order the events arrive in. Pure core, no I/O."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.comment_rules import apply_comment, apply_review
from core.exempt_labels import LabelGrant, record_grant
from core.holds import Hold, Source
from core.permissions import Permission
from core.prstate import Facts, PullState, merge_states, record_facts, record_label
from core.repo_config import DEFAULT_CONFIG
from core.verdict import compute_verdict

T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = T + timedelta(hours=1)
LABEL = DEFAULT_CONFIG.hold_label
EXEMPT = "emergency"
CONFIG = replace(DEFAULT_CONFIG, exempt_labels=(EXEMPT,))
ROOM = Hold("room:1", Source.ROOM, "acme/widgets", "ops", "release", T - timedelta(days=1))


def snapshot(labels: tuple[str, ...], *, at: datetime = T, open_: bool = True, sha: str = "a" * 40) -> Facts:
    return Facts(at=at, head_sha=sha, head_ref="feature", head_repo="acme/widgets", base="main",
                 author="otto", open=open_, labels=labels)


def held(state: PullState, scoped: tuple[Hold, ...] = ()) -> list[str]:
    verdict = compute_verdict(state, config=CONFIG, now=NOW, scoped_holds=scoped)
    return [h.id for h in verdict.holds]


def comment(state: PullState, body: str, ref: str, at: datetime = T, actor: str = "alice",
            permission: Permission = Permission.MAINTAIN) -> PullState:
    new, _ = apply_comment(state, body, actor=actor, permission=permission, is_author=False, at=at, ref=ref,
                           origin="", config=CONFIG)
    return new


def review(state: PullState, kind: str, ref: str) -> PullState:
    new, _ = apply_review(state, reviewer="rex", review_state=kind, review_id=ref, at=T, origin="",
                          config=CONFIG, permission=Permission.WRITE)
    return new


BASE = record_facts(PullState("acme/widgets", 7), snapshot((), at=T - timedelta(minutes=5)))

# Each row: why, the same-second steps (applied in every order), the hold ids the verdict must show.
TIE_ROWS = [
    # Comment ids order two comments of one second (GitHub's ids increase monotonically).
    ("/hold then /unhold by one holder in one second: the later comment id lifts",
     [lambda s: comment(s, "/hold", "11"), lambda s: comment(s, "/unhold", "12")], []),
    ("/unhold then /hold in one second: the later comment id holds",
     [lambda s: comment(s, "/hold", "12"), lambda s: comment(s, "/unhold", "11")], ["comment:alice"]),
    ("/unhold all after the hold in its second ends it",
     [lambda s: comment(s, "/hold", "11", actor="bob", permission=Permission.WRITE),
      lambda s: comment(s, "/unhold all", "12")], []),
    ("/unhold all before the hold in its second does not",
     [lambda s: comment(s, "/hold", "12", actor="bob", permission=Permission.WRITE),
      lambda s: comment(s, "/unhold all", "11")], ["comment:bob"]),
    ("/hold, /unhold, /hold in one second",
     [lambda s: comment(s, "/hold", "11"), lambda s: comment(s, "/unhold", "12"),
      lambda s: comment(s, "/hold", "13")], ["comment:alice"]),
    ("changes requested then approved in one second: the later review id decides",
     [lambda s: review(s, "changes_requested", "21"), lambda s: review(s, "approved", "22")], []),
    ("approved then changes requested in one second",
     [lambda s: review(s, "changes_requested", "22"), lambda s: review(s, "approved", "21")], ["review:rex"]),
    # No order between the two: ties fail closed.
    ("a review body's /unhold against a comment /hold of its second",
     [lambda s: comment(s, "/hold", "11"), lambda s: comment(s, "/unhold", "review:99")], ["comment:alice"]),
    ("a comment /unhold against a review body's /hold of its second",
     [lambda s: comment(s, "/hold", "review:5"), lambda s: comment(s, "/unhold", "99")], ["comment:alice"]),
    ("a dashboard lift against a comment hold of its second",
     [lambda s: comment(s, "/hold", "11"), lambda s: comment(s, "/unhold", "dashboard:x")], ["comment:alice"]),
    ("/unhold all from the dashboard in the hold's second does not end it",
     [lambda s: comment(s, "/hold", "11", actor="bob", permission=Permission.WRITE),
      lambda s: comment(s, "/unhold all", "dashboard:y")], ["comment:bob"]),
    ("label and unlabel snapshots of one second",
     [lambda s: record_facts(s, snapshot((LABEL,))), lambda s: record_facts(s, snapshot(()))], [f"label:{LABEL}"]),
    ("label and unlabel events of one second",
     [lambda s: record_label(record_facts(s, snapshot((LABEL,))), LABEL, T, True),
      lambda s: record_label(record_facts(s, snapshot(())), LABEL, T, False)], [f"label:{LABEL}"]),
    ("closed and reopened in one second stays open (and so published)",
     [lambda s: record_facts(s, snapshot((LABEL,), open_=False)), lambda s: record_facts(s, snapshot((LABEL,)))],
     [f"label:{LABEL}"]),
]


@pytest.mark.parametrize(("steps", "expected"), [r[1:] for r in TIE_ROWS], ids=[r[0] for r in TIE_ROWS])
def test_same_second_ties_resolve_toward_held_in_any_order(steps: list[Callable[[PullState], PullState]],
                                                           expected: list[str]) -> None:
    finals = set()
    for order in itertools.permutations(steps):
        state = BASE
        for step in order:
            state = step(state)
        state = order[0](state)  # a duplicate changes nothing
        assert held(state) == expected, [s.__name__ for s in order]
        assert state.facts is not None and state.facts.open
        finals.add(repr(state.to_dict()))
    assert len(finals) == 1  # every order ends in the same state


def test_contested_exempt_label_does_not_exempt() -> None:
    granted = replace(BASE, grants={EXEMPT: LabelGrant(T, True, by="mia", trusted=True, head_sha="a" * 40)})
    with_label = record_facts(granted, snapshot((EXEMPT,)))
    assert held(with_label, (ROOM,)) == []  # surely exempt: the room hold does not apply
    for first, second in [((EXEMPT,), ()), ((), (EXEMPT,))]:
        state = record_facts(record_facts(granted, snapshot(first)), snapshot(second))
        assert held(state, (ROOM,)) == ["room:1"]


@pytest.mark.parametrize("events", list(itertools.permutations([
    ("added", True), ("removed", True), ("added", False)])))
def test_exempt_label_events_of_one_second_fail_closed_in_any_order(events: tuple[tuple[str, bool], ...]) -> None:
    """A trusted addition, a removal and an untrusted addition in one second: in every order the label
    ends removed (nothing orders them, so the tie does not exempt), and every order ends in one state."""
    grants: dict[str, LabelGrant] = {}
    for kind, trusted in events:
        grant = LabelGrant(T, kind == "added", by="mia" if trusted else "tom", trusted=trusted, head_sha="a" * 40)
        grants = record_grant(grants, EXEMPT, grant)
    assert not grants[EXEMPT].added
    state = record_facts(replace(BASE, grants=grants), snapshot((EXEMPT,), at=T + timedelta(seconds=1)))
    assert held(state, (ROOM,)) == ["room:1"]


def test_a_later_snapshot_settles_the_contest() -> None:
    state = record_facts(record_facts(BASE, snapshot((LABEL,))), snapshot(()))
    assert state.facts is not None and state.facts.contested == (LABEL,)
    later = record_facts(state, snapshot((), at=T + timedelta(seconds=1)))
    assert later.facts is not None and later.facts.contested == ()
    assert held(later) == []
    assert PullState.from_dict(state.to_dict()) == state  # the contest survives storage


def test_a_one_second_difference_is_not_a_tie() -> None:
    lifted = comment(comment(BASE, "/hold", "11"), "/unhold", "12", at=T + timedelta(seconds=1))
    assert held(lifted) == []
    unlabelled = record_facts(record_facts(BASE, snapshot((LABEL,))), snapshot((), at=T + timedelta(seconds=1)))
    assert held(unlabelled) == []


LABEL_SETS = st.sampled_from([(), (LABEL,), (EXEMPT,), (LABEL, EXEMPT), ("bug",)])


@settings(max_examples=100, deadline=None)
@given(st.lists(LABEL_SETS, min_size=1, max_size=5), st.data())
def test_same_second_snapshots_join_in_any_order(label_sets: list[tuple[str, ...]], data: st.DataObject) -> None:
    snapshots = [snapshot(labels, sha=f"{i:040d}") for i, labels in enumerate(label_sets)]
    shuffled = data.draw(st.permutations(snapshots))
    one, two = BASE, BASE
    for s in snapshots:
        one = record_facts(one, s)
    for s in shuffled:
        two = record_facts(two, s)
    assert one == two
    assert merge_states(BASE, one) == one == merge_states(one, BASE)
    assert one.facts is not None
    union = set().union(*label_sets)
    common = set(label_sets[0]).intersection(*label_sets)
    assert set(one.facts.contested) == union - common
    assert (f"label:{LABEL}" in held(one)) == (LABEL in union)
