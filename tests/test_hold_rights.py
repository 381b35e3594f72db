"""One permission model for room holds (issue 24 items 1 and 2), driven through every surface.

Every (actor x the hold's door x scope x surface) cell, end to end over HTTP with Flask's test client, the
GitHub sign-in at the emulator, signed Slack commands run by a real rq worker, and the real Redis. The
expectations are this file's own table (`LIFTS`, `PLACES`), written from the README's permission table,
not read from `core.hold_rights`; each actor's cells are checked together and every wrong cell is named.

Actors: GitHub users by role (ada admin, mona maintain, walt write), writers linked to a chat admin (lin)
and to a chat user who is no admin (uma); tokens signed in on the page and used over the API (deployer:
hold, ops: admin, and a read token named ``ada`` like the GitHub admin); chat users in Slack (an admin
and a plain user). Doors: a GitHub admin's freeze from the page (``dashboard:ada``), a chat admin's hold
(``slack:…:U0ADMIN``), a pipeline's hold over the API (``api:deployer``). Scopes: a PR, a branch glob, a
repo, the org. Surfaces: the page's Lift and Thaw, chat's ``/unhold``, the API's ``DELETE``; and for
placing, the page's Freeze, chat's ``/hold`` and the API's ``POST``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from core import keys
from core.hold_rights import Actor, ChatUser, Facts, GitHubUser, Token, may_lift
from core.permissions import Permission
from merge_hold.tokens import create as create_token
from state import chat_links, room_holds
from state.chat_links import ChatIdentity
from tests.chat_support import (
    GADGETS,
    SLACK_SECRET,
    TEAM,
    WIDGETS,
    acme,
    drain,
    dry_runtime,
    slack_body,
    slack_headers,
)
from tests.emulator import GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.test_dashboard_actions import csrf
from tests.test_github_login import PUBLIC, sign_in
from tests.webapp_support import make_app

SCOPES = {"pr": f"{WIDGETS}#1", "branch": f"{WIDGETS}@release/*", "repo": WIDGETS, "org": "acme"}
DOORS = {"github-admin": ("dashboard:ada", "ada"), "chat-admin": (f"slack:{TEAM}:U0ADMIN", "cadmin"),
         "api-token": ("api:deployer", "token:deployer")}
"""Where a hold came from: its holder id (the hold id is ``room:{holder id}:{scope}``) and holder."""
ADMINS = ("U0ADMIN",)
TOKENS = {"deployer": "hold", "ops": "admin", "ada": "read"}

ALL, WIDE = frozenset(SCOPES), frozenset({"branch", "repo", "org"})
NONE: frozenset[str] = frozenset()
PR_ONLY = frozenset({"pr"})

LIFTS: dict[str, dict[str, frozenset[str]]] = {
    # a GitHub admin lifts any room hold on what they may freeze; a PR's with maintain
    "ada": {"github-admin": ALL, "chat-admin": ALL, "api-token": ALL},
    "mona": {"github-admin": PR_ONLY, "chat-admin": PR_ONLY, "api-token": PR_ONLY},
    "walt": {"github-admin": NONE, "chat-admin": NONE, "api-token": NONE},
    # a writer linked to a chat admin: exactly what that chat admin may lift in chat — chat's holds
    "lin": {"github-admin": NONE, "chat-admin": ALL, "api-token": NONE},
    # linked to a plain chat user: chat's holds on single PRs, as in chat
    "uma": {"github-admin": NONE, "chat-admin": PR_ONLY, "api-token": NONE},
    # tokens, on the page as over the API: hold lifts its own, admin any, read none
    "token:deployer": {"github-admin": NONE, "chat-admin": NONE, "api-token": ALL},
    "token:ops": {"github-admin": ALL, "chat-admin": ALL, "api-token": ALL},
    "token:ada": {"github-admin": NONE, "chat-admin": NONE, "api-token": NONE},
    # chat lifts only chat's holds: single PRs for anyone allowed, wider for chat admins
    "chat:U0ADMIN": {"github-admin": NONE, "chat-admin": ALL, "api-token": NONE},
    "chat:U0USER": {"github-admin": NONE, "chat-admin": PR_ONLY, "api-token": NONE},
}
PLACES: dict[str, frozenset[str]] = {
    # the page freezes repos, branches and orgs (a PR is held from its page, as the user's own hold)
    "ada": WIDE, "mona": NONE, "walt": NONE, "lin": WIDE, "uma": NONE,
    "token:deployer": ALL, "token:ops": ALL, "token:ada": NONE,  # over the API; a token freezes nothing on the page
    "chat:U0ADMIN": ALL, "chat:U0USER": PR_ONLY,
}
SURFACES = {"github": ("page-lift", "page-thaw"), "token": ("page-lift", "page-thaw", "api-delete"),
            "chat": ("chat-unhold",)}


@pytest.fixture()
def world(github_emulator: GitHubEmulator, redis_client: redis.Redis) -> GitHubEmulator:
    emu = acme(github_emulator, redis_client,
               {"ada": "admin", "mona": "maintain", "walt": "write", "lin": "write", "uma": "write"})
    for login, user in (("lin", "U0ADMIN"), ("uma", "U0USER")):
        identity = ChatIdentity("slack", TEAM, user, user_name=user.lower(), team_name="acme-eng")
        chat_links.consume_code(redis_client, chat_links.issue_code(redis_client, identity), login, datetime.now(UTC))
    return emu


@pytest.fixture()
def site(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path) -> Flask:
    app, _ = make_app(redis_client, tmp_path, github_client_id=CLIENT_ID, github_client_secret=CLIENT_SECRET,
                      github_web_url=world.url, github_api_url=world.url, public_url=PUBLIC,
                      slack_signing_secret=SLACK_SECRET, slack_teams=((TEAM, ("acme",)),), chat_admins=ADMINS)
    for name, scope in TOKENS.items():
        (tmp_path / f"{name}.token").write_text(create_token(tmp_path / "tokens", name, scope, ("acme",)))
    return app


def place(redis_client: redis.Redis, door: str, scope: str) -> str:
    """Only this hold on the org's keys: placed from ``door`` on ``scope``; its id."""
    redis_client.delete(*(keys.room_holds(r) for r in (WIDGETS, GADGETS)), keys.org_room_holds("acme"))
    holder_id, holder = DOORS[door]
    return room_holds.place_hold(redis_client, scope, holder=holder, holder_id=holder_id, reason="r",
                                 origin=door, now=datetime.now(UTC)).id


