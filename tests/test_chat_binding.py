"""Chat bound to orgs (issue #9 item 4): each workspace acts only on its orgs, wide holds and
exemptions need a chat admin, `/unhold` lifts only holds from workspaces bound to the target's org,
`/holds` lists only bound orgs, and a Mattermost reply goes only under MATTERMOST_URL, unlogged."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from redis import Redis

from app.chat import BAD_RESPONSE_URL, NOT_ADMIN, NOT_ALLOWED, NOT_BOUND, NOT_ENABLED
from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, bound_orgs, parse_binding, reply_url_allowed, within
from tests.chat_support import (
    MATTERMOST_TOKEN,
    SLACK_SECRET,
    TEAM,
    drain,
    dry_runtime,
    manage,
    response_catcher,
    slack_body,
    slack_headers,
)
from tests.webapp_support import closed_port_url, make_app
from workers.chat import rooms

FORM = "application/x-www-form-urlencoded"
NOW = datetime(2026, 1, 5, 10, tzinfo=UTC)
BINDING = parse_binding("MERGE_HOLD_SLACK_TEAMS", f"{TEAM}=acme+acme-labs,T0BARE,T0OTHER=other,E0GRID=acme")


def slack_app(redis: Redis, redis_url: str, tmp_path: Path, **overrides: Any) -> Flask:
    settings: dict[str, Any] = {"slack_signing_secret": SLACK_SECRET, "slack_teams": BINDING,
                                "chat_admins": ("U0BOSS", "T0OTHER/U0DANA")}
    settings.update(overrides)
    tmp_path.mkdir(exist_ok=True)
    app, _ = make_app(redis, tmp_path, redis_url, **settings)
    return app


def queued(redis: Redis) -> int:
    return int(redis.llen("rq:queue:merge-hold-test"))


def room_keys(redis: Redis) -> list[str]:
    names = [k.decode() if isinstance(k, bytes) else str(k) for k in redis.keys("mh:*")]
    return [k for k in names if k.endswith((":rooms", ":orgrooms", ":exempt"))]


def test_the_binding_is_parsed_and_looked_up() -> None:
    assert BINDING == ((TEAM, ("acme", "acme-labs")), ("T0BARE", ()), ("T0OTHER", ("other",)), ("E0GRID", ("acme",)))
    assert bound_orgs(BINDING, "T0NONE") is None
    assert bound_orgs(BINDING, "T0BARE") == ()
    assert bound_orgs(BINDING, "T0NONE", "E0GRID") == ("acme",)  # Enterprise Grid: the org's binding
    assert bound_orgs(BINDING, TEAM, "E0GRID") == ("acme", "acme-labs")  # the workspace's own comes first


@pytest.mark.parametrize(("scope", "inside"), [
    ("acme", True), ("ACME/widgets", True), ("acme/widgets#1", True), ("acme/widgets@release/*", True),
    ("acme-labs/x", True), ("acme-evil/widgets", False), ("acm", False), ("other/widgets#1", False),
    ("acme-labs-x", False), ("", False),
])
def test_within_the_bound_orgs(scope: str, inside: bool) -> None:
    assert within(("acme", "acme-labs"), scope) is inside


# (team, user, command, text) -> the refusal, or None when the command is queued.
ROWS: list[tuple[str, str, str, str, str | None]] = [
    ("T0UNKNOWN", "U1", "/holds", "", NOT_ENABLED),
    ("T0BARE", "U1", "/holds", "", NOT_BOUND),  # a bare team id: bound to nothing
    ("T0BARE", "U0BOSS", "/hold", "acme/widgets#1 deploy", NOT_BOUND),
    (TEAM, "U1", "/hold", "acme/widgets#1 deploy", None),  # a PR hold: open to the allow-list (empty)
    (TEAM, "U1", "/hold", "ACME-LABS/tools#2 deploy", None),
    (TEAM, "U1", "/hold", "other/widgets#1 deploy", "outside"),
    (TEAM, "U0BOSS", "/hold", "other/widgets#1 deploy", "outside"),  # an admin too
    (TEAM, "U1", "/hold", "acme-evil/widgets#1 deploy", "outside"),
    (TEAM, "U1", "/hold", "acme/widgets deploy", NOT_ADMIN),  # repo-wide
    (TEAM, "U1", "/hold", "acme/widgets@main deploy", NOT_ADMIN),
    (TEAM, "U1", "/hold", "acme incident", NOT_ADMIN),  # org-wide
    (TEAM, "U1", "/unhold", "acme/widgets", NOT_ADMIN),
    (TEAM, "U1", "/hold", "exempt acme/widgets#1 hotfix", NOT_ADMIN),
    (TEAM, "U1", "/unhold", "exempt acme/widgets#1", NOT_ADMIN),
    (TEAM, "U0BOSS", "/hold", "acme incident", None),
    (TEAM, "U0BOSS", "/hold", "exempt acme/widgets#1 hotfix", None),
    (TEAM, "U0DANA", "/hold", "acme incident", NOT_ADMIN),  # an admin of another workspace only
    ("T0OTHER", "U0DANA", "/hold", "other incident", None),
    ("T0OTHER", "U0DANA", "/hold", "acme incident", "outside"),
    (TEAM, "U1", "/holds", "", None),
    (TEAM, "U1", "/holds", "acme/widgets", None),
    (TEAM, "U1", "/holds", "other", "outside"),
    (TEAM, "U1", "/merge-hold", "hold other/x#1 sneaky", "outside"),
]


@pytest.mark.parametrize(("team", "user", "command", "text", "refusal"), ROWS)
def test_what_a_workspace_and_user_may_do(redis_client: Redis, redis_url: str, tmp_path: Path, team: str, user: str,
                                          command: str, text: str, refusal: str | None) -> None:
    client = slack_app(redis_client, redis_url, tmp_path).test_client()
    body = slack_body(command, text, team_id=team, user_id=user)
    answer = client.post("/chat/slack", data=body, headers=slack_headers(body))
    assert answer.status_code == 200 and answer.json is not None
    assert answer.json["response_type"] == "ephemeral"
    text_said = answer.json["text"]
    if refusal is None:
        assert queued(redis_client) == 1, text_said
    else:
        assert queued(redis_client) == 0 and room_keys(redis_client) == []
        if refusal == "outside":
            assert "is outside that. Nothing was recorded." in text_said
        else:
            assert text_said == refusal


def test_admins_default_to_nobody(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    client = slack_app(redis_client, redis_url, tmp_path, chat_admins=()).test_client()
    for user in ("U0BOSS", "U1"):
        body = slack_body("/hold", "acme incident", user_id=user)
        answer = client.post("/chat/slack", data=body, headers=slack_headers(body)).json
        assert answer is not None and answer["text"] == NOT_ADMIN
    body = slack_body("/hold", "acme/widgets#1 deploy", user_id="U1")
    answer = client.post("/chat/slack", data=body, headers=slack_headers(body)).json
    assert answer is not None and answer["text"].startswith("Working on")


def test_the_allow_list_still_limits_pr_holds(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    client = slack_app(redis_client, redis_url, tmp_path, chat_allowed_users=("U0ALLOWED",)).test_client()
    said: dict[str, str] = {}
    for user in ("U0ALLOWED", "U1", "U0BOSS"):
        body = slack_body("/hold", "acme/widgets#1 deploy", user_id=user)
        answer = client.post("/chat/slack", data=body, headers=slack_headers(body)).json
        said[user] = answer["text"] if answer else ""
    assert said["U1"] == NOT_ALLOWED
    assert said["U0ALLOWED"].startswith("Working on") and said["U0BOSS"].startswith("Working on")


# --- the job: lifting and listing ------------------------------------------------------------------


def chat(team: str, user: str = "U1", orgs: str = "acme", **fields: str) -> ChatRequest:
    base = {"platform": "slack", "team_id": team, "team_name": team, "channel_id": "C1", "channel_name": "ops",
            "user_id": user, "user_name": user.lower(), "command": "/unhold", "text": "", "response_url": "",
            "received_at": "2026-01-05T10:00:00Z", "orgs": orgs}
    base.update(fields)
    return ChatRequest.from_dict(base)


def test_unhold_lifts_only_holds_from_workspaces_bound_to_the_org(redis_client: Redis, redis_url: str) -> None:
    binding = parse_binding("MERGE_HOLD_SLACK_TEAMS", "T0A=acme,T0B=acme+beta,T0C=other")
    rt = dry_runtime(redis_client, redis_url, slack_teams=binding, write_rate_per_minute=60_000)
    manage(redis_client, "acme/widgets", {1: "main"})
    for holder_id in ("slack:T0A:U1", "slack:T0B:U2", "slack:T0C:U3", "mattermost:T0A:U4", "api:deploy-bot"):
        rooms.place_hold(redis_client, "acme/widgets", holder=holder_id, holder_id=holder_id, reason="r",
                         origin="test", now=NOW)
    # a chat admin's command, as the web tier hands it on (it judged `admin`)
    reply = rooms.execute(rt, chat("T0A", admin="1"), ChatCommand(action="unhold", scope="acme/widgets"))
    assert reply.in_channel and "placed by @slack:T0A:U1, @slack:T0B:U2" in reply.text
    left = sorted(h.holder for h in rooms.active_room_holds(redis_client, "acme/widgets", NOW))
    # another org's workspace, an unbound Mattermost team and the API's hold stay
    assert left == ["api:deploy-bot", "mattermost:T0A:U4", "slack:T0C:U3"]


def test_the_job_refuses_a_target_outside_its_orgs(redis_client: Redis, redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, "other/widgets", {1: "main"})
    reply = rooms.execute(rt, chat("T0A", orgs="acme"), ChatCommand(action="hold", scope="other/widgets#1",
                                                                  reason="x"))
    assert "may not act on other/widgets#1" in reply.text and room_keys(redis_client) == []


def test_holds_lists_only_bound_orgs(redis_client: Redis, redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, "acme/widgets", {1: "main"})
    manage(redis_client, "secret/private", {1: "main"})
    rooms.place_hold(redis_client, "acme/widgets#1", holder="dana", holder_id="slack:T0A:U1", reason="acme thing",
                     origin="slack:a/#ops", now=NOW)
    rooms.place_hold(redis_client, "secret/private", holder="eve", holder_id="slack:T0C:U3",
                     reason="the private launch", origin="slack:c/#ops", now=NOW)
    listed = rooms.execute(rt, chat("T0A", command="/holds"), ChatCommand(action="list")).text
    assert "acme thing" in listed and "secret" not in listed and "private launch" not in listed


# --- Mattermost's response_url ---------------------------------------------------------------------


@pytest.mark.parametrize(("url", "ok"), [
    ("", True),
    ("https://chat.example.com/hooks/commands/abc", True),
    ("https://chat.example.com/", True),
    ("https://chat.example.com", False),
    ("https://chat.example.com.evil.org/hooks/x", False),
    ("https://chat.example.com@evil.org/hooks/x", False),
    ("http://chat.example.com/hooks/x", False),
    ("https://evil.org/https://chat.example.com/hooks", False),
    ("https://chat.example.com/hooks/\nx", False),
    ("https://chat.example.com/hooks\\..\\x", False),
    ("https://chat.example.com/ x", False),
])
def test_a_reply_goes_only_under_the_mattermost_url(url: str, ok: bool) -> None:
    assert reply_url_allowed(url, "https://chat.example.com") is ok
    assert reply_url_allowed(url, None) is (url == "")


def test_mattermost_refuses_a_foreign_response_url_and_makes_no_request(redis_client: Redis, redis_url: str,
                                                                        tmp_path: Path) -> None:
    from urllib.parse import urlencode

    with response_catcher() as catcher:
        app, _ = make_app(redis_client, tmp_path, redis_url, mattermost_token=MATTERMOST_TOKEN,
                          mattermost_teams=(("MMT", ("acme",)),), mattermost_url="https://chat.example.com")
        body = urlencode({"team_id": "MMT", "user_id": "u1", "command": "/holds", "text": "",
                          "channel_id": "c1", "response_url": catcher.url, "token": MATTERMOST_TOKEN}).encode()
        answer = app.test_client().post("/chat/mattermost", data=body, headers={"Content-Type": FORM})
        assert answer.json is not None and answer.json["text"] == BAD_RESPONSE_URL
        assert queued(redis_client) == 0
        # The worker checks again: a queued job with a foreign URL posts nothing.
        rt = dry_runtime(redis_client, redis_url, mattermost_url="https://chat.example.com")
        job = chat("MMT", platform="mattermost", command="/holds", response_url=catcher.url).to_dict()
        rt.queue.enqueue(rooms.CHAT_JOB, job)
        drain(rt)
        assert catcher.wait(1, timeout=0.5) == []


def test_a_failed_reply_does_not_log_its_url(caplog: pytest.LogCaptureFixture) -> None:
    url = closed_port_url().replace("redis://", "http://").rsplit("/", 1)[0] + "/hooks/commands/T0/1/SECRETxTOKENx4711"
    with caplog.at_level(logging.DEBUG):
        assert rooms.respond(url, rooms.Reply("hi")) is False
    assert caplog.records and "SECRETxTOKENx4711" not in caplog.text and "/hooks/" not in caplog.text
