"""Sign in with GitHub (issue #9 item 1) against the emulator's OAuth web flow: state checked, the token
kept server-side, and a user sees only the managed repos they can read, cached at most ten minutes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import redis
import requests
from flask import Flask
from flask.testing import FlaskClient

from core import keys
from tests.chat_support import manage
from tests.emulator import GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.webapp_support import hold, make_app, post_form, store_verdict

PUBLIC = "https://merge-hold.example"


@pytest.fixture()
def world(github_emulator: GitHubEmulator, redis_client: redis.Redis) -> GitHubEmulator:
    emu = github_emulator
    emu.add_installation(1, "acme")
    emu.add_installation(2, "beta")
    for repo, inst in (("acme/widgets", 1), ("acme/secret", 1), ("beta/tools", 2), ("acme/unmanaged", 1)):
        emu.add_repo(repo, installation_id=inst)
    emu.set_permission("acme/widgets", "alice", "write")
    emu.set_permission("beta/tools", "alice", "read")
    emu.set_permission("acme/unmanaged", "alice", "admin")
    emu.set_permission("acme/secret", "bob", "write")
    for repo in ("acme/widgets", "acme/secret", "beta/tools"):
        manage(redis_client, repo)
        store_verdict(redis_client, repo, 1, (hold("carol", f"held in {repo}"),))
    return emu


def oauth_app(redis_client: redis.Redis, tmp_path: Path, emu: GitHubEmulator, **overrides: Any) -> Flask:
    settings: dict[str, Any] = {"github_client_id": CLIENT_ID, "github_client_secret": CLIENT_SECRET,
                                "github_web_url": emu.url, "github_api_url": emu.url, "public_url": PUBLIC}
    settings.update(overrides)
    app, _ = make_app(redis_client, tmp_path, **settings)
    return app


def sign_in(client: FlaskClient, emu: GitHubEmulator, login: str, next_path: str | None = None) -> str:
    """The whole dance: our redirect, GitHub's approval, our callback. Returns where we land."""
    emu.sign_in_as(login)
    start = client.get("/login/github", query_string={"next": next_path} if next_path else None)
    assert start.status_code == 302
    authorize = start.headers["Location"]
    assert authorize.startswith(f"{emu.url}/login/oauth/authorize?")
    query = parse_qs(urlsplit(authorize).query)
    assert query["client_id"] == [CLIENT_ID] and query["redirect_uri"] == [f"{PUBLIC}/login/github/callback"]
    approved = requests.get(authorize, allow_redirects=False, timeout=10)
    assert approved.status_code == 302
    back = urlsplit(approved.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == f"{PUBLIC}/login/github/callback"
    landed = client.get(f"{back.path}?{back.query}")
    assert landed.status_code == 302, landed.get_data(as_text=True)
    return landed.headers["Location"]


def test_a_user_sees_only_the_managed_repos_they_can_read(world: GitHubEmulator, redis_client: redis.Redis,
                                                          tmp_path: Path) -> None:
    client = oauth_app(redis_client, tmp_path, world).test_client()
    assert sign_in(client, world, "alice", "/acme/widgets/pull/1") == "/acme/widgets/pull/1"
    page = client.get("/").get_data(as_text=True)
    assert "held in acme/widgets" in page and "held in beta/tools" in page
    assert "acme/secret" not in page and "acme/unmanaged" not in page
    assert client.get("/acme/widgets/pull/1").status_code == 200
    assert client.get("/acme/secret/pull/1").status_code == 404  # not even whether it exists
    assert "alice" in client.get("/").get_data(as_text=True)

    bob = oauth_app(redis_client, tmp_path / "bob", world).test_client()
    sign_in(bob, world, "bob")
    page = bob.get("/").get_data(as_text=True)
    assert "held in acme/secret" in page and "acme/widgets" not in page and "beta/tools" not in page


def test_the_token_stays_server_side_and_the_repos_are_cached_ten_minutes(
        world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path) -> None:
    client = oauth_app(redis_client, tmp_path, world).test_client()
    sign_in(client, world, "alice")
    cookie = client.get_cookie("merge_hold_session")
    assert cookie is not None and "ghu_" not in cookie.value
    assert not any(token in cookie.value for token in world.user_tokens)
    client.get("/")
    assert 0 < int(redis_client.ttl(keys.user_repos("alice"))) <= 600
    cached = json.loads(redis_client.get(keys.user_repos("alice")) or b"{}")
    assert cached == {"acme/widgets": "write", "beta/tools": "read"}
    world.set_permission("beta/tools", "alice", "none")  # access revoked at GitHub
    assert "beta/tools" in client.get("/").get_data(as_text=True)  # within the cache
    redis_client.delete(keys.user_repos("alice"))  # ten minutes later
    assert "beta/tools" not in client.get("/").get_data(as_text=True)
    assert post_form(client, "/logout", {}).status_code == 302
    assert redis_client.keys(keys.web_session("*")) == []
    assert client.get("/").status_code == 302


@pytest.mark.parametrize("case", ["no state", "wrong state", "no session", "replayed code", "denied"])
def test_the_state_and_code_are_checked(world: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path,
                                        case: str) -> None:
    app = oauth_app(redis_client, tmp_path, world)
    client = app.test_client()
    world.sign_in_as("alice")
    authorize = client.get("/login/github").headers["Location"]
    back = urlsplit(requests.get(authorize, allow_redirects=False, timeout=10).headers["location"])
    params = {k: v[0] for k, v in parse_qs(back.query).items()}
    if case == "no state":
        params.pop("state")
    elif case == "wrong state":
        params["state"] = params["state"][:-1] + "x"
    elif case == "no session":
        client = app.test_client()  # an attacker's link followed in another browser
    elif case == "replayed code":
        assert client.get(back.path, query_string=params).status_code == 302
        client = app.test_client()
        client.get("/login/github")
        with client.session_transaction() as state:
            params["state"] = state["oauth_state"]
    elif case == "denied":
        params = {"error": "access_denied", "state": params["state"]}
    answer = client.get(back.path, query_string=params)
    assert answer.status_code in (400, 401, 502), case
    assert "sign" in answer.get_data(as_text=True).lower()
    assert client.get("/").status_code == 302, case


def test_without_an_oauth_client_the_token_login_remains(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    assert "/login/github" not in page and "merge-hold dev" in page
    assert client.get("/login/github").status_code == 404
    assert post_form(client, "/login", {"token": token}).status_code == 302


def test_the_login_page_offers_github_when_configured(world: GitHubEmulator, redis_client: redis.Redis,
                                                      tmp_path: Path) -> None:
    page = oauth_app(redis_client, tmp_path, world).test_client().get("/login?next=/rooms").get_data(as_text=True)
    assert "Sign in with GitHub" in page and 'href="/login/github?next=/rooms"' in page
