"""`merge-hold dev`'s demo sign-in (issue 16 item 3): pretend GitHub users with printed permissions,
offered only in a dry run without an App and only on loopback — refused by the settings, by
`merge-hold serve`, by `merge-hold dev` and by the web app itself, each tested."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from redis import Redis

from app import create_app
from core import demo_users, keys
from foundation.settings import Settings, SettingsError, from_env
from merge_hold import dev, serve
from tests.emulator import private_key_pem
from tests.webapp_support import csrf_of, hold, settings, store_verdict

REPO = "acme/widgets"


def demo_app(redis: Redis, redis_url: str, tmp_path: Path, **overrides: Any) -> Flask:
    return create_app(settings(redis_url, tmp_path, **{"demo_signin": True, "dry_run": True, **overrides}),
                      redis=redis)


def sign_in(client: FlaskClient, login: str, **environ: str) -> Any:
    return client.post("/login/demo", data={"login": login, "csrf_token": csrf_of(client)},
                       environ_base=environ)


@pytest.fixture()
def seeded(redis_client: Redis) -> Redis:
    store_verdict(redis_client, REPO, 3, (hold("carol", "waiting for the release"),))
    store_verdict(redis_client, "acme/gadgets", 1)
    store_verdict(redis_client, "other/thing", 9, (hold("zed", "elsewhere"),))
    return redis_client


# --- the roster ---------------------------------------------------------------------------------------

def test_the_roster_has_a_writer_a_maintainer_an_admin_and_a_reader() -> None:
    repos = [REPO, "acme/gadgets", "other/thing"]
    assert demo_users.roles("alice", repos) == {REPO: "write"}
    assert demo_users.roles("maint", repos) == {REPO: "maintain"}
    assert demo_users.roles("ada", repos) == {REPO: "admin", "acme/gadgets": "admin"}  # an org admin
    assert demo_users.roles("rita", repos) == {REPO: "read"}
    assert demo_users.roles("mallory", repos) == {}
    assert all(user.login in demo_users.table() for user in demo_users.DEMO_USERS)


# --- refused: an App configured, or not loopback --------------------------------------------------------

def test_the_settings_refuse_the_demo_next_to_app_credentials() -> None:
    with pytest.raises(SettingsError, match="MERGE_HOLD_DEMO_SIGNIN"):
        from_env({"MERGE_HOLD_DEMO_SIGNIN": "1", "GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": private_key_pem()})
    assert from_env({"MERGE_HOLD_DEMO_SIGNIN": "1"}).demo_signin is True


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.3.4.5", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("merge-hold.example", False), ("", False),
])
def test_loopback_host(host: str, loopback: bool) -> None:
    assert serve.loopback_host(host) is loopback


def test_serve_refuses_the_demo_on_another_address(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MERGE_HOLD_DEMO_SIGNIN", "1")
    assert serve.main(["--host", "0.0.0.0", "--port", "1"]) == 78
    assert "loopback only" in capsys.readouterr().err


def test_dev_offers_the_demo_only_in_a_dry_run_on_loopback(tmp_path: Path) -> None:
    plain = Settings()
    assert dev.demo_refusal(plain, tmp_path, "127.0.0.1") is None
    with_app = dataclasses.replace(plain, github_app_id=1, github_private_key=private_key_pem(), dry_run=True)
    assert "GitHub App is configured" in str(dev.demo_refusal(with_app, tmp_path, "127.0.0.1"))
    assert "loopback only" in str(dev.demo_refusal(plain, tmp_path, "0.0.0.0"))
    (tmp_path / dev.APP_FILE).write_text("{}")  # a completed /setup
    assert "was set up" in str(dev.demo_refusal(plain, tmp_path, "127.0.0.1"))


@pytest.mark.parametrize("demo", [True, False])
def test_dev_decides_the_demo_whatever_the_shell_says(tmp_path: Path, demo: bool) -> None:
    env = dev.child_env({"MERGE_HOLD_DEMO_SIGNIN": "1"}, tmp_path, redis_url="redis://127.0.0.1:1/0",
                        url="http://127.0.0.1:9", dry_run=True, demo=demo)
    assert env["MERGE_HOLD_DEMO_SIGNIN"] == ("1" if demo else "0")
    assert ("SLACK_SIGNING_SECRET" in env) is demo
    if demo:
        assert env["MERGE_HOLD_SLACK_TEAMS"] == "TDEMO=acme" and env["MERGE_HOLD_CHAT_ADMINS"] == "slack:TDEMO/UDEMO"
        assert env["SLACK_SIGNING_SECRET"] == (tmp_path / "slack-signing-secret").read_text().strip()
        from_env({k: v for k, v in env.items() if k.startswith(("MERGE_HOLD_", "SLACK_", "REDIS_"))})


def test_the_banner_prints_the_users_or_why_not(tmp_path: Path) -> None:
    shown = dev.banner("http://127.0.0.1:8000", "mhk_x", "r", "g", tmp_path, dry_run=True, demo=True)
    assert "/login/demo" in shown and "ada" in shown and "admin of every acme repo" in shown
    assert "simulate chat" in shown and "/hold acme/widgets release freeze" in shown
    refused = dev.banner("http://0.0.0.0:8000", "mhk_x", "r", "g", tmp_path, dry_run=True, demo=True,
                         demo_refusal="--host 0.0.0.0 is reachable from other machines")
    assert "not offered: --host 0.0.0.0" in refused and "/login/demo" not in refused


WEB_REFUSALS: list[tuple[str, dict[str, Any], dict[str, str], dict[str, str]]] = [
    # (why, settings overrides, request environ, headers)
    ("the setting is off", {"demo_signin": False}, {}, {}),
    ("App credentials (built without the settings' check)", {"github_app_id": 1}, {}, {}),
    ("a request from another machine", {}, {"REMOTE_ADDR": "192.0.2.7"}, {}),
    ("a request forwarded by a proxy", {}, {}, {"X-Forwarded-For": "192.0.2.7"}),
]


@pytest.mark.parametrize(("overrides", "environ", "headers"), [r[1:] for r in WEB_REFUSALS],
                         ids=[r[0] for r in WEB_REFUSALS])
def test_the_web_app_refuses_the_demo(seeded: Redis, redis_url: str, tmp_path: Path, overrides: dict[str, Any],
                                      environ: dict[str, str], headers: dict[str, str]) -> None:
    if "github_app_id" in overrides:
        overrides = {**overrides, "github_private_key": private_key_pem()}
    client = demo_app(seeded, redis_url, tmp_path, **overrides).test_client()
    # not found; or, to a request through a proxy, a refusal naming its header (tests/test_web_trust.py)
    assert client.get("/login/demo", environ_base=environ, headers=headers).status_code == (
        403 if headers else 404)
    answer = client.post("/login/demo", data={"login": "ada", "csrf_token": csrf_of(client)},
                         environ_base=environ, headers=headers)
    assert answer.status_code in (403, 404)  # CSRF first for a stranger, else not found
    assert "Sign in as a demo user" not in client.get("/login", environ_base=environ,
                                                      headers=headers).get_data(as_text=True)


def test_a_completed_setup_ends_the_demo_and_its_sessions(seeded: Redis, redis_url: str, tmp_path: Path) -> None:
    client = demo_app(seeded, redis_url, tmp_path).test_client()
    assert sign_in(client, "ada").status_code == 302
    assert client.get(f"/{REPO}/pull/3").status_code == 200
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / dev.APP_FILE).write_text("{}")  # /setup created an App since
    assert client.get(f"/{REPO}/pull/3").status_code == 302  # back to the login page
    assert client.get("/login/demo").status_code == 404


# --- the demo user is a GitHub user to every check --------------------------------------------------------

def test_sign_in_lists_the_users_and_fills_the_github_viewer(seeded: Redis, redis_url: str, tmp_path: Path) -> None:
    client = demo_app(seeded, redis_url, tmp_path).test_client()
    login_page = client.get("/login").get_data(as_text=True)
    assert "Sign in as a demo user" in login_page
    listing = client.get("/login/demo").get_data(as_text=True)
    for user in demo_users.DEMO_USERS:
        assert f"Sign in as {user.login}" in listing and str(escape(user.summary)) in listing
    assert client.post("/login/demo", data={"login": "mallory", "csrf_token": csrf_of(client)}).status_code == 400
    answer = sign_in(client, "alice")
    assert answer.status_code == 302
    with client.session_transaction() as session:
        assert (session["kind"], session["user"], session["demo"]) == ("github", "alice", True)
        sid = session["sid"]
    assert b'"demo": true' in (seeded.get(keys.web_session(sid)) or b"")
    index = client.get("/").get_data(as_text=True)
    assert "waiting for the release" in index and "elsewhere" not in index  # only her repos
    page = client.get(f"/{REPO}/pull/3").get_data(as_text=True)
    assert 'id="reason"' in page, "a writer gets the Hold form"
    assert "/pull/3/unhold" not in page, "carol's hold is not hers to lift: no Lift form"
    assert "Lifting another&#39;s hold needs maintain access to acme/widgets" in page  # and she is told why
    assert client.get("/other/thing/pull/9").status_code == 404


@pytest.mark.parametrize(("login", "may_hold", "may_lift_carol"), [
    ("alice", True, False), ("maint", True, True), ("ada", True, True), ("rita", False, False),
])
def test_each_demo_user_gets_the_pages_their_role_gives(seeded: Redis, redis_url: str, tmp_path: Path,
                                                        login: str, may_hold: bool, may_lift_carol: bool) -> None:
    client = demo_app(seeded, redis_url, tmp_path).test_client()
    sign_in(client, login)
    page = client.get(f"/{REPO}/pull/3").get_data(as_text=True)
    assert ('id="reason"' in page) is may_hold
    assert ('value="carol"' in page) is may_lift_carol
    # whoever may not act is told what would let them (rita: read access)
    assert ("You have read access to acme/widgets: holding this PR needs write access" in page) is not may_hold
    assert ("Lifting another&#39;s hold needs maintain access" in page) is not may_lift_carol


def test_a_demo_record_is_never_a_github_sign_in(seeded: Redis, redis_url: str, tmp_path: Path) -> None:
    """With the demo off, a cookie naming a demo session record does not sign anyone in as GitHub."""
    client = demo_app(seeded, redis_url, tmp_path, demo_signin=False).test_client()
    seeded.set(keys.web_session("s1"), '{"login": "ada", "demo": true}')
    with client.session_transaction() as session:
        session.update(user="ada", kind="github", sid="s1")  # no demo flag: read as a GitHub session
    assert client.get(f"/{REPO}/pull/3").status_code == 302
