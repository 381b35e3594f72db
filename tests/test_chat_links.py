"""A chat user linked to a GitHub login (issue 14 item 5): `/hold link` in Slack or Mattermost, the
one-time `/link/<code>` page behind Sign in with GitHub, and what the link lets the user do on `/rooms`.
End to end over HTTP with Flask's test client: signed slash commands, the GitHub sign-in against the
emulator, the real Redis (codes expire by Redis's own TTL)."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from core import keys
from merge_hold.tokens import create as create_token
from state import room_holds
from tests.chat_support import (
    GADGETS,
    MATTERMOST_TOKEN,
    SLACK_SECRET,
    TEAM,
    WIDGETS,
    acme,
    slack_body,
    slack_headers,
)
from tests.emulator import GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.test_dashboard_actions import act, csrf
from tests.test_github_login import PUBLIC, sign_in
from tests.webapp_support import make_app, post_form

BETA_TEAM = "T0BETA"
MM_TEAM, MM_USER = "carya1qs77bemjup96ff538snh", "aoa1agao6t8fmx3ikt1j9w5ybw"
ADMINS = ("U0DANA", f"{BETA_TEAM}/U0ERIN", f"mattermost:{MM_USER}")
"""dana is a chat admin anywhere; erin only in the workspace bound to beta; fred is none."""
NAMES = {"U0DANA": "dana", "U0ERIN": "erin", "U0FRED": "fred"}
DOMAINS = {TEAM: "acme-eng", BETA_TEAM: "beta-eng"}
GONE = "This link is unknown, has expired or was already used."


@pytest.fixture()
def world(github_emulator: GitHubEmulator, redis_client: redis.Redis) -> GitHubEmulator:
    return acme(github_emulator, redis_client, {"walt": "write", "wendy": "write"})  # no GitHub admin anywhere


@pytest.fixture()
def site(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path) -> Flask:
    """Dashboard and chat in one app: Sign in with GitHub at the emulator, Slack and Mattermost served."""
    app, _ = make_app(redis_client, tmp_path, github_client_id=CLIENT_ID, github_client_secret=CLIENT_SECRET,
                      github_web_url=world.url, github_api_url=world.url, public_url=PUBLIC,
                      slack_signing_secret=SLACK_SECRET, slack_teams=((TEAM, ("acme",)), (BETA_TEAM, ("beta",))),
                      mattermost_token=MATTERMOST_TOKEN, mattermost_teams=((MM_TEAM, ("acme",)),),
                      mattermost_url="http://localhost:8065", chat_admins=ADMINS)
    return app


def slash(app: Flask, text: str, user: str = "U0DANA", team: str = TEAM) -> str:
    """A signed Slack `/hold TEXT` from ``user``; the ephemeral answer's text."""
    body = slack_body("/hold", text, user_id=user, user_name=NAMES[user], team_id=team, team_domain=DOMAINS[team])
    answer = app.test_client().post("/chat/slack", data=body, headers=slack_headers(body))
    assert answer.status_code == 200 and answer.json is not None
    assert answer.json["response_type"] == "ephemeral"
    return str(answer.json["text"])


def code_of(reply: str) -> str:
    found = re.search(rf"{re.escape(PUBLIC)}/link/([A-Za-z0-9_-]+) ", reply)
    assert found is not None, reply
    return found[1]


def browser(app: Flask, emu: GitHubEmulator, login: str) -> FlaskClient:
    client = app.test_client()
    sign_in(client, emu, login)
    return client


def confirm(client: FlaskClient, code: str) -> TestResponse:
    """Press Link on the page (with the session's CSRF token, as the form carries it)."""
    return client.post(f"/link/{code}", data={"csrf_token": csrf(client, "/rooms")})


def link(app: Flask, emu: GitHubEmulator, login: str, user: str = "U0DANA", team: str = TEAM) -> FlaskClient:
    """The whole flow: `/hold link` in chat, then ``login`` confirms; their signed-in client."""
    client = browser(app, emu, login)
    answer = confirm(client, code_of(slash(app, "link", user, team)))
    assert answer.status_code == 302 and answer.headers["Location"] == "/rooms"
    return client


