"""The pure rules of a hold made on the dashboard (issue #9 item 3): a comment's rules and register,
dated by the server clock to the second, and kept by a rebuild from GitHub (`keep_dashboard`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.comment_rules import apply_comment, apply_dashboard, dashboard_time
from core.comments import CommentCommand
from core.permissions import Permission
from core.prstate import (
    DASHBOARD_REF,
    PullState,
    comment_hold_active,
    keep_dashboard,
    merge_states,
)
from core.repo_config import DEFAULT_CONFIG

T = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
R, W, M = Permission.READ, Permission.WRITE, Permission.MAINTAIN
EMPTY = PullState("acme/widgets", 7)
LATER = T + timedelta(hours=1)

HOLD = CommentCommand("hold", reason="waiting for DB migration")
LIFT_OWN = CommentCommand("lift")


def lift(target: str) -> CommentCommand:
    return CommentCommand("lift", target=target)


def page(state: PullState, command: CommentCommand, actor: str = "alice", permission: Permission = W, *,
         seconds: float = 0, ref: str = "1", author: bool = False) -> PullState:
    """A command on the dashboard at T + seconds (server clock), dated as the worker dates it."""
    at = dashboard_time(state, T + timedelta(seconds=seconds), lift=command.kind == "lift")
    new, _ = apply_dashboard(state, command, actor=actor, permission=permission, is_author=author, at=at,
                             ref=f"{DASHBOARD_REF}{ref}", config=DEFAULT_CONFIG)
    return new


def comment(state: PullState, body: str, actor: str = "alice", permission: Permission = W, *,
            seconds: int = 0, ref: str = "500") -> PullState:
    new, _ = apply_comment(state, body, actor=actor, permission=permission, is_author=False,
                           at=T + timedelta(seconds=seconds), ref=ref, origin="https://github.com/c",
                           config=DEFAULT_CONFIG)
    return new


def holders(state: PullState) -> set[str]:
    return {who for who, reg in state.comments.items() if comment_hold_active(state, reg, T + timedelta(minutes=5))}


Step = Callable[[PullState], PullState]
ROWS: list[tuple[str, list[Step], set[str]]] = [
    ("a writer holds from the page", [lambda s: page(s, HOLD)], {"alice"}),
    ("a reader cannot", [lambda s: page(s, HOLD, "bob", R)], set()),
    ("the PR's author may (author_can_hold)", [lambda s: page(s, HOLD, "ann", Permission.NONE, author=True)],
     {"ann"}),
    ("her /unhold comment a second later lifts it", [lambda s: page(s, HOLD, seconds=0.4),
                                                    lambda s: comment(s, "/unhold", seconds=1)], set()),
    ("her /unhold comment of the same second does not (ties fail closed)",
     [lambda s: page(s, HOLD, seconds=0.4), lambda s: comment(s, "/unhold")], {"alice"}),
    ("a maintainer's /unhold @alice lifts it", [lambda s: page(s, HOLD),
                                               lambda s: comment(s, "/unhold @alice", "carol", M, seconds=1)], set()),
    ("a writer's /unhold @alice is refused", [lambda s: page(s, HOLD),
                                             lambda s: comment(s, "/unhold @alice", "dave", W, seconds=1)], {"alice"}),
    ("a maintainer's /unhold all lifts it", [lambda s: page(s, HOLD),
                                            lambda s: comment(s, "/unhold all", "carol", M, seconds=1)], set()),
    ("lifting on the page in the same second still lifts it",
     [lambda s: page(s, HOLD, seconds=0.2), lambda s: page(s, LIFT_OWN, seconds=0.9, ref="2")], set()),
    ("a page lift does not beat a comment hold of the same second",
     [lambda s: comment(s, "/hold now", seconds=0), lambda s: page(s, LIFT_OWN, seconds=0.9, ref="2")], {"alice"}),
    ("a page lift of her /hold comment, a second later", [lambda s: comment(s, "/hold x"),
                                                         lambda s: page(s, LIFT_OWN, seconds=1, ref="2")], set()),
    ("a maintainer lifts hers on the page", [lambda s: page(s, HOLD),
                                            lambda s: page(s, lift("alice"), "carol", M, ref="2")], set()),
    ("a writer cannot lift hers on the page", [lambda s: page(s, HOLD),
                                              lambda s: page(s, lift("alice"), "dave", W, ref="2")], {"alice"}),
]


@pytest.mark.parametrize(("name", "steps", "expected"), ROWS, ids=[r[0] for r in ROWS])
def test_a_page_command_acts_as_the_users_comment(name: str, steps: list[Step], expected: set[str]) -> None:
    state = EMPTY
    for step in steps:
        state = step(state)
    assert holders(state) == expected


def test_a_page_hold_is_the_comment_register_with_origin_dashboard() -> None:
    timed = CommentCommand("hold", reason="r", duration=timedelta(hours=2))
    register = page(EMPTY, timed, seconds=0.7).comments["alice"]
    assert (register.at, register.origin, register.name, register.expires_at) == (
        T, "dashboard", "alice", T + timedelta(hours=2))


def test_a_command_without_the_dashboard_ref_is_refused() -> None:
    with pytest.raises(ValueError, match="dashboard"):
        apply_dashboard(EMPTY, HOLD, actor="alice", permission=W, is_author=False, at=T, ref="12345",
                        config=DEFAULT_CONFIG)


# --- a rebuild from GitHub's history keeps what only the dashboard knows ------------------------------

REBUILD_ROWS: list[tuple[str, Step, Step, set[str]]] = [
    # (name, the live state's history, what GitHub's history rebuilds, holders after the join)
    ("a page hold GitHub cannot see is kept", lambda s: page(s, HOLD), lambda s: s, {"alice"}),
    ("a page lift of a /hold comment is kept (the hold does not come back)",
     lambda s: page(comment(s, "/hold x"), LIFT_OWN, seconds=5, ref="2"), lambda s: comment(s, "/hold x"), set()),
    ("a maintainer's page lift is kept", lambda s: page(page(s, HOLD), lift("alice"), "carol", M, seconds=5, ref="2"),
     lambda s: s, set()),
    ("her later /unhold comment, re-read, still lifts the page hold",
     lambda s: page(s, HOLD), lambda s: comment(s, "/unhold", seconds=3), set()),
    ("a later /unhold all, re-read, still lifts it", lambda s: page(s, HOLD),
     lambda s: comment(s, "/unhold all", "carol", M, seconds=3), set()),
    ("a comment hold GitHub no longer has is not kept (only page commands are)",
     lambda s: comment(s, "/hold gone"), lambda s: s, set()),
    ("her later /hold comment is GitHub's to say", lambda s: page(s, LIFT_OWN, seconds=0, ref="2"),
     lambda s: comment(s, "/hold again", seconds=4), {"alice"}),
]


@pytest.mark.parametrize(("name", "live", "github", "expected"), REBUILD_ROWS, ids=[r[0] for r in REBUILD_ROWS])
def test_a_rebuild_keeps_page_commands(name: str, live: Step, github: Step, expected: set[str]) -> None:
    kept = keep_dashboard(github(EMPTY), live(EMPTY))
    assert holders(kept) == expected
    assert keep_dashboard(kept, live(EMPTY)) == kept  # idempotent


@settings(deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["hold", "lift"]), st.sampled_from(["alice", "bob"]),
                          st.integers(0, 5), st.booleans()), max_size=8))
def test_page_commands_survive_any_rebuild_as_a_join_would(steps: list[tuple[str, str, int, bool]]) -> None:
    """Whatever mix of page and comment commands: the rebuilt state holds exactly as the live one, when
    GitHub's history is the live state's comments (the rebuild is lossless for both kinds)."""
    live, github = EMPTY, EMPTY
    for i, (kind, actor, second, on_page) in enumerate(steps):
        if on_page:
            live = page(live, HOLD if kind == "hold" else LIFT_OWN, actor, M, seconds=second, ref=str(i))
        else:
            body = "/hold x" if kind == "hold" else "/unhold"
            live = comment(live, body, actor, M, seconds=second, ref=str(600 + i))
            github = comment(github, body, actor, M, seconds=second, ref=str(600 + i))
    assert holders(keep_dashboard(github, live)) == holders(live)
    assert holders(keep_dashboard(github, live)) == holders(merge_states(github, live))


def test_shared_holds_a_writer_lifts_the_shared_hold_on_the_page() -> None:
    shared = replace(DEFAULT_CONFIG, shared_holds=True)
    held = page(EMPTY, HOLD)
    at = dashboard_time(held, T + timedelta(seconds=0.5), lift=True)
    lifted, outcome = apply_dashboard(held, lift("alice"), actor="dave", permission=W, is_author=False, at=at,
                                      ref=f"{DASHBOARD_REF}9", config=shared)
    assert outcome.kind == "lifted_all" and holders(lifted) == set()
    refused, outcome = apply_dashboard(held, lift("alice"), actor="eve", permission=R, is_author=False, at=at,
                                       ref=f"{DASHBOARD_REF}9", config=shared)
    assert outcome.kind == "refused" and holders(refused) == {"alice"}


@pytest.mark.parametrize(("seen", "held"), [
    (None, True),  # a comment hold of the same second beats a lift that did not say what it saw: ties fail closed
    (T, False),  # the page showed this hold when Lift was pressed: the lift is causally after it
    (T - timedelta(seconds=1), True),  # it showed an older hold: the newer one of this second stands
    (T + timedelta(hours=2), True),  # a time no register has (or far ahead of the clock): ignored
])
def test_a_lift_of_the_hold_the_page_showed_wins_the_tie(seen: datetime | None, held: bool) -> None:
    state = comment(EMPTY, "/hold waiting for DB migration", seconds=0)  # GitHub's stamp: T, to the second
    at = dashboard_time(state, T + timedelta(seconds=0.4), lift=True, seen=seen)  # pressed within that second
    lifted, _ = apply_dashboard(state, LIFT_OWN, actor="alice", permission=W, is_author=False, at=at,
                                ref=f"{DASHBOARD_REF}2", config=DEFAULT_CONFIG)
    assert (holders(lifted) == {"alice"}) is held
