"""The freeze outlook (`core.freeze_outlook`) and `GET /api/v1/freeze/{owner}/{repo}` over the real Redis.

The outlook rows pin moments around two daylight-saving changes in Berlin; the API rows go through HTTP with
tokens, room holds placed the way chat and the API place them, and a stored repo config."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from core.freeze_outlook import deployments_allowed, outlook
from core.holds import Hold, Source, to_iso
from core.repo_config import FreezeWindow, RepoConfig
from merge_hold.tokens import create as create_token
from merge_hold.tokens import revoke
from state import room_holds, store
from tests.webapp_support import make_app

REPO = "acme/widgets"
SUNDAY = FreezeWindow(name="sunday-freeze", days=("sun",), start="01:00", end="04:00", timezone="Europe/Berlin",
                      branches=("main", "release/*"))
NIGHTS = FreezeWindow(name="nights", days=("fri",), start="22:00", end="06:00", timezone="America/New_York",
                      branches=("main",))


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def room(scope: str, created: str, expires: str | None, holder: str = "dana") -> Hold:
    return Hold(id=f"room:slack:T1:{holder}:{scope}", source=Source.ROOM, scope=scope, holder=holder,
                reason="incident 4711", created_at=utc(created), expires_at=utc(expires) if expires else None,
                origin="slack:acme/#ops")


@pytest.mark.parametrize(("now", "frozen", "next_freeze", "next_thaw"), [
    # Winter: Sunday 01:00-04:00 CET is 00:00-03:00 UTC.
    ("2026-03-21T12:00:00", False, "2026-03-22T00:00:00", "2026-03-22T03:00:00"),
    ("2026-03-22T01:00:00", True, "2026-03-29T00:00:00", "2026-03-22T03:00:00"),
    # Spring forward on 29 March: 01:00 CET to 04:00 CEST is 00:00-02:00 UTC (two hours of wall clock lost).
    ("2026-03-28T12:00:00", False, "2026-03-29T00:00:00", "2026-03-29T02:00:00"),
    ("2026-03-29T01:59:59", True, "2026-04-04T23:00:00", "2026-03-29T02:00:00"),
    ("2026-03-29T02:00:00", False, "2026-04-04T23:00:00", "2026-04-05T02:00:00"),
    # Fall back on 25 October: 01:00 CEST to 04:00 CET is 23:00 Saturday to 03:00 UTC (four hours).
    ("2026-10-24T22:59:59", False, "2026-10-24T23:00:00", "2026-10-25T03:00:00"),
    ("2026-10-25T02:30:00", True, "2026-11-01T00:00:00", "2026-10-25T03:00:00"),
])
def test_a_window_across_dst(now: str, frozen: bool, next_freeze: str, next_thaw: str) -> None:
    seen = outlook(RepoConfig(freeze_windows=(SUNDAY,)), REPO, "main", (), utc(now))
    assert (seen.frozen, seen.next_freeze_at, seen.next_thaw_at) == (frozen, utc(next_freeze), utc(next_thaw))
    assert [h.holder for h in seen.holds] == (["sunday-freeze"] if frozen else [])


def test_a_branch_the_window_does_not_cover_is_never_frozen() -> None:
    seen = outlook(RepoConfig(freeze_windows=(SUNDAY,)), REPO, "dev", (), utc("2026-03-22T01:00:00"))
    assert (seen.frozen, seen.next_freeze_at, seen.next_thaw_at) == (False, None, None)
    release = outlook(RepoConfig(freeze_windows=(SUNDAY,)), REPO, "release/2.0", (), utc("2026-03-22T01:00:00"))
    assert release.frozen


def test_a_window_over_midnight_in_new_york() -> None:
    # Friday 22:00 EST to Saturday 06:00 EST is 03:00-11:00 UTC on Saturday (6 March 2026, before the US change).
    seen = outlook(RepoConfig(freeze_windows=(NIGHTS,)), REPO, "main", (), utc("2026-03-06T12:00:00"))
    assert (seen.next_freeze_at, seen.next_thaw_at) == (utc("2026-03-07T03:00:00"), utc("2026-03-07T11:00:00"))
    # The US springs forward on 8 March: the next Friday night is 02:00-10:00 UTC.
    later = outlook(RepoConfig(freeze_windows=(NIGHTS,)), REPO, "main", (), utc("2026-03-07T12:00:00"))
    assert (later.next_freeze_at, later.next_thaw_at) == (utc("2026-03-14T02:00:00"), utc("2026-03-14T10:00:00"))


def test_a_timed_hold_that_outlasts_the_window_keeps_the_branch_frozen_until_it_ends() -> None:
    now = "2026-03-22T01:00:00"
    hold = room(f"{REPO}@main", "2026-03-22T00:30:00", "2026-03-22T05:00:00")
    seen = outlook(RepoConfig(freeze_windows=(SUNDAY,)), REPO, "main", (hold,), utc(now))
    assert seen.frozen and [h.source for h in seen.holds] == [Source.FREEZE, Source.ROOM]
    assert seen.next_thaw_at == utc("2026-03-22T05:00:00")  # not the window's 03:00: the hold still freezes
    assert seen.next_freeze_at == utc("2026-03-29T00:00:00")


@pytest.mark.parametrize(("scope", "frozen"), [
    ("acme", True), (REPO, True), (f"{REPO}@main", True), (f"{REPO}@release/*", False), (f"{REPO}#5", False),
    ("acme/other", False), ("other", False),
])
def test_which_room_holds_freeze_a_branch(scope: str, frozen: bool) -> None:
    hold = room(scope, "2026-03-20T00:00:00", None)
    seen = outlook(RepoConfig(), REPO, "main", (hold,), utc("2026-03-21T12:00:00"))
    assert seen.frozen is frozen
    assert seen.next_thaw_at is None  # lifted by hand only: nobody can say when
    assert seen.next_freeze_at is None


def test_an_expired_hold_freezes_nothing_and_a_timed_one_thaws_at_its_end() -> None:
    gone = room(REPO, "2026-03-20T00:00:00", "2026-03-21T00:00:00", holder="ed")
    timed = room(f"{REPO}@main", "2026-03-21T10:00:00", "2026-03-21T14:00:00")
    seen = outlook(RepoConfig(), REPO, "main", (gone, timed), utc("2026-03-21T12:00:00"))
    assert (seen.frozen, [h.holder for h in seen.holds], seen.next_thaw_at) == (True, ["dana"],
                                                                                 utc("2026-03-21T14:00:00"))


@pytest.mark.parametrize(("environments", "environment", "on_freeze", "allowed"), [
    ((), None, "wait", True),  # the repo freezes no deployment: merge-hold gates none
    (("production",), None, "wait", False),
    (("production",), "production", "reject", False),
    (("production",), "staging", "wait", True),  # not a frozen environment
])
def test_deployments_allowed_is_the_protection_rules_answer(environments: tuple[str, ...], environment: str | None,
                                                            on_freeze: str, allowed: bool) -> None:
    config = RepoConfig(freeze_windows=(SUNDAY,), freeze_deployments=environments, deployments_on_freeze=on_freeze)
    frozen_now = utc("2026-03-22T01:00:00")
    assert deployments_allowed(config, REPO, "main", (), frozen_now, environment) is allowed
    assert deployments_allowed(config, REPO, "main", (), utc("2026-03-22T03:00:00"), environment) is True


# -- over HTTP -----------------------------------------------------------------------------------------------


CONFIG = """\
freeze-windows:
  - name: always
    days: daily
    from: "00:00"
    to: "24:00"
    branches: ["release/*"]
