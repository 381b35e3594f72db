"""A PR's history at a glance (`app.history`, issue #27 item 2), over a real Redis: one entry per act with its
outcome folded in, room holds and freezes that reach the PR (its repo, a branch glob matching its base, its
org from the global log), paging that neither repeats nor skips, and the filter by kind."""

from __future__ import annotations

import json
from typing import Any

import pytest
from redis import Redis

from app.history import Act, kind_of, page
from core import keys

REPO, PR, BASE = "acme/widgets", 7, "main"


def add(r: Redis, ms: int, event: str, *, repo: str | None = REPO, stream: str | None = None, **data: Any) -> str:
    """An audit entry at ``ms`` (its stream id), where `state.audit.record` puts it."""
    sid = f"{ms}-0"
    fields: dict[Any, Any] = {"event": event, "data": json.dumps({"repo": repo, **data})}
    if repo:
        r.xadd(stream or keys.history(repo), fields, id=sid)
    r.xadd(keys.AUDIT, fields, id=sid)
    return sid


def texts(acts: list[Act]) -> list[tuple[str, str]]:
    return [(a.raw.event, a.outcome) for a in acts]


def test_an_act_and_what_came_of_it_are_one_entry(redis_client: Redis) -> None:
    r = redis_client
    add(r, 1_000, "verdict.free", number=PR, version=1)
    add(r, 1_010, "status.posted", number=PR, state="success")
    add(r, 5_000, "hold.held", number=PR, actor="alice", message="@alice held this PR")
    add(r, 5_100, "verdict.held", number=PR, holds=[])
    add(r, 5_400, "status.posted", number=PR, state="failure")
    add(r, 6_000, "hold.held", number=8, actor="bob", message="@bob held this PR")  # another PR: not here
    add(r, 9_000, "hold.held", number=PR, actor="bob", message="@bob held this PR")  # no status change
    add(r, 500_000, "status.posted", number=PR, state="failure")  # minutes later (a new head): on its own
    acts, older = page(r, REPO, PR, BASE)
    assert texts(acts) == [("status.posted", ""), ("hold.held", ""), ("hold.held", "failure posted 0.4 s later"),
                           ("verdict.free", "success posted 0.0 s later")]
    assert older is None
    assert [a.kind for a in acts] == ["statuses", "holds", "holds", "statuses"]


def test_room_holds_and_freezes_that_reach_the_pr_are_in_its_history(redis_client: Redis) -> None:
    r = redis_client
    add(r, 1_000, "room.held", scope=REPO, holder="ada", reason="release freeze")
    add(r, 1_200, "status.posted", number=PR, state="failure")
    add(r, 2_000, "room.held", scope=f"{REPO}@release/*", holder="ada", reason="not its base")
    add(r, 3_000, "room.held", scope=f"{REPO}@ma*", holder="ada", reason="its base")
    add(r, 4_000, "room.held", scope="acme", holder="ada", reason="org freeze", repo=None)  # the global log only
    add(r, 4_500, "room.held", scope="other", holder="eve", reason="another org", repo=None)
    add(r, 5_000, "room.lifted", scope=REPO, actor="ada", holders=["ada"])
    add(r, 6_000, "room.held", scope=f"{REPO}#{PR}", holder="dan", reason="this PR", number=PR)
    acts, _ = page(r, REPO, PR, BASE)
    assert [(a.raw.event, a.raw.data.get("reason") or a.raw.data.get("scope")) for a in acts] == [
        ("room.held", "this PR"), ("room.lifted", REPO), ("room.held", "org freeze"), ("room.held", "its base"),
        ("room.held", "release freeze")]
    assert acts[-1].outcome == "failure posted 0.2 s later"
    assert [a.kind for a in acts] == ["holds", "freezes", "freezes", "freezes", "freezes"]
    unseen, _ = page(r, REPO, PR, None)  # no verdict yet, so no base: branch holds cannot be placed
    assert "its base" not in [a.raw.data.get("reason") for a in unseen]


@pytest.mark.parametrize("limit", [1, 3, 7, 50])
def test_pages_neither_repeat_nor_skip(redis_client: Redis, limit: int) -> None:
    r = redis_client
    expected = []
    for i in range(20):
        sid = add(r, 10_000 + i * 1_000, "hold.held" if i % 2 == 0 else "hold.lifted", number=PR, actor="alice")
        add(r, 10_000 + i * 1_000 + 100, "status.posted", number=PR, state="failure" if i % 2 == 0 else "success")
        expected.append(sid)
    seen: list[str] = []
    cursor: str | None = None
    while True:
        acts, cursor = page(r, REPO, PR, BASE, before=cursor, limit=limit)
        assert len(acts) <= limit and all(a.outcome for a in acts)  # every act keeps its own outcome
        seen += [a.raw.id for a in acts]
        if cursor is None:
            break
    assert seen == list(reversed(expected))


def test_the_filter_by_kind_pages_too(redis_client: Redis) -> None:
    r = redis_client
    for i in range(12):
        add(r, 1_000 + i * 10, "hold.held", number=PR, actor="alice")
        add(r, 1_005 + i * 10, "room.exempted", number=PR, by="ada")
    holds, cursor = page(r, REPO, PR, BASE, kind="holds", limit=5)
    assert [a.kind for a in holds] == ["holds"] * 5 and cursor is not None
    rest: list[Act] = []
    while cursor is not None:
        more, cursor = page(r, REPO, PR, BASE, kind="holds", limit=5, before=cursor)
        rest += more
    assert len(holds) + len(rest) == 12 and {a.kind for a in rest} == {"holds"}
    exemptions, _ = page(r, REPO, PR, BASE, kind="exemptions")
    assert len(exemptions) == 12


@pytest.mark.parametrize(("event", "data", "kind"), [
    ("hold.superseded", {}, "holds"),
    ("room.held", {"scope": "acme/widgets#7"}, "holds"),
    ("room.held", {"scope": "acme"}, "freezes"),
    ("room.unexempted", {}, "exemptions"),
    ("status.forged", {}, "statuses"),
    ("incident.recorded", {}, "incidents"),
    ("chat.linked", {}, "other"),
])
def test_kinds(event: str, data: dict[str, Any], kind: str) -> None:
    from app.history import Raw

    assert kind_of(Raw("1-0", event, data)) == kind