def events(redis_client: redis.Redis, kind: str) -> list[dict[str, str]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.AUDIT)  # type: ignore[assignment]
    return [json.loads(fields[b"data"]) for _, fields in entries if fields[b"event"].decode() == kind]


def freeze(client: FlaskClient, target: str) -> str:
    return act(client, "/rooms/freeze", {"target": target, "reason": "incident 4711"}, page="/rooms")


# --- the link itself -------------------------------------------------------------------------------


def test_the_link_flow(site: Flask, world: GitHubEmulator, redis_client: redis.Redis) -> None:
    reply = slash(site, "link")
    assert "within 10 minutes, sign in with GitHub and confirm" in reply and "Note:" not in reply
    code = code_of(reply)
    assert 590 <= redis_client.ttl(keys.chat_link_code(code)) <= 600
    assert redis_client.llen("rq:queue:merge-hold-test") == 0  # written in the web tier, nothing queued

    client = site.test_client()
    away = client.get(f"/link/{code}")  # not signed in: to the sign-in, and back here after it
    assert away.status_code == 302 and away.headers["Location"] == f"/login?next=/link/{code}"
    assert sign_in(client, world, "walt", f"/link/{code}") == f"/link/{code}"
    page = client.get(f"/link/{code}").get_data(as_text=True)
    assert "Link chat user <strong>@dana in Slack workspace acme-eng (T0MERGE1)</strong> to GitHub " \
           "<strong>@walt</strong>?" in page
    assert f'action="/link/{code}"' in page and 'name="csrf_token"' in page
    assert "chat admin of a workspace bound to acme" in page

    assert client.post(f"/link/{code}").status_code == 400  # no CSRF token: refused, the code kept
    answer = confirm(client, code)
    assert answer.status_code == 302 and answer.headers["Location"] == "/rooms"
    rooms = client.get("/rooms").get_data(as_text=True)
    assert "Linked chat user @dana in Slack workspace acme-eng (T0MERGE1) to GitHub @walt. As a chat admin " \
           "you may now freeze and thaw acme here." in rooms
    assert 'action="/rooms/freeze"' in rooms  # the form a writer did not get before
    assert "Your GitHub login is linked to chat user @dana in Slack workspace acme-eng (T0MERGE1): a chat admin " \
           "for acme." in rooms
    [made] = events(redis_client, "chat.linked")
    assert (made["login"], made["platform"], made["team_id"], made["user_id"], made["user_name"]) == (
        "walt", "slack", TEAM, "U0DANA", "dana")
    assert redis_client.exists(keys.chat_link_code(code)) == 0


def test_a_used_code_is_refused(site: Flask, world: GitHubEmulator, redis_client: redis.Redis) -> None:
    code = code_of(slash(site, "link"))
    walt = browser(site, world, "walt")
    assert confirm(walt, code).status_code == 302
    wendy = browser(site, world, "wendy")
    for answer in (wendy.get(f"/link/{code}"), confirm(wendy, code), confirm(walt, code)):
        assert answer.status_code == 404 and GONE in answer.get_data(as_text=True)
    assert "run <code>/hold link</code> in chat again" in wendy.get(f"/link/{code}").get_data(as_text=True).lower()
    assert len(events(redis_client, "chat.linked")) == 1
    assert "or a linked chat admin — run /hold link in chat" in freeze(wendy, "acme")  # the code gave her nothing


def _expired(site: Flask, redis_client: redis.Redis) -> str:
    code = code_of(slash(site, "link"))
    redis_client.pexpire(keys.chat_link_code(code), 1)  # Redis's own expiry, not a stand-in
    time.sleep(0.05)
    return code


def _voided(site: Flask, redis_client: redis.Redis) -> str:
    code = code_of(slash(site, "link"))
    slash(site, "link")  # a newer code voids it
    return code


def _unlinked(site: Flask, redis_client: redis.Redis) -> str:
    code = code_of(slash(site, "link"))
    slash(site, "unlink")  # "undo": no link may appear after it
    return code


