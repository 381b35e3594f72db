"""`POST /chat/mattermost`: the command token (form field or `Authorization: Token …`), the same
grammar as Slack, Mattermost's response JSON, and the answer through `response_url`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask
from redis import Redis

from core import keys
from tests.chat_support import MATTERMOST_TOKEN, drain, dry_runtime, manage, response_catcher
from tests.webapp_support import FIXTURES, make_app

FORM = "application/x-www-form-urlencoded"
MM_TEAM = "carya1qs77bemjup96ff538snh"
MM_USER = "aoa1agao6t8fmx3ikt1j9w5ybw"
MM_BINDING = ((MM_TEAM, ("acme",)),)


def documented_request() -> tuple[dict[str, str], bytes]:
    """Mattermost's documented request: its headers, and its body url-encoded as Mattermost sends it
    (the docs show one field per line; the mention arrays there are illustrative and left out)."""
    lines = [ln for ln in (FIXTURES / "chat" / "mattermost-slash-command-request.txt").read_text().splitlines()
             if not ln.startswith("#")]
    blank = lines.index("")
    headers = dict(ln.split(": ", 1) for ln in lines[1:blank])
    fields = [ln.rstrip("&") for ln in lines[blank + 1:] if "=" in ln and not ln.split("=", 1)[1].startswith("[")]
    return headers, "&".join(fields).encode()


def mm_app(redis: Redis, redis_url: str, tmp_path: Path, token: str | None = MATTERMOST_TOKEN,
           **overrides: Any) -> Flask:
    tmp_path.mkdir(exist_ok=True)
    settings: dict[str, Any] = {"mattermost_teams": MM_BINDING, "chat_admins": (MM_USER,),
                                "mattermost_url": "http://localhost:8065"}
    settings.update(overrides)
    app, _ = make_app(redis, tmp_path, redis_url, mattermost_token=token, **settings)
    return app


def mm_body(text: str, command: str = "/hold", response_url: str = "", token: str | None = None) -> bytes:
    form = {"channel_id": "jux16pkewjrkfj3ehep1psxyxc", "channel_name": "town-square", "command": command,
            "response_url": response_url, "team_domain": "acme", "team_id": "carya1qs77bemjup96ff538snh",
            "text": text, "user_id": "aoa1agao6t8fmx3ikt1j9w5ybw", "user_name": "somename"}
    if token is not None:
        form["token"] = token
    return urlencode(form).encode()


def queued(redis: Redis) -> int:
    return int(redis.llen("rq:queue:merge-hold-test"))


def test_the_documented_request_is_answered(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    headers, body = documented_request()
    assert headers["Authorization"] == f"Token {MATTERMOST_TOKEN}"
    answer = mm_app(redis_client, redis_url, tmp_path).test_client().post(
        "/chat/mattermost", data=body, headers={"Content-Type": FORM, "Authorization": headers["Authorization"]})
    assert answer.status_code == 200 and answer.json is not None
    # `/test asd` is no command of ours: the usage, only to the user, nothing queued.
    assert answer.json["response_type"] == "ephemeral"
    assert answer.json["text"].startswith("unknown command 'asd'\nUsage:\n/test hold TARGET")
    assert queued(redis_client) == 0


@pytest.mark.parametrize(("case", "form_token", "header", "status"), [
    ("token in the form", MATTERMOST_TOKEN, None, 200),
    ("token in the header", None, f"Token {MATTERMOST_TOKEN}", 200),
    ("header scheme in lower case", None, f"token {MATTERMOST_TOKEN}", 200),
    ("the second of two configured tokens", "second-command-token", None, 200),
    ("wrong token", "okwexkjpe7ygb8eq1ww58t483x", None, 401),
    ("token prefix only", MATTERMOST_TOKEN[:-1], None, 401),
    ("token with a suffix", MATTERMOST_TOKEN + "x", None, 401),
    ("no token", None, None, 401),
    ("empty token", "", None, 401),
    ("bearer is not Mattermost's scheme", None, f"Bearer {MATTERMOST_TOKEN}", 401),
    ("a wrong header beats a right form token", MATTERMOST_TOKEN, "Token nope", 401),
    ("the list separator is no token", ",", None, 401),
])
def test_the_token_decides(redis_client: Redis, redis_url: str, tmp_path: Path, case: str,
                           form_token: str | None, header: str | None, status: int) -> None:
    app = mm_app(redis_client, redis_url, tmp_path, token=f"{MATTERMOST_TOKEN},second-command-token")
    headers = {"Content-Type": FORM, **({"Authorization": header} if header else {})}
    answer = app.test_client().post("/chat/mattermost", data=mm_body("acme/widgets release", token=form_token),
                                    headers=headers)
    assert answer.status_code == status, case
    assert queued(redis_client) == (1 if status == 200 else 0)
    if status == 200:
        assert answer.json is not None and answer.json["response_type"] == "ephemeral"


def test_without_a_configured_token_nothing_is_served(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    app = mm_app(redis_client, redis_url, tmp_path, token=None)
    answer = app.test_client().post("/chat/mattermost", data=mm_body("acme/widgets x", token=""),
                                    headers={"Content-Type": FORM})
    assert answer.status_code == 503


def test_malformed_text_records_nothing(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    answer = mm_app(redis_client, redis_url, tmp_path).test_client().post(
        "/chat/mattermost", data=mm_body("acme/widgets", token=MATTERMOST_TOKEN), headers={"Content-Type": FORM})
    assert answer.json is not None and "needs a reason" in answer.json["text"]
    assert queued(redis_client) == 0


def test_allowed_users_apply_to_mattermost_ids(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    app = mm_app(redis_client, redis_url, tmp_path, chat_allowed_users=("mattermost:aoa1agao6t8fmx3ikt1j9w5ybw",),
                 chat_admins=())
    ok = app.test_client().post("/chat/mattermost", data=mm_body("acme/widgets#1 x", token=MATTERMOST_TOKEN),
                                headers={"Content-Type": FORM})
    assert ok.json is not None and ok.json["text"].startswith("Working on")
    app = mm_app(redis_client, redis_url, tmp_path / "other", chat_allowed_users=("slack:aoa1agao6t8fmx3ikt1j9w5ybw",),
                 chat_admins=())
    refused = app.test_client().post("/chat/mattermost", data=mm_body("acme/widgets#1 x", token=MATTERMOST_TOKEN),
                                     headers={"Content-Type": FORM})
    assert refused.json is not None and "not on the list" in refused.json["text"]
    assert queued(redis_client) == 1


def test_branch_hold_and_exemption_from_mattermost(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    manage(redis_client, "acme/widgets", {1: "main", 2: "release/2.0", 3: "release/2.1"})
    headers = {"Content-Type": FORM, "Authorization": f"Token {MATTERMOST_TOKEN}"}
    with response_catcher() as catcher:
        server = catcher.url.split("/hooks/", 1)[0]
        client = mm_app(redis_client, redis_url, tmp_path, mattermost_url=server).test_client()
        rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000, mattermost_url=server,
                         mattermost_teams=MM_BINDING)
        client.post("/chat/mattermost", data=mm_body("acme/widgets@release/* for 1d code freeze",
                                                     response_url=catcher.url), headers=headers)
        client.post("/chat/mattermost", data=mm_body("exempt acme/widgets#3 security fix",
                                                     response_url=catcher.url), headers=headers)
        drain(rt)
        # Listed once the fan-out has published: the held PRs are those whose verdict says so.
        client.post("/chat/mattermost", data=mm_body("acme/widgets@release/*", command="/holds",
                                                     response_url=catcher.url), headers=headers)
        drain(rt)
        said = catcher.wait(3)
    assert said[0]["response_type"] == "in_channel"
    # Mattermost mentions are broken with a zero-width space (core.escaping); a branch scope's @ is no mention
    assert said[0]["text"].startswith("@\u200bsomename held acme/widgets@release/* (2 open PRs) for 1d until ")
    assert said[1] == {"response_type": "in_channel",
                       "text": "@\u200bsomename exempted acme/widgets#3 from room and freeze holds on its head 0000000 "
                               "(a new push ends it): security fix"}
    assert said[2]["response_type"] == "ephemeral"
    listing = said[2]["text"].splitlines()
    assert listing[0] == "Room holds on acme/widgets@release/* (1):"
    assert listing[1].startswith("• acme/widgets@release/*: @\u200bsomename in mattermost:acme/#town-square: "
                                 "code freeze")
    assert listing[2:] == ["Held PRs on acme/widgets@release/* (1):",
                           "• acme/widgets#2: Held by @\u200bsomename in mattermost:acme/#town-square: code freeze"]
    exemption = json.loads(redis_client.hget(keys.exemptions("acme/widgets"), "3") or b"{}")
    assert (exemption["by"], exemption["reason"], exemption["origin"]) == (
        "somename", "security fix", "mattermost:acme/#town-square")
    held = sorted(int(n) for n in redis_client.smembers(keys.held_prs("acme/widgets")))
    assert held == [2]
