"""Freeze and thaw from `/rooms` (issue 14 item 5), through Flask's test client with the GitHub sign-in
against the emulator: admins freeze a repo, a branch or an org (a room hold with origin `dashboard`,
the republish job queued, a flash), writers and partial admins are refused, a thaw lifts exactly its
scope, durations parse like the PR page's, bad input is refused, and the page shows each freeze's
progress."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from flask.testing import FlaskClient
from rq import Queue

from core import keys
from core.chat_request import REPUBLISH_JOB
from core.holds import Hold
from state import room_holds, store
from tests.chat_support import GADGETS, WIDGETS, acme, drain, dry_runtime
from tests.emulator import GitHubEmulator
from tests.test_dashboard_actions import act, app_for
from tests.test_github_login import sign_in

HINT = "or a linked chat admin — run /hold link in chat"
"""What a refusal adds for a user without a chat link (`tests/test_chat_links.py` has the rest)."""


@pytest.fixture()
def world(github_emulator: GitHubEmulator, redis_client: redis.Redis) -> GitHubEmulator:
    emu = acme(github_emulator, redis_client, {"ada": "admin"})
    emu.set_permission(WIDGETS, "wendy", "admin")  # admin on one repo of acme, writer on the other
    emu.set_permission(GADGETS, "wendy", "write")
    emu.set_permission(WIDGETS, "walt", "write")
    return emu


def client_for(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path, login: str) -> FlaskClient:
    client = app_for(redis_client, tmp_path / login, world).test_client()
    sign_in(client, world, login)
    return client


def queued(redis_client: redis.Redis) -> list[tuple[str, tuple[object, ...]]]:
    queue = Queue("merge-hold-test", connection=redis_client)
    return [(str(job.func_name), tuple(job.args)) for job in queue.jobs]


def all_room_holds(redis_client: redis.Redis) -> list[Hold]:
    found = [h for repo in (WIDGETS, GADGETS) for h in room_holds.holds_in(redis_client, keys.room_holds(repo))]
    return sorted(found + room_holds.holds_in(redis_client, keys.org_room_holds("acme")), key=lambda h: h.id)


def freeze(client: FlaskClient, target: str, reason: str = "incident 4711", span: str = "") -> str:
    return act(client, "/rooms/freeze", {"target": target, "reason": reason, "for": span}, page="/rooms")


def test_an_admin_freezes_a_repo_for_a_while_and_an_org(world: GitHubEmulator, redis_client: redis.Redis,
                                                       tmp_path: Path) -> None:
    ada = client_for(world, redis_client, tmp_path, "ada")
    assert 'action="/rooms/freeze"' in ada.get("/rooms").get_data(as_text=True)
    page = freeze(ada, "Acme/Widgets", span="2h")
    assert "Froze acme/widgets for 2h: incident 4711." in page
    [hold] = all_room_holds(redis_client)
    assert (hold.id, hold.scope, hold.holder, hold.origin) == (
        "room:dashboard:ada:acme/widgets", WIDGETS, "ada", "dashboard")
    assert hold.expires_at is not None
    assert abs(hold.expires_at - datetime.now(UTC) - timedelta(hours=2)) < timedelta(minutes=1)
    assert queued(redis_client) == [(REPUBLISH_JOB, (WIDGETS,))]
    assert "room.held" in [e["event"] for e in store_events(redis_client)]

    page = freeze(ada, "acme", reason="release week")
    assert "Froze acme: release week." in page
    [org] = room_holds.holds_in(redis_client, keys.org_room_holds("acme"))
    assert (org.holder, org.expires_at, org.origin) == ("ada", None, "dashboard")
    assert queued(redis_client)[-1] == (REPUBLISH_JOB, ("acme",))
    assert "<code>acme</code>" in page and "<code>acme/widgets</code>" in page  # both freezes listed


def store_events(redis_client: redis.Redis) -> list[dict[str, str]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.AUDIT)  # type: ignore[assignment]
    return [{"event": fields[b"event"].decode()} for _, fields in entries]


def test_writers_and_partial_admins_are_refused(world: GitHubEmulator, redis_client: redis.Redis,
                                                tmp_path: Path) -> None:
    walt = client_for(world, redis_client, tmp_path, "walt")
    assert 'action="/rooms/freeze"' not in walt.get("/rooms").get_data(as_text=True)
    page = freeze(walt, WIDGETS)
    assert f"Freezing acme/widgets needs admin access to acme/widgets on GitHub, {HINT}." in page
    wendy = client_for(world, redis_client, tmp_path, "wendy")
    page = freeze(wendy, "acme")
    assert f"Freezing acme needs admin access to every repository of acme on GitHub, {HINT}." in page
    page = freeze(wendy, f"{GADGETS}@release/*")
    assert "needs admin access to acme/gadgets" in page
    assert all_room_holds(redis_client) == [] and queued(redis_client) == []
    page = freeze(wendy, f"{WIDGETS}@release/*")  # her own repo's branches she may freeze
    assert "Froze acme/widgets@release/*: incident 4711." in page
    room_holds.place_hold(redis_client, "acme", holder="ada", holder_id="dashboard:ada", reason="r",
                          origin="dashboard", now=datetime.now(UTC))
    page = act(wendy, "/rooms/thaw", {"target": "acme"}, page="/rooms")
    assert f"Thawing acme needs admin access to every repository of acme on GitHub, {HINT}." in page
    assert len(room_holds.holds_in(redis_client, keys.org_room_holds("acme"))) == 1


def test_a_thaw_lifts_exactly_its_scope(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path) -> None:
    ada = client_for(world, redis_client, tmp_path, "ada")
    for target in (WIDGETS, f"{WIDGETS}@release/*", "acme"):
        freeze(ada, target)
    now = datetime.now(UTC)
    room_holds.place_hold(redis_client, WIDGETS, holder="carol", holder_id="slack:T1:U2", reason="from chat",
                          origin="#ops", now=now)
    room_holds.place_hold(redis_client, f"{WIDGETS}#1", holder="carol", holder_id="slack:T1:U2", reason="pr",
                          origin="#ops", now=now)
    before = len(queued(redis_client))
    page = act(ada, "/rooms/thaw", {"target": WIDGETS}, page="/rooms")
    assert "Thawed acme/widgets: lifted 2 holds" in page and "@ada" in page and "@carol" in page
    assert sorted(h.scope for h in all_room_holds(redis_client)) == ["acme", f"{WIDGETS}#1", f"{WIDGETS}@release/*"]
    assert queued(redis_client)[before:] == [(REPUBLISH_JOB, (WIDGETS,))]
    page = act(ada, "/rooms/thaw", {"target": WIDGETS}, page="/rooms")
    assert "No room hold on exactly acme/widgets to thaw." in page
    assert len(queued(redis_client)) == before + 1
    page = act(ada, "/rooms/thaw", {"target": "acme"}, page="/rooms")
    assert "Thawed acme: lifted 1 hold (@ada)." in page
    assert sorted(h.scope for h in all_room_holds(redis_client)) == [f"{WIDGETS}#1", f"{WIDGETS}@release/*"]


@pytest.mark.parametrize(("data", "message"), [
    ({"target": "", "reason": "x"}, "A freeze target is an org (acme), a repo (acme/widgets)"),
    ({"target": "acme/widgets#1", "reason": "x"}, "acme/widgets#1 is a pull request: hold it from its page."),
    ({"target": "acme/wid gets", "reason": "x"}, "is not a GitHub repository name"),
    ({"target": "acme/widgets@bad..glob", "reason": "x"}, "is not a branch name or glob"),
    ({"target": "acme/unmanaged", "reason": "x"}, "merge-hold manages no repository acme/unmanaged that you can see."),
    ({"target": "beta", "reason": "x"}, "merge-hold manages no organisation beta that you can see."),
    ({"target": "acme/widgets", "reason": "  "}, "A freeze needs a reason"),
    ({"target": "acme/widgets", "reason": "x", "for": "forever"},
     "“forever” is not a time merge-hold reads: write it like 30m, 2h or 1d (at most 90d). Nothing was frozen."),
    ({"target": "acme/widgets", "reason": "x", "for": "100d"}, "“100d” is not a time merge-hold reads"),
    ({"target": "acme/widgets", "reason": "", "for": "2h"}, "A freeze needs a reason (why it must wait)."),
])
def test_bad_input_is_refused(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path,
                              data: dict[str, str], message: str) -> None:
    ada = client_for(world, redis_client, tmp_path, "ada")
    page = act(ada, "/rooms/freeze", data, page="/rooms")
    assert message in page and "flash-error" in page
    assert ("needs a reason" in page) == ("needs a reason" in message)  # a bad time alone never blames the reason
    assert all_room_holds(redis_client) == [] and queued(redis_client) == []


def test_the_forms_need_their_csrf_token(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path) -> None:
    ada = client_for(world, redis_client, tmp_path, "ada")
    for path in ("/rooms/freeze", "/rooms/thaw"):
        assert ada.post(path, data={"target": WIDGETS, "reason": "x"}).status_code == 400
    assert all_room_holds(redis_client) == [] and queued(redis_client) == []


def test_progress_on_the_page(world: GitHubEmulator, redis_client: redis.Redis, redis_url: str,
                              tmp_path: Path) -> None:
    """Statuses mode end to end through the dry-run workers; ruleset mode and a fallback as recorded."""
    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000)
    meta = store.load_repo(redis_client, GADGETS)
    assert meta is not None
    store.save_repo(redis_client, GADGETS, store.RepoMeta(**{**meta.__dict__, "config_text": "freeze_mode: ruleset\n"}))
    redis_client.set(keys.freeze_fallback(GADGETS), "the App lacks Administration: write")
    ada = client_for(world, redis_client, tmp_path, "ada")
    page = freeze(ada, WIDGETS)
    assert "statuses written 0 of 2" in page
    drain(rt)
    page = ada.get("/rooms").get_data(as_text=True)
    assert "statuses written 2 of 2" in page and "exemptions 0" in page
    page = freeze(ada, "acme")
    assert "rulesets active 0 of 1" in page
    assert "<code>acme/gadgets</code> through statuses: the App lacks Administration: write" in page
    assert "statuses written 0 of 4" in page  # the org freeze is on no record yet
    drain(rt)
    page = ada.get("/rooms").get_data(as_text=True)
    assert "statuses written 4 of 4" in page
    # The org's mode and the repos waiting for GitHub's hour, as the workers recorded them.
    redis_client.set(keys.org_freeze_fallback("acme"), json.dumps({"reason": "org rulesets unavailable (GitHub "
                                                                   "answered 403)", "at": "2026-12-05T22:00:00+00:00"}))
    redis_client.set(keys.freeze_deferred(GADGETS), json.dumps({"until": "2026-12-05T23:17:00+00:00"}))
    page = ada.get("/rooms").get_data(as_text=True)
    assert "mode: per-repo rulesets: org rulesets unavailable (GitHub answered 403)" in page
    assert "1 more by 23:17 UTC, as GitHub's hourly write window frees" in page
    redis_client.delete(keys.org_freeze_fallback("acme"))
    redis_client.set(keys.org_freeze_ruleset("acme"), json.dumps({"id": 5, "enforcement": "active",
                                                                  "repos": ["gadgets"], "include": ["~ALL"]}))
    page = ada.get("/rooms").get_data(as_text=True)
    assert "mode: org ruleset" in page and "rulesets active 1 of 1" in page
    act(ada, "/rooms/thaw", {"target": WIDGETS}, page="/rooms")
    page = act(ada, "/rooms/thaw", {"target": "acme"}, page="/rooms")
    assert "Nothing is frozen." in page