@pytest.mark.parametrize("make", [
    lambda site, r: "A" * 32,  # unknown
    lambda site, r: "bad!code",  # not a code's shape: answered without asking Redis
    _expired,
    _voided,
    _unlinked,
], ids=["unknown", "malformed", "expired", "voided by a newer code", "voided by unlink"])
def test_an_unknown_or_expired_code_gets_a_clear_page(site: Flask, world: GitHubEmulator, redis_client: redis.Redis,
                                                       make: object) -> None:
    code = make(site, redis_client)  # type: ignore[operator]
    walt = browser(site, world, "walt")
    for answer in (walt.get(f"/link/{code}"), confirm(walt, code)):
        page = answer.get_data(as_text=True)
        assert answer.status_code == 404 and GONE in page and "lasts 10 minutes and works once" in page
    assert events(redis_client, "chat.linked") == []
    assert "or a linked chat admin — run /hold link in chat" in freeze(walt, "acme")


def test_a_token_sign_in_cannot_link(site: Flask, world: GitHubEmulator, redis_client: redis.Redis,
                                     tmp_path: Path) -> None:
    code = code_of(slash(site, "link"))
    client = site.test_client()
    token = create_token(tmp_path / "tokens", "machine", "admin")  # an admin token: still no GitHub login
    assert post_form(client, "/login", {"token": token}).status_code == 302
    for answer in (client.get(f"/link/{code}"), confirm(client, code)):
        page = answer.get_data(as_text=True)
        assert answer.status_code == 403 and "Linking needs Sign in with GitHub" in page
        assert f'href="/login/github?next=/link/{code}"' in page
    assert redis_client.exists(keys.chat_link_code(code)) == 1  # still usable once they sign in with GitHub


# --- what a link allows on /rooms ------------------------------------------------------------------

REFUSED_NOT_ADMIN = ("or a linked chat admin; your linked chat user {who} is not one (MERGE_HOLD_CHAT_ADMINS).")


@pytest.mark.parametrize(("user", "team", "target", "outcome"), [
    ("U0DANA", TEAM, "acme", "Froze acme: incident 4711."),
    ("U0DANA", TEAM, WIDGETS, "Froze acme/widgets: incident 4711."),
    ("U0DANA", TEAM, f"{GADGETS}@release/*", "Froze acme/gadgets@release/*: incident 4711."),
    ("U0FRED", TEAM, "acme", "Freezing acme needs admin access to every repository of acme on GitHub, "
                             + REFUSED_NOT_ADMIN.format(who="@fred in Slack workspace acme-eng (T0MERGE1)")),
    ("U0FRED", TEAM, WIDGETS, "Freezing acme/widgets needs admin access to acme/widgets on GitHub, "
                              + REFUSED_NOT_ADMIN.format(who="@fred in Slack workspace acme-eng (T0MERGE1)")),
    # erin is a chat admin only as T0BETA/U0ERIN: the same user id in acme's workspace is not.
    ("U0ERIN", TEAM, "acme", REFUSED_NOT_ADMIN.format(who="@erin in Slack workspace acme-eng (T0MERGE1)")),
    ("U0ERIN", BETA_TEAM, "acme", "Freezing acme needs admin access to every repository of acme on GitHub, or a "
                                  "linked chat admin of a workspace bound to acme; your linked chat user @erin in "
                                  "Slack workspace beta-eng (T0BETA) may act on beta only."),
    ("U0ERIN", BETA_TEAM, WIDGETS, "linked chat admin of a workspace bound to acme; your linked chat user @erin"),
], ids=["admin-org", "admin-repo", "admin-branch", "non-admin-org", "non-admin-repo", "admin-elsewhere",
        "unbound-org", "unbound-repo"])
