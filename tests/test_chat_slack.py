"""`POST /chat/slack`: Slack's v0 signature and window, served workspaces, who may hold, the usage
reply, and the whole path from a signed slash command to the channel's answer and the statuses."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from flask import Flask
from redis import Redis

from app.chat import CLOCK, NOT_ALLOWED, NOT_ENABLED, may_change_holds
from core import keys
from core.chat_grammar import VERBS
from tests.chat_support import (
    BINDING,
    SLACK_SECRET,
    TEAM,
    drain,
    dry_runtime,
    manage,
    response_catcher,
    slack_body,
    slack_headers,
    slack_signature,
)
from tests.conftest import ROOT
from tests.webapp_support import FIXTURES, closed_port_url, make_app, serving

VECTOR: dict[str, Any] = json.loads((FIXTURES / "chat" / "slack-signature.json").read_text())
BODIES: dict[str, Any] = json.loads((FIXTURES / "chat" / "slack-slash-command-bodies.json").read_text())
FORM = "application/x-www-form-urlencoded"


def slack_app(redis: Redis, redis_url: str, tmp_path: Path, **overrides: Any) -> Flask:
    settings: dict[str, Any] = {"slack_signing_secret": SLACK_SECRET, "slack_teams": BINDING,
                                "chat_admins": ("U0DANA", "U0ERIN")}
    settings.update(overrides)
    app, _token = make_app(redis, tmp_path, redis_url, **settings)
    return app


def queued(redis: Redis) -> int:
    return int(redis.llen("rq:queue:merge-hold-test"))


def room_keys(redis: Redis) -> list[str]:
    names = [k.decode() if isinstance(k, bytes) else str(k) for k in redis.keys("mh:*")]
    return [k for k in names if k.endswith((":rooms", ":orgrooms", ":exempt"))]


# --- the signature --------------------------------------------------------------------------------


def vector_app(redis: Redis, redis_url: str, tmp_path: Path, *, pinned: bool = True) -> Flask:
    app = slack_app(redis, redis_url, tmp_path, slack_signing_secret=VECTOR["signing_secret"],
                    slack_teams=(("T1DC2JH3J", ("acme",)),))
    if pinned:
        app.config[CLOCK] = lambda: float(VECTOR["timestamp"])
    return app


def test_official_vector_verifies_with_the_clock_at_its_timestamp(redis_client: Redis, redis_url: str,
                                                                  tmp_path: Path) -> None:
    app = vector_app(redis_client, redis_url, tmp_path)
    answer = app.test_client().post("/chat/slack", data=VECTOR["body"].encode(),
                                    headers={"Content-Type": FORM, **VECTOR["headers"]})
    assert answer.status_code == 200
    # `/webhook-collect` with no text is no command of ours: the usage text, and nothing queued.
    assert answer.json is not None and answer.json["response_type"] == "ephemeral"
    assert answer.json["text"].startswith("Usage:")
    assert queued(redis_client) == 0


@pytest.mark.parametrize(("case", "body", "headers", "pinned"), [
    ("tampered body", VECTOR["body"] + "------", VECTOR["headers"], True),
    ("older than five minutes (real clock)", VECTOR["body"], VECTOR["headers"], False),
    ("no signature", VECTOR["body"], {"X-Slack-Request-Timestamp": VECTOR["timestamp"]}, True),
    ("no timestamp", VECTOR["body"], {"X-Slack-Signature": VECTOR["x_slack_signature"]}, True),
    ("timestamp moved a second", VECTOR["body"],
     {**VECTOR["headers"], "X-Slack-Request-Timestamp": str(int(VECTOR["timestamp"]) + 1)}, True),
    ("timestamp not a number", VECTOR["body"], {"X-Slack-Request-Timestamp": "soon",
                                                "X-Slack-Signature": VECTOR["x_slack_signature"]}, True),
    ("signature of another scheme", VECTOR["body"],
     {**VECTOR["headers"], "X-Slack-Signature": "v1=" + VECTOR["x_slack_signature"][3:]}, True),
    ("signature upper-cased", VECTOR["body"],
     {**VECTOR["headers"], "X-Slack-Signature": VECTOR["x_slack_signature"].upper()}, True),
])
def test_bad_signatures_get_401_and_record_nothing(redis_client: Redis, redis_url: str, tmp_path: Path, case: str,
                                                   body: str, headers: dict[str, str], pinned: bool) -> None:
    app = vector_app(redis_client, redis_url, tmp_path, pinned=pinned)
    answer = app.test_client().post("/chat/slack", data=body.encode(), headers={"Content-Type": FORM, **headers})
    assert answer.status_code == 401, case
    assert queued(redis_client) == 0


@pytest.mark.parametrize(("age", "status"), [(0, 200), (-240, 200), (240, 200), (-310, 401), (310, 401)])
def test_the_replay_window_is_five_minutes_either_way(redis_client: Redis, redis_url: str, tmp_path: Path,
                                                      age: int, status: int) -> None:
    app = slack_app(redis_client, redis_url, tmp_path)
    body = slack_body("/holds", "")
    headers = slack_headers(body, timestamp=str(int(time.time()) + age))
    assert app.test_client().post("/chat/slack", data=body, headers=headers).status_code == status


def test_without_a_signing_secret_nothing_is_served(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    app = slack_app(redis_client, redis_url, tmp_path, slack_signing_secret=None)
    body = slack_body("/holds", "")
    assert app.test_client().post("/chat/slack", data=body, headers=slack_headers(body)).status_code == 503


# --- workspaces, users, malformed text ---------------------------------------------------------


@pytest.mark.parametrize(("fields", "served"), [
    ({}, True),
    ({"team_id": "T0OTHER"}, False),
    ({"team_id": ""}, False),
    ({"team_id": TEAM.lower()}, False),  # ids are exact
    ({"team_id": "T0OTHER", "enterprise_id": "E0GRID"}, True),  # Enterprise Grid: the org is served
    ({"team_id": "T0OTHER", "enterprise_id": "E0ELSE"}, False),
])
def test_only_configured_workspaces_are_served(redis_client: Redis, redis_url: str, tmp_path: Path,
                                               fields: dict[str, str], served: bool) -> None:
    app = slack_app(redis_client, redis_url, tmp_path, slack_teams=(*BINDING, ("E0GRID", ("acme",))))
    body = slack_body("/hold", "acme/widgets incident 4711", **fields)
    answer = app.test_client().post("/chat/slack", data=body, headers=slack_headers(body))
    assert answer.status_code == 200 and answer.json is not None
    assert answer.json["response_type"] == "ephemeral"
    assert (answer.json["text"] == NOT_ENABLED) is not served
    assert queued(redis_client) == (1 if served else 0)


@pytest.mark.parametrize(("command", "text", "says"), [
    ("/hold", "", "Usage:"),
    ("/hold", "acme/widgets", "needs a reason"),
    ("/hold", "acme/widgets for 2h", "needs a reason"),
    ("/hold", "acme/widgets for 400d too long", "at most 90d"),
    ("/hold", "acme/wid:gets incident", "not a GitHub repository name"),
    ("/hold", "acme/widgets#0 incident", "not a pull request number"),
    ("/hold", "exempt acme/widgets hotfix", "exempt takes one PR"),
    ("/unhold", "acme widgets", "takes one target"),
    ("/holds", "acme/widgets acme/gadgets", "at most one target"),
    ("/merge-hold", "frobnicate acme", "unknown command"),
])
def test_malformed_text_gets_the_usage_and_records_nothing(redis_client: Redis, redis_url: str, tmp_path: Path,
                                                           command: str, text: str, says: str) -> None:
    app = slack_app(redis_client, redis_url, tmp_path)
    body = slack_body(command, text)
    answer = app.test_client().post("/chat/slack", data=body, headers=slack_headers(body))
    assert answer.status_code == 200 and answer.json is not None
    assert answer.json["response_type"] == "ephemeral"
    assert says in answer.json["text"] and "Usage:" in answer.json["text"]
    assert queued(redis_client) == 0 and room_keys(redis_client) == []


@pytest.mark.parametrize(("allowed", "user", "channel", "ok"), [
    ((), "U1", "C1", True),
    (("U1",), "U1", "C1", True),
    (("U2",), "U1", "C1", False),
    ((f"{TEAM}/U1",), "U1", "C1", True),
    (("T0OTHER/U1",), "U1", "C1", False),  # the same user id in another workspace is someone else
    (("slack:U1",), "U1", "C1", True),
    (("mattermost:U1",), "U1", "C1", False),
    (("#C1",), "U9", "C1", True),  # anyone in the release channel
    (("C1",), "U9", "C1", False),  # a bare channel id is not a user id
    (("#C1",), "U9", "C2", False),
    (("u1",), "U1", "C1", False),  # ids are exact
    (("",), "", "", False),  # an empty user never matches an empty entry
    ((" U1 ",), "U1", "C1", True),
])
def test_who_may_hold(allowed: tuple[str, ...], user: str, channel: str, ok: bool) -> None:
    assert may_change_holds(allowed, "slack", TEAM, user, channel) is ok


def test_a_user_not_allowed_may_still_list(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    client = slack_app(redis_client, redis_url, tmp_path, chat_allowed_users=("U0BOSS",), chat_admins=()
                       ).test_client()
    body = slack_body("/hold", "acme/widgets#4 incident 4711")
    refused = client.post("/chat/slack", data=body, headers=slack_headers(body)).json
    assert refused is not None and refused["text"] == NOT_ALLOWED and queued(redis_client) == 0
    body = slack_body("/holds", "acme/widgets")
    assert client.post("/chat/slack", data=body, headers=slack_headers(body)).status_code == 200
    assert queued(redis_client) == 1


def test_redis_down_still_answers_slack_in_time(tmp_path: Path) -> None:
    url = closed_port_url()
    app, _ = make_app(None, tmp_path, url, slack_signing_secret=SLACK_SECRET, slack_teams=BINDING,
                      chat_admins=("U0DANA",))
    body = slack_body("/hold", "acme/widgets incident 4711")
    started = time.monotonic()
    answer = app.test_client().post("/chat/slack", data=body, headers=slack_headers(body))
    assert time.monotonic() - started < 3
    assert answer.status_code == 200 and answer.json is not None
    assert "could not queue" in answer.json["text"]


def test_ssl_check_is_acknowledged(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    body = b"token=xyzz0WbapA4vBCDEFasx0q6G&ssl_check=1"
    answer = slack_app(redis_client, redis_url, tmp_path).test_client().post(
        "/chat/slack", data=body, headers=slack_headers(body))
    assert answer.status_code == 200 and queued(redis_client) == 0


# --- the whole path -------------------------------------------------------------------------------


def test_hold_and_lift_from_slack_reach_the_channel_and_the_statuses(redis_client: Redis, redis_url: str,
                                                                      tmp_path: Path) -> None:
    app = slack_app(redis_client, redis_url, tmp_path)
    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000, slack_teams=BINDING)
    manage(redis_client, "acme/widgets", {1: "main", 2: "main", 3: "release/1"})
    client = app.test_client()
    with response_catcher() as catcher:
        body = slack_body("/hold", "acme/widgets for 2h incident 4711", response_url=catcher.url)
        ack = client.post("/chat/slack", data=body, headers=slack_headers(body)).json
        assert ack is not None and ack["response_type"] == "ephemeral"
        drain(rt)
        said = catcher.wait(1)
        assert said[0]["response_type"] == "in_channel"
        assert said[0]["text"].startswith("@dana held acme/widgets (3 open PRs) for 2h until ")
        assert said[0]["text"].endswith(": incident 4711")

        stored = [json.loads(v) for v in redis_client.hvals(keys.room_holds("acme/widgets"))]
        assert len(stored) == 1
        hold = stored[0]
        assert (hold["source"], hold["scope"], hold["holder"], hold["origin"]) == (
            "room", "acme/widgets", "dana", "slack:acme-eng/#releases")
        assert hold["expires_at"] is not None and hold["reason"] == "incident 4711"
        posted = [json.loads(s) for s in redis_client.lrange(keys.DRY_RUN_STATUSES, 0, -1)]
        assert sorted(s["sha"][-1] for s in posted) == ["1", "2", "3"]
        assert {s["description"] for s in posted} == {"Held by @dana in slack:acme-eng/#releases: incident 4711"}

        # dana again on the same target: one hold per holder and scope, so the reply says it replaced hers
        body = slack_body("/hold", "acme/widgets incident 4711, second wave", response_url=catcher.url)
        client.post("/chat/slack", data=body, headers=slack_headers(body))
        drain(rt)
        said = catcher.wait(2)
        assert said[1]["text"] == ("@dana held acme/widgets (3 open PRs): incident 4711, second wave (this replaces "
                                   "@dana's earlier hold on acme/widgets: incident 4711)")
        assert redis_client.hlen(keys.room_holds("acme/widgets")) == 1

        body = slack_body("/unhold", "acme/widgets", response_url=catcher.url, user_name="erin", user_id="U0ERIN")
        client.post("/chat/slack", data=body, headers=slack_headers(body))
        drain(rt)
        said = catcher.wait(3)
        assert said[2] == {"response_type": "in_channel",
                           "text": "@erin lifted the hold on acme/widgets (3 open PRs) (placed by @dana)"}
        assert redis_client.hlen(keys.room_holds("acme/widgets")) == 0
        latest = [json.loads(s) for s in redis_client.lrange(keys.DRY_RUN_STATUSES, 0, 2)]
        assert {s["state"] for s in latest} == {"success"}
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.AUDIT)  # type: ignore[assignment]
    events = [fields[b"event"] for _, fields in entries]
    assert b"room.held" in events and b"room.lifted" in events


def test_a_real_server_answers_a_signed_command(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    app = slack_app(redis_client, redis_url, tmp_path)
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, "acme/widgets", {7: "main"})
    with serving(app) as base, response_catcher() as catcher:
        body = slack_body("/holds", "acme/widgets", response_url=catcher.url)
        answer = requests.post(f"{base}/chat/slack", data=body, headers=slack_headers(body), timeout=5)
        assert answer.status_code == 200 and answer.json()["response_type"] == "ephemeral"
        forged = requests.post(f"{base}/chat/slack", data=body + b"&text=acme",
                               headers=slack_headers(body), timeout=5)
        assert forged.status_code == 401
        drain(rt)
        assert catcher.wait(1) == [{"response_type": "ephemeral", "text": "No active holds on acme/widgets."}]


@pytest.mark.parametrize("name", [n for n, b in BODIES.items() if isinstance(b, str)])
def test_real_slash_command_bodies_are_read(redis_client: Redis, redis_url: str, tmp_path: Path, name: str) -> None:
    """Bodies from Slack's SDKs and docs: each verifies and is answered (with the usage text, as none
    of their commands is ours), whatever fields they carry."""
    raw: str = BODIES[name]
    body = raw.encode()
    team = dict(p.split("=", 1) for p in raw.split("&"))["team_id"]
    app = slack_app(redis_client, redis_url, tmp_path, slack_teams=((team, ("acme",)),))
    stamp = str(int(time.time()))
    answer = app.test_client().post("/chat/slack", data=body, headers={
        "Content-Type": FORM, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": slack_signature(body, stamp)})
    assert answer.status_code == 200 and answer.json is not None
    assert answer.json["response_type"] == "ephemeral" and "Usage:" in answer.json["text"]


def test_the_slack_app_manifest_declares_the_three_commands() -> None:
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app.yml").read_text())
    commands = manifest["features"]["slash_commands"]
    assert [c["command"] for c in commands] == [f"/{verb}" for verb in VERBS]
    assert {c["url"] for c in commands} == {"https://YOUR-HOST/chat/slack"}
    assert all(c["should_escape"] is False for c in commands)  # the grammar reads the text as typed
    # chat:write only for notifications (`/hold subscribe`): chat.postMessage with the bot token.
    assert manifest["oauth_config"]["scopes"]["bot"] == ["commands", "chat:write"]