def present(redis_client: redis.Redis, hold_id: str) -> bool:
    return room_holds.find_hold(redis_client, hold_id) is not None


def page_client(site: Flask, world: GitHubEmulator, tmp_path: Path, actor: str) -> FlaskClient:
    client = site.test_client()
    if actor.startswith("token:"):
        token = (tmp_path / f"{actor.removeprefix('token:')}.token").read_text()
        answer = client.post("/login", data={"token": token, "csrf_token": csrf(client, "/login")})
        assert answer.status_code == 302
    else:
        sign_in(client, world, actor)
    return client


def post(client: FlaskClient, path: str, data: dict[str, str]) -> None:
    answer = client.post(path, data={**data, "csrf_token": csrf(client, "/rooms")})
    assert answer.status_code == 302, (path, answer.status_code)


def lift_on(surface: str, client: FlaskClient, tmp_path: Path, actor: str, hold_id: str, scope: str) -> None:
    if surface == "page-lift":
        post(client, "/holds/lift", {"hold_id": hold_id})
    elif surface == "page-thaw":
        post(client, "/rooms/thaw", {"target": scope})
    else:
        token = (tmp_path / f"{actor.removeprefix('token:')}.token").read_text()
        answer = client.delete(f"/api/v1/holds/{quote(hold_id, safe=':/@')}",
                               headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code in (200, 403), answer.status_code


def mismatches(found: dict[tuple[str, str, str], bool], actor: str) -> list[str]:
    wrong = []
    for (door, scope, surface), lifted in sorted(found.items()):
        # A thaw takes a freeze target (a branch, repo or org); a PR is held and lifted from its page.
        expected = scope in LIFTS[actor][door] and not (surface == "page-thaw" and scope == "pr")
        if lifted != expected:
            wrong.append(f"{actor} {surface} a {door} hold on the {scope}: {'lifted' if lifted else 'kept'}")
    return wrong


@pytest.mark.parametrize("actor", ["ada", "mona", "walt", "lin", "uma", "token:deployer", "token:ops", "token:ada"])
def test_who_lifts_on_the_page_and_over_the_api(site: Flask, world: GitHubEmulator, redis_client: redis.Redis,
                                                tmp_path: Path, actor: str) -> None:
    client = page_client(site, world, tmp_path, actor)
    found: dict[tuple[str, str, str], bool] = {}
    for surface in SURFACES["token" if actor.startswith("token:") else "github"]:
        for door in DOORS:
            for scope, target in SCOPES.items():
                hold_id = place(redis_client, door, target)
                lift_on(surface, client, tmp_path, actor, hold_id, target)
                found[(door, scope, surface)] = not present(redis_client, hold_id)
    assert mismatches(found, actor) == []


@pytest.mark.parametrize("actor", ["chat:U0ADMIN", "chat:U0USER"])
def test_who_lifts_from_chat(site: Flask, redis_client: redis.Redis, redis_url: str, actor: str) -> None:
    rt = dry_runtime(redis_client, redis_url, slack_teams=((TEAM, ("acme",)),), write_rate_per_minute=60_000)
    user = actor.removeprefix("chat:")
    found: dict[tuple[str, str, str], bool] = {}
    for door in DOORS:
        for scope, target in SCOPES.items():
            hold_id = place(redis_client, door, target)
            body = slack_body("/unhold", target, user_id=user, user_name=user.lower())
            assert site.test_client().post("/chat/slack", data=body, headers=slack_headers(body)).status_code == 200
            drain(rt)
            found[(door, scope, "chat-unhold")] = not present(redis_client, hold_id)
    assert mismatches(found, actor) == []


def _placed(redis_client: redis.Redis) -> list[str]:
    return sorted(h.scope for key in (keys.room_holds(WIDGETS), keys.org_room_holds("acme"))
                  for h in room_holds.holds_in(redis_client, key))


@pytest.mark.parametrize("actor", ["ada", "mona", "walt", "lin", "uma", "token:deployer", "token:ops", "token:ada",
                                   "chat:U0ADMIN", "chat:U0USER"])
def test_who_places(site: Flask, world: GitHubEmulator, redis_client: redis.Redis, redis_url: str,
                    tmp_path: Path, actor: str) -> None:
    rt = dry_runtime(redis_client, redis_url, slack_teams=((TEAM, ("acme",)),), write_rate_per_minute=60_000)
    client = None if actor.startswith("chat:") else page_client(site, world, tmp_path, actor)
    wrong = []
    for scope, target in SCOPES.items():
        redis_client.delete(*(keys.room_holds(r) for r in (WIDGETS, GADGETS)), keys.org_room_holds("acme"))
        if actor.startswith("chat:"):
            user = actor.removeprefix("chat:")
            body = slack_body("/hold", f"{target} release week", user_id=user, user_name=user.lower())
            site.test_client().post("/chat/slack", data=body, headers=slack_headers(body))
            drain(rt)
        elif actor.startswith("token:"):
            assert client is not None
            post(client, "/rooms/freeze", {"target": target, "reason": "release week"})
            assert _placed(redis_client) == [], f"{actor} froze {target} on the page"
            token = (tmp_path / f"{actor.removeprefix('token:')}.token").read_text()
            client.post("/api/v1/holds", json={"target": target, "reason": "release week"},
                        headers={"Authorization": f"Bearer {token}"})
        else:
            assert client is not None
            post(client, "/rooms/freeze", {"target": target, "reason": "release week"})
        if (_placed(redis_client) == [target]) != (scope in PLACES[actor]):
            wrong.append(f"{actor} {'placed' if _placed(redis_client) else 'could not place'} a hold on the {scope}")
    assert wrong == []


def test_a_token_named_like_a_github_user_is_not_that_user(site: Flask, world: GitHubEmulator,
                                                           redis_client: redis.Redis, tmp_path: Path) -> None:
    """Row 3: a read token named ``ada`` signed in on the page is ``token:ada`` — in its session, in what it
    may lift, and in the audit log — never the GitHub admin @ada."""
    hold_id = place(redis_client, "github-admin", "acme")
    client = page_client(site, world, tmp_path, "token:ada")
    with client.session_transaction() as state:
        assert state["user"] == "token:ada" and state["kind"] == "token"
    post(client, "/holds/lift", {"hold_id": hold_id})
    post(client, "/rooms/thaw", {"target": "acme"})
    assert present(redis_client, hold_id)
    page = client.get("/rooms").get_data(as_text=True)
    assert "lifted nothing: @ada&#39;s hold stays: token &#39;ada&#39; has scope &#39;read&#39;" in page

    # A hold token lifts its own API hold on /rooms, and the audit log names it token:deployer.
    own = place(redis_client, "api-token", WIDGETS)
    deployer = page_client(site, world, tmp_path, "token:deployer")
    post(deployer, "/holds/lift", {"hold_id": own})
    assert not present(redis_client, own)
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.AUDIT)  # type: ignore[assignment]
    lifted = [json.loads(f[b"data"]) for _, f in entries if f[b"event"] == b"room.lifted"]
    assert [(e["actor"], e["origin"]) for e in lifted] == [("token:deployer", "dashboard")]