freeze-deployments: [production]
"""


@pytest.fixture()
def api(redis_client: Redis, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    app, token = make_app(redis_client, tmp_path)
    store.save_repo(redis_client, REPO, store.RepoMeta(installation_id=1, default_branch="trunk", config_text=CONFIG,
                                                      config_loaded=True))
    return app.test_client(), {"Authorization": f"Bearer {token}"}


def test_a_free_branch_over_http(api: Any) -> None:
    client, auth = api
    answer = client.get(f"/api/v1/freeze/{REPO}?branch=main", headers=auth)
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["frozen"] is False and body["frozen_by"] == [] and body["reason"] is None
    assert (body["next_freeze_at"], body["next_thaw_at"], body["frozen_until"]) == (None, None, None)
    assert body["allow_deployments"] is True and body["error"] is None
    assert body["deployments"] == {"environments": ["production"], "on_freeze": "wait"}
    assert body["branch"] == "main" and body["repo"] == REPO


def test_the_default_branch_is_asked_without_branch(api: Any) -> None:
    client, auth = api
    assert client.get(f"/api/v1/freeze/{REPO}", headers=auth).get_json()["branch"] == "trunk"


def test_a_timed_room_hold_over_http(api: Any, redis_client: Redis) -> None:
    client, auth = api
    now = datetime.now(UTC).replace(microsecond=0)
    hold = room_holds.place_hold(redis_client, f"{REPO}@main", holder="dana", holder_id="slack:T1:U1",
                                 reason="incident 4711", origin="slack:acme/#ops", now=now,
                                 duration=timedelta(hours=2))
    body = client.get(f"/api/v1/freeze/{REPO}?branch=main", headers=auth).get_json()
    assert body["frozen"] is True
    assert body["reason"] == "frozen by @dana: incident 4711"
    assert [(h["id"], h["kind"]) for h in body["frozen_by"]] == [(hold.id, "hold")]
    assert body["frozen_until"] == body["next_thaw_at"] == to_iso(now + timedelta(hours=2))
    assert body["next_freeze_at"] is None
    assert body["allow_deployments"] is False
    assert client.get(f"/api/v1/freeze/{REPO}?branch=main&environment=staging",
                      headers=auth).get_json()["allow_deployments"] is True
    assert client.get(f"/api/v1/freeze/{REPO}?branch=dev", headers=auth).get_json()["frozen"] is False


def test_a_window_that_never_ends_has_no_thaw(api: Any) -> None:
    client, auth = api
    body = client.get(f"/api/v1/freeze/{REPO}?branch=release/2.0", headers=auth).get_json()
    assert body["frozen"] is True and body["next_thaw_at"] is None and body["frozen_until"] is None
    assert [(h["holder"], h["kind"]) for h in body["frozen_by"]] == [("always", "window")]
    assert body["reason"] == "frozen by always: freeze always until " + body["frozen_by"][0]["reason"].split(
        "until ", 1)[1]


def test_an_unreadable_config_is_never_free(api: Any, redis_client: Redis) -> None:
    client, auth = api
    store.save_repo(redis_client, REPO, store.RepoMeta(installation_id=1, config_text="freeze-windows: 7\n",
                                                      config_loaded=True))
    body = client.get(f"/api/v1/freeze/{REPO}?branch=main", headers=auth).get_json()
    assert body["frozen"] is None and body["allow_deployments"] is False
    assert "cannot be read" in body["error"]


@pytest.mark.parametrize(("path", "status"), [
    (f"/api/v1/freeze/{REPO}?branch=main", 200),
    ("/api/v1/freeze/acme/unknown?branch=main", 404),
    ("/api/v1/freeze/acme/wid..gets?branch=main", 400),
    (f"/api/v1/freeze/{REPO}?branch=", 400),
    (f"/api/v1/freeze/{REPO}?branch=ma%0Ain", 400),
    (f"/api/v1/freeze/{REPO}?branch={'x' * 256}", 400),
    (f"/api/v1/freeze/{REPO}?branch=main&environment=", 400),
])
def test_request_rows(api: Any, path: str, status: int) -> None:
    client, auth = api
    assert client.get(path, headers=auth).status_code == status


def test_tokens_read_scope_and_orgs(redis_client: Redis, tmp_path: Path, api: Any) -> None:
    client, _auth = api
    tokens = tmp_path / "tokens"
    reader = create_token(tokens, "deploy-bot", "read", ("acme",))
    elsewhere = create_token(tokens, "other-bot", "read", ("other",))

    def status(token: str | None) -> int:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return int(client.get(f"/api/v1/freeze/{REPO}?branch=main", headers=headers).status_code)

    assert (status(reader), status(elsewhere), status(None), status("mhk_wrong")) == (200, 403, 401, 401)
    revoke(tokens, "deploy-bot")
    assert status(reader) == 401
