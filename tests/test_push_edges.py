"""Where a PR's head is: the latest snapshot moved along same-repo pushes made since (design §3).

A `push` event often arrives before the PR's `synchronize`; its edge (before -> after) bridges the gap.
A force-push back to an earlier commit makes the edges a circle, and an edge older than the snapshot
must not move the head again: GitHub's `repository.pushed_at` says when each push was taken. Pure core.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.prstate import Facts, PullState, PushEdge, merge_states, record_facts, record_push

T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
A, B, C = "a" * 40, "b" * 40, "c" * 40


def at(second: int) -> int:
    return int((T + timedelta(seconds=second)).timestamp())


def snapshot(sha: str, second: int) -> Facts:
    return Facts(at=T + timedelta(seconds=second), head_sha=sha, head_ref="feature", head_repo="acme/widgets",
                 base="main", author="otto")


def state(facts: Facts, *edges: PushEdge) -> PullState:
    current = record_facts(PullState("acme/widgets", 5), facts)
    for edge in edges:
        current = record_push(current, *edge)
    return current


@pytest.mark.parametrize(("facts", "edges", "head"), [
    # The push arrived first: it moves the snapshot's head.
    (snapshot(A, 0), [PushEdge(A, B, at(1))], B),
    (snapshot(A, 0), [PushEdge(A, B, at(1)), PushEdge(B, C, at(2))], C),
    # A push taken in the snapshot's second may be after it: followed (the newer head wins).
    (snapshot(A, 1), [PushEdge(A, B, at(1))], B),
    # Pushed to B, then force-pushed back to A; the snapshot after the revert says A. The old A -> B
    # is already in that snapshot.
    (snapshot(A, 3), [PushEdge(A, B, at(1)), PushEdge(B, A, at(3))], A),
    (snapshot(A, 3), [PushEdge(A, B, at(1))], A),
    # ...and then to B again: the walk follows only pushes no older than where it stands.
    (snapshot(A, 3), [PushEdge(A, B, at(1)), PushEdge(B, A, at(3)), PushEdge(A, B, at(5))], B),
    (snapshot(B, 0), [PushEdge(A, B, at(1)), PushEdge(B, A, at(3)), PushEdge(A, B, at(5))], B),
    # Untimed pushes (an event without `pushed_at`): followed unless they go round in a circle.
    (snapshot(A, 3), [PushEdge(A, B)], B),
    (snapshot(A, 3), [PushEdge(A, B), PushEdge(B, A)], A),
    # A push from a commit that is not the head moves nothing.
    (snapshot(C, 0), [PushEdge(A, B, at(1))], C),
    # Timed pushes that come back to a commit: A -> C, C -> B, B -> C ends at C (found by the property
    # test below; the circle rule for untimed pushes used to send it back to the snapshot's A).
    (snapshot(A, 0), [PushEdge(A, C, at(1)), PushEdge(C, B, at(2)), PushEdge(B, C, at(3))], C),
], ids=["push-first", "two-pushes", "same-second", "revert", "revert-edge-only", "revert-then-again",
        "snapshot-before-all", "untimed", "untimed-circle", "elsewhere", "back-to-a-commit"])
def test_the_head_is_the_snapshot_moved_along_later_pushes(facts: Facts, edges: list[PushEdge], head: str) -> None:
    for order in itertools.permutations(edges):
        assert state(facts, *order).head_sha == head, order


def test_a_redelivered_push_keeps_its_time_and_the_same_move_made_later_keeps_the_later_one() -> None:
    once = state(snapshot(A, 0), PushEdge(A, B, at(1)))
    assert record_push(once, A, B, at(1)) is once
    assert record_push(once, A, B, 0) is once
    assert record_push(once, A, B, at(5)).push_edges == (PushEdge(A, B, at(5)),)


def test_stored_edges_of_earlier_releases_read_as_untimed() -> None:
    stored = {**PullState("acme/widgets", 5, facts=snapshot(A, 0)).to_dict(), "push_edges": [[A, B]]}
    assert PullState.from_dict(stored).push_edges == (PushEdge(A, B, 0),)
    timed = state(snapshot(A, 0), PushEdge(A, B, at(1)))
    assert PullState.from_dict(timed.to_dict()) == timed


def arrive(current: PullState, event: Facts | PushEdge) -> PullState:
    return record_facts(current, event) if isinstance(event, Facts) else record_push(current, *event)


# A history of pushes on one branch (each to a new or an earlier commit) with a snapshot after each.
# Whatever part of it arrives, in any order and twice: once the newest snapshot that arrived and every
# push after it are in, the head is the last one.
@settings(max_examples=200, deadline=None)
@given(targets=st.lists(st.sampled_from([A, B, C]), min_size=1, max_size=6), data=st.data())
def test_any_arrival_order_of_pushes_and_snapshots_gives_the_true_head(targets: list[str],
                                                                      data: st.DataObject) -> None:
    heads, events = [A], list[Facts | PushEdge]()
    for second, target in enumerate(targets, start=1):
        if target != heads[-1]:
            events += [PushEdge(heads[-1], target, at(second)), snapshot(target, second)]
            heads.append(target)
    arrived = data.draw(st.lists(st.sampled_from(events), max_size=len(events) * 2) if events else st.just([]),
                        label="arrived")
    final = PullState("acme/widgets", 5)
    for event in [snapshot(A, 0), *arrived]:
        final = arrive(final, event)
    newest = max((e for e in [snapshot(A, 0), *arrived] if isinstance(e, Facts)), key=lambda f: f.at)
    after = {e for e in events if isinstance(e, PushEdge) and e.at > newest.at.timestamp()}
    if after <= set(arrived):
        assert final.head_sha == heads[-1]
    assert merge_states(final, final) == final