# --- the rule's edges, pure --------------------------------------------------------------------------

ADMIN_CHAT = ChatUser("slack", TEAM, "U0ADMIN", ("acme",), admin=True)
FACTS = Facts(managed=(WIDGETS, GADGETS), slack=((TEAM, ("acme",)), ("T0OTHER", ("other",))))


@pytest.mark.parametrize(("actor", "hold_id", "scope", "lifts"), [
    # GitHub logins compare case-insensitively; the holder still needs what placing it again needs
    (GitHubUser("Ada", {WIDGETS: Permission.ADMIN}), f"room:dashboard:ada:{WIDGETS}", WIDGETS, True),
    (GitHubUser("ada", {WIDGETS: Permission.WRITE}), f"room:dashboard:ada:{WIDGETS}", WIDGETS, False),
    # a writer linked to a chat admin lifts their own page freeze, not another's
    (GitHubUser("lin", {}, ADMIN_CHAT), f"room:dashboard:lin:{WIDGETS}", WIDGETS, True),
    (GitHubUser("lin", {}, ADMIN_CHAT), f"room:dashboard:ada:{WIDGETS}", WIDGETS, False),
    # token names are exact: `Deploy` is not `deploy`
    (Token("deploy", "hold"), f"room:api:deploy:{WIDGETS}", WIDGETS, True),
    (Token("Deploy", "hold"), f"room:api:deploy:{WIDGETS}", WIDGETS, False),
    # a token named like a GitHub user owns none of that user's holds
    (Token("ada", "hold"), f"room:dashboard:ada:{WIDGETS}", WIDGETS, False),
    (Token("ops", "admin", ("other",)), f"room:api:deploy:{WIDGETS}", WIDGETS, False),  # outside its orgs
    # chat: only holds placed from a workspace bound to the scope's org
    (ADMIN_CHAT, f"room:slack:T0OTHER:U9:{WIDGETS}", WIDGETS, False),
    (ADMIN_CHAT, f"room:mattermost:{TEAM}:U9:{WIDGETS}", WIDGETS, False),  # the binding is per platform
    (ChatUser("slack", TEAM, "U0ADMIN", ("other",), admin=True), f"room:slack:{TEAM}:U9:{WIDGETS}", WIDGETS,
     False),  # a workspace acts only on its own orgs
    (ChatUser("slack", TEAM, "U1", ("acme",), allowed=False), f"room:slack:{TEAM}:U9:{WIDGETS}#1",
     f"{WIDGETS}#1", False),  # off the allow-list
    # an org: admin on every managed repo of it
    (GitHubUser("wendy", {WIDGETS: Permission.ADMIN}), "room:api:deploy:acme", "acme", False),
    (GitHubUser("ada", {WIDGETS: Permission.ADMIN, GADGETS: Permission.ADMIN}), "room:api:deploy:acme", "acme",
     True),
])
def test_the_rules_edges(actor: Actor, hold_id: str, scope: str, lifts: bool) -> None:
    assert may_lift(actor, hold_id, scope, FACTS) is lifts