def test_who_a_link_lets_freeze(site: Flask, world: GitHubEmulator, redis_client: redis.Redis, user: str,
                                team: str, target: str, outcome: str) -> None:
    walt = link(site, world, "walt", user, team)
    page = freeze(walt, target)
    assert outcome in page, page
    allowed = outcome.startswith("Froze")
    holds = [h for key in (keys.room_holds(WIDGETS), keys.room_holds(GADGETS), keys.org_room_holds("acme"))
             for h in room_holds.holds_in(redis_client, key)]
    assert [(h.scope, h.holder, h.origin) for h in holds] == ([(target, "walt", "dashboard")] if allowed else [])
    assert ('action="/rooms/freeze"' in walt.get("/rooms").get_data(as_text=True)) is allowed
    if allowed:  # and what they froze they may thaw, with the button on the page
        assert 'action="/rooms/thaw"' in walt.get("/rooms").get_data(as_text=True)
        assert f"Thawed {target}: lifted 1 hold (@walt)." in act(walt, "/rooms/thaw", {"target": target},
                                                                 page="/rooms")
    else:
        room_holds.place_hold(redis_client, target, holder="ada", holder_id="dashboard:ada", reason="r",
                              origin="dashboard", now=datetime.now(UTC))
        assert "Thawing" in act(walt, "/rooms/thaw", {"target": target}, page="/rooms")
        assert len([h for key in (keys.room_holds(WIDGETS), keys.room_holds(GADGETS), keys.org_room_holds("acme"))
                    for h in room_holds.holds_in(redis_client, key)]) == 1


def test_a_new_link_replaces_the_old_and_unlink_removes_it(site: Flask, world: GitHubEmulator,
                                                            redis_client: redis.Redis) -> None:
    walt = link(site, world, "walt")
    assert "Froze acme/widgets" in freeze(walt, WIDGETS)
    wendy = link(site, world, "wendy")  # dana links again, to wendy: walt's link is gone
    assert "run /hold link in chat" in freeze(walt, GADGETS)
    assert "Froze acme/gadgets" in freeze(wendy, GADGETS)

    link(site, world, "wendy", "U0FRED")  # wendy links another chat user: dana's side is gone too
    assert "@fred in Slack workspace acme-eng (T0MERGE1) is not one" in freeze(wendy, "acme")
    assert slash(site, "unlink") == "This chat user is not linked to a GitHub login; there is nothing to unlink."

    assert slash(site, "unlink", "U0FRED") == "Unlinked: GitHub @wendy no longer acts on the dashboard as this " \
                                              "chat user."
    assert "or a linked chat admin — run /hold link in chat" in freeze(wendy, "acme")
    assert "Your GitHub login is linked" not in wendy.get("/rooms").get_data(as_text=True)
    assert [e["login"] for e in events(redis_client, "chat.linked")] == ["walt", "wendy", "wendy"]
    [gone] = events(redis_client, "chat.unlinked")
    assert (gone["login"], gone["user_id"]) == ("wendy", "U0FRED")
    assert redis_client.hgetall(keys.CHAT_LINKS) == {}


def test_a_non_admin_is_told_the_link_adds_nothing(site: Flask) -> None:
    reply = slash(site, "link", "U0FRED")
    assert f"{PUBLIC}/link/" in reply and "Note: you are not a merge-hold chat admin" in reply


@pytest.mark.parametrize(("text", "answer"), [
    ("help", "/hold link: a one-time dashboard link"),
    ("help", "/hold unlink: undo that tie"),
    ("link now", "link takes nothing after it; unexpected 'now'"),
    ("unlink all", "unlink takes nothing after it"),
])
def test_chat_help_and_mistakes(site: Flask, redis_client: redis.Redis, text: str, answer: str) -> None:
    assert answer in slash(site, text)
    assert redis_client.keys("mh:{chat-links}*") == []


def test_mattermost_links_too(site: Flask, world: GitHubEmulator, redis_client: redis.Redis) -> None:
    form = {"channel_id": "jux16pkewjrkfj3ehep1psxyxc", "channel_name": "town-square", "command": "/hold",
            "response_url": "", "team_domain": "acme", "team_id": MM_TEAM, "text": "link", "user_id": MM_USER,
            "user_name": "somename", "token": MATTERMOST_TOKEN}
    answer = site.test_client().post("/chat/mattermost", data=urlencode(form).encode(),
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 200 and answer.json is not None and answer.json["response_type"] == "ephemeral"
    code = code_of(answer.json["text"])
    walt = browser(site, world, "walt")
    assert f"@somename in Mattermost team acme ({MM_TEAM})" in walt.get(f"/link/{code}").get_data(as_text=True)
    assert confirm(walt, code).status_code == 302
    assert "Froze acme: incident 4711." in freeze(walt, "acme")
