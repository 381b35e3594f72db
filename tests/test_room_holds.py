"""Room holds and exemptions in Redis: who lifts what, where they are kept, the `/holds` listing, the
chat job's answers, and scope holds reaching PRs opened or retargeted after the hold."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from core.holds import Source
from state import room_holds, store
from state.room_holds import prune_expired
from tests.chat_support import dry_runtime, emulated_service, head_sha, latest, manage, seed_repo
from tests.e2e_support import fixture
from tests.emulator import GitHubEmulator
from tests.publish_now import publish
from workers.chat.rooms import (
    LIST_LIMIT,
    ChatRequest,
    active_room_holds,
    execute,
    lift_exemption,
    lift_holds,
    listing,
    place_exemption,
    place_hold,
)

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
REPO = "acme/widgets"


def put(redis: Redis, scope: str, holder: str, *, reason: str = "incident", hours: float | None = None,
        at: datetime = NOW) -> None:
    place_hold(redis, scope, holder=holder, holder_id=f"slack:T1:{holder}", reason=reason, origin="slack:acme/#ops",
               now=at, duration=timedelta(hours=hours) if hours else None)


def scopes(redis: Redis, key: str) -> list[tuple[str, str]]:
    return sorted((d["scope"], d["holder"]) for d in (json.loads(v) for v in redis.hvals(key)))


def audit_events(redis: Redis) -> list[tuple[str, dict[str, Any]]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis.xrange(keys.AUDIT)  # type: ignore[assignment]
    return [(e[b"event"].decode(), json.loads(e[b"data"])) for _, e in entries]


@pytest.mark.parametrize(("placed", "lift", "lifted", "left"), [
    # /unhold lifts every holder's hold on exactly that scope (Merge Freeze's behaviour)...
    ([(REPO, "dana"), (REPO, "erin")], REPO, ["dana", "erin"], []),
    # ...and nothing wider or narrower.
    ([(REPO, "dana"), (f"{REPO}@release/*", "erin"), (f"{REPO}#12", "finn")], REPO, ["dana"],
     [(f"{REPO}#12", "finn"), (f"{REPO}@release/*", "erin")]),
    ([(REPO, "dana"), (f"{REPO}@release/*", "erin")], f"{REPO}@release/*", ["erin"], [(REPO, "dana")]),
    ([(f"{REPO}@release/*", "erin")], f"{REPO}@release/1.0", [], [(f"{REPO}@release/*", "erin")]),
    ([(REPO, "dana")], "acme/gadgets", [], [(REPO, "dana")]),
    ([(f"{REPO}@Release/*", "erin")], f"{REPO}@release/*", [], [(f"{REPO}@Release/*", "erin")]),  # globs keep case
])
def test_unhold_lifts_exactly_its_scope_for_every_holder(redis_client: Redis, placed: list[tuple[str, str]],
                                                         lift: str, lifted: list[str],
                                                         left: list[tuple[str, str]]) -> None:
    for scope, holder in placed:
        put(redis_client, scope, holder)
    gone = lift_holds(redis_client, lift, actor="zed", origin="slack:acme/#ops")
    assert sorted(h.holder for h in gone) == lifted
    assert scopes(redis_client, keys.room_holds(REPO)) == left
    lifts = [data for event, data in audit_events(redis_client) if event == "room.lifted"]
    assert len(lifts) == (1 if lifted else 0)


def test_holds_are_kept_per_holder_and_scope_in_the_repo_or_org_hash(redis_client: Redis) -> None:
    put(redis_client, REPO, "dana", reason="first")
    put(redis_client, REPO, "dana", reason="renewed")  # the same holder again: one hold, the new reason
    put(redis_client, f"{REPO}#12", "dana")
    put(redis_client, "acme", "erin")
    stored = [json.loads(v) for v in redis_client.hvals(keys.room_holds(REPO))]
    assert sorted((d["scope"], d["reason"]) for d in stored) == [(REPO, "renewed"), (f"{REPO}#12", "incident")]
    assert scopes(redis_client, keys.org_room_holds("acme")) == [("acme", "erin")]
    held = room_holds.scoped_holds(redis_client, REPO)
    assert {h.source for h in held} == {Source.ROOM} and len(held) == 3
    assert [e for e, _ in audit_events(redis_client)] == ["room.held"] * 4


def test_exemptions_are_recorded_with_who_and_why_and_can_be_ended(redis_client: Redis) -> None:
    place_exemption(redis_client, f"{REPO}#12", by="dana", reason="security fix", origin="slack:acme/#ops",
                    now=NOW, duration=timedelta(hours=4), head_sha="c" * 40)
    found = store.exemption(redis_client, REPO, 12)
    assert found is not None and (found.by, found.reason, found.expires_at, found.head_sha, found.sticky) == (
        "dana", "security fix", NOW + timedelta(hours=4), "c" * 40, False)
    assert lift_exemption(redis_client, f"{REPO}#12", actor="erin", origin="slack:acme/#ops") == found
    assert lift_exemption(redis_client, f"{REPO}#12", actor="erin", origin="slack:acme/#ops") is None
    assert [e for e, _ in audit_events(redis_client)] == ["room.exempted", "room.unexempted"]


def test_the_listing_shows_room_holds_and_held_prs_and_leaves_expired_ones_out(redis_client: Redis,
                                                                               redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {1: "main", 2: "release/1"})
    manage(redis_client, "acme/gadgets", {5: "main"})
    assert listing(redis_client, None, NOW) == "No active holds."
    put(redis_client, f"{REPO}@release/*", "dana", reason="code freeze")
    put(redis_client, "acme/gadgets", "erin", reason="old", hours=1, at=NOW - timedelta(hours=2))  # expired
    for repo, number in ((REPO, 1), (REPO, 2), ("acme/gadgets", 5)):
        publish(rt, repo, number, NOW)
    text = listing(redis_client, None, NOW)
    assert text.splitlines() == [
        "Room holds (1):",
        "• acme/widgets@release/*: @dana in slack:acme/#ops: code freeze — statuses written 1 of 1",
        "Held PRs (1):",
        "• acme/widgets#2: Held by @dana in slack:acme/#ops: code freeze",
    ]
    assert redis_client.hlen(keys.room_holds("acme/gadgets")) == 1  # a reader deletes nothing
    assert prune_expired(redis_client, "acme/gadgets", NOW) == 1  # the reconcile's work
    assert prune_expired(redis_client, REPO, NOW) == 0  # an active hold stays
    assert redis_client.hlen(keys.room_holds("acme/gadgets")) == 0 and redis_client.hlen(keys.room_holds(REPO)) == 1
    assert listing(redis_client, f"{REPO}#1", NOW) == f"No active holds on {REPO}#1."
    assert listing(redis_client, f"{REPO}#2", NOW).startswith(f"Room holds on {REPO}#2 (1):")
    assert listing(redis_client, "acme/gadgets", NOW) == "No active holds on acme/gadgets."


def test_a_long_listing_is_cut(redis_client: Redis) -> None:
    manage(redis_client, REPO)
    for number in range(LIST_LIMIT + 3):
        put(redis_client, f"{REPO}#{number + 1}", "dana")
    lines = listing(redis_client, REPO, NOW).splitlines()
    assert lines[0] == f"Room holds on {REPO} ({LIST_LIMIT + 3}):"
    assert len(lines) == LIST_LIMIT + 2 and lines[-1] == "  … and 3 more"


def request(**fields: str) -> ChatRequest:
    base = {"platform": "slack", "team_id": "T1", "team_name": "acme", "channel_id": "C1", "channel_name": "ops",
            "user_id": "U1", "user_name": "dana", "command": "/hold", "text": "", "response_url": "",
            "received_at": "2026-01-05T10:00:00Z", "orgs": "acme+elsewhere+nobody"}
    base.update(fields)
    return ChatRequest.from_dict(base)


@pytest.mark.parametrize(("command", "text", "in_channel"), [
    (ChatCommand("hold", "acme", reason="all hands"), "@dana held acme (3 open PRs in 2 repos): all hands", True),
    (ChatCommand("hold", f"{REPO}#1", reason="db", duration=timedelta(minutes=90)),
     f"@dana held {REPO}#1 for 1h30m until 2026-01-05 11:30 UTC: db", True),
    (ChatCommand("hold", "elsewhere/repo", reason="x"),
     "merge-hold does not manage elsewhere/repo: is the GitHub App installed there?", False),
    (ChatCommand("hold", "nobody", reason="x"), "merge-hold does not manage nobody: is the GitHub App installed there?",
     False),
    (ChatCommand("unhold", REPO), f"No room hold on exactly {REPO}. `/holds {REPO}` lists the holds that touch it.",
     False),
    (ChatCommand("unexempt", f"{REPO}#1"), f"{REPO}#1 has no exemption.", False),
])
def test_the_chat_job_says_what_happened(redis_client: Redis, redis_url: str, command: ChatCommand, text: str,
                                         in_channel: bool) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {1: "main", 2: "main"})
    manage(redis_client, "acme/gadgets", {3: "main"})
    reply = execute(rt, request(), command)
    assert (reply.text, reply.in_channel) == (text, in_channel)
    if not in_channel:
        assert [e for e, _ in audit_events(redis_client)] == []
        assert redis_client.llen("rq:queue:merge-hold-test") == 0


def test_a_hold_reaches_prs_opened_and_retargeted_later(github_emulator: GitHubEmulator, redis_client: Redis,
                                                        redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url)
    seed_repo(github_emulator, redis_client, REPO, 0)
    put(redis_client, REPO, "dana", at=datetime.now(UTC))
    put(redis_client, "acme/gadgets@release/*", "erin", reason="release 2", at=datetime.now(UTC))
    github_emulator.add_repo("acme/gadgets", installation_id=1)
    store.save_repo(redis_client, "acme/gadgets", store.RepoMeta(installation_id=1, config_loaded=True))

    assert svc.deliver("pull_request", pull_event(REPO, "opened", 7, base="main")).status_code == 202
    assert svc.deliver("pull_request", pull_event("acme/gadgets", "opened", 8, base="main")).status_code == 202
    svc.drain()
    assert (latest(github_emulator, REPO, 7) or {}).get("description") == "Held by @dana in slack:acme/#ops: incident"
    assert (latest(github_emulator, "acme/gadgets", 8) or {}).get("state") == "success"

    retarget = pull_event("acme/gadgets", "edited", 8, base="release/2", updated_at="2026-01-05T11:00:00Z",
                          changes={"base": {"ref": {"from": "main"}, "sha": {"from": "0" * 40}}})
    assert svc.deliver("pull_request", retarget).status_code == 202
    svc.drain()
    assert (latest(github_emulator, "acme/gadgets", 8) or {}).get("description") == (
        "Held by @erin in slack:acme/#ops: release 2")


def pull_event(repo: str, action: str, number: int, *, base: str, updated_at: str = "2026-01-05T10:00:00Z",
               changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """GitHub's `pull_request` example, moved to ``repo`` and PR ``number`` on ``base``."""
    payload = fixture("pull_request", "opened.payload.json")
    pull = payload["pull_request"]
    pull.update(number=number, updated_at=updated_at, state="open", draft=False, labels=[])
    pull["head"].update(sha=head_sha(repo, number), ref=f"topic-{number}")
    pull["head"]["repo"]["full_name"] = pull["base"]["repo"]["full_name"] = repo
    pull["base"]["ref"] = base
    payload["repository"].update(full_name=repo, default_branch="main")
    payload.update(action=action, number=number, installation={"id": 1})
    if changes:
        payload["changes"] = changes
    return payload


def test_active_holds_of_an_org_include_its_repos(redis_client: Redis) -> None:
    manage(redis_client, REPO)
    put(redis_client, "acme", "dana")
    put(redis_client, REPO, "erin")
    put(redis_client, "other/repo", "finn")
    assert [h.holder for h in active_room_holds(redis_client, "acme", NOW)] == ["dana", "erin"]
    assert [h.holder for h in active_room_holds(redis_client, REPO, NOW)] == ["dana", "erin"]
