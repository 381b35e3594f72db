"""`/setup`: the GitHub App manifest flow against the emulator's conversion endpoint, with real Redis;
and `merge-hold setup --print` as a real process."""

from __future__ import annotations

import html
import json
import os
import re
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from core.app_manifest import manifest
from foundation.settings import Settings
from tests.emulator import GitHubEmulator
from tests.emulator.identity import rest_fixture

WEB = "https://github.example"
PUBLIC = "https://merge-hold.acme.test"
REMOTE = {"REMOTE_ADDR": "203.0.113.7"}


def conversion() -> dict[str, Any]:
    answer: dict[str, Any] = dict(rest_fixture("app-manifest-conversion.201.json"))
    return answer


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture()
def web(redis_client: redis.Redis, github_emulator: GitHubEmulator, folder: Path) -> FlaskClient:
    settings = Settings(redis_url="redis://unused", github_webhook_secret=None, github_api_url=github_emulator.url,
                        github_web_url=WEB, public_url=PUBLIC, data_dir=str(folder), secret_key="k")
    app: Flask = create_app(settings, redis=redis_client)
    return app.test_client()


def start(client: FlaskClient, org: str = "", **kwargs: Any) -> tuple[str, dict[str, Any]]:
    """POST /setup: the form GitHub receives (its action and the manifest)."""
    # The form carries a CSRF token: read it from the page a browser would have shown.
    token = kwargs.get("data", {}).get("token")
    form = client.get("/setup", query_string={"token": token} if token else None,
                      **{k: v for k, v in kwargs.items() if k != "data"})
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    data = {"org": org, **({"csrf_token": html.unescape(csrf[1])} if csrf else {}), **kwargs.pop("data", {})}
    page = client.post("/setup", data=data, **kwargs)
    assert page.status_code == 200, page.text
    action = html.unescape(re.search(r'<form method="post" action="([^"]+)"', page.text)[1])  # type: ignore[index]
    value = html.unescape(re.search(r'name="manifest" value="([^"]*)"', page.text)[1])  # type: ignore[index]
    return action, json.loads(value)


def test_the_manifest_posted_is_this_servers(web: FlaskClient) -> None:
    assert "Organization that will own the App" in web.get("/setup").text
    action, sent = start(web, "acme")
    assert action.startswith(f"{WEB}/organizations/acme/settings/apps/new?state=")
    assert sent == manifest(PUBLIC)
    assert sent["hook_attributes"]["url"] == f"{PUBLIC}/webhooks/github"
    assert sent["redirect_url"] == f"{PUBLIC}/setup"
    personal, _ = start(web)
    assert personal.startswith(f"{WEB}/settings/apps/new?state=")


def test_code_is_exchanged_and_credentials_stored_0600(web: FlaskClient, github_emulator: GitHubEmulator,
                                                      folder: Path, redis_client: redis.Redis) -> None:
    action, _ = start(web, "acme")
    state = action.split("state=", 1)[1]
    github_emulator.add_manifest_code("c0de", conversion())
    done = web.get(f"/setup?code=c0de&state={state}")
    assert done.status_code == 200, done.text
    assert "/apps/octoapp/installations/new" in done.text and "Install it on your org" in done.text
    assert github_emulator.count("POST", r"^/app-manifests/c0de/conversions$") == 1
    for name in ("github-app.pem", "webhook-secret", "github-client-secret", "app.env", "github-app.json"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    env = dict(line.split("=", 1) for line in (folder / "app.env").read_text().splitlines())
    assert env["GITHUB_APP_ID"] == "1" and env["MERGE_HOLD_APP_SLUG"] == "octoapp"
    assert env["GITHUB_WEBHOOK_SECRET"] == conversion()["webhook_secret"]
    assert Path(env["GITHUB_PRIVATE_KEY_PATH"]).read_text().startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert "pem" not in json.loads((folder / "github-app.json").read_text())
    assert redis_client.get("mh:setup:token") is None, "the one-time token is spent"
    # Closed once an App exists, whoever asks: no form, no conversion. From this machine, a read-only
    # page says how far the bootstrap is (none here); from elsewhere, nothing at all.
    after = web.get("/setup")
    assert after.status_code == 200 and "<form" not in after.text and "No bootstrap under way" in after.text
    assert web.get(f"/setup?code=c0de&state={state}").status_code == 404
    assert web.post("/setup", data={"org": "acme"}).status_code in (400, 404)  # CSRF refuses first; else 404
    assert web.get("/setup", environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 404
    assert web.get("/setup", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 404


@pytest.mark.parametrize(("state", "status"), [("", 403), ("forged", 403)])
def test_redirect_needs_a_state_this_server_issued(web: FlaskClient, github_emulator: GitHubEmulator,
                                                   state: str, status: int) -> None:
    github_emulator.add_manifest_code("c0de", conversion())
    assert web.get(f"/setup?code=c0de&state={state}").status_code == status
    assert github_emulator.count("POST", r"/conversions$") == 0


def test_state_is_one_use_and_a_spent_code_fails_cleanly(web: FlaskClient) -> None:
    action, _ = start(web)
    state = action.split("state=", 1)[1]
    assert web.get(f"/setup?code=never-issued&state={state}").status_code == 502
    assert web.get(f"/setup?code=never-issued&state={state}").status_code == 403


def test_only_loopback_or_the_setup_token(web: FlaskClient, folder: Path, redis_client: redis.Redis) -> None:
    raw = redis_client.get("mh:setup:token")
    token = raw.decode() if isinstance(raw, bytes) else ""
    assert len(token) >= 24
    assert not folder.exists(), "nothing is written before the App exists"
    assert web.get("/setup", environ_base=REMOTE).status_code == 403
    assert web.get("/setup?token=wrong", environ_base=REMOTE).status_code == 403
    assert web.get(f"/setup?token={token}", environ_base=REMOTE).status_code == 200
    # a reverse proxy on loopback forwards remote clients: they need the token too
    assert web.get("/setup", headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 403
    # refused either way: without a form token (400) or, with one, from a remote address (403)
    assert web.post("/setup", data={"org": "acme"}, environ_base=REMOTE).status_code in (400, 403)
    start(web, "acme", data={"token": token}, environ_base=REMOTE)


@pytest.mark.parametrize("org", ["-acme", "acme/evil", "a" * 40, "acme org", "<script>"])
def test_bad_org_names_are_refused(web: FlaskClient, org: str) -> None:
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', web.get("/setup").text)
    assert csrf is not None
    refused = web.post("/setup", data={"org": org, "csrf_token": html.unescape(csrf[1])})
    assert refused.status_code == 400 and "is not a GitHub organization name" in refused.text


def test_closed_when_the_environment_has_an_app(redis_client: redis.Redis, tmp_path: Path) -> None:
    from tests.emulator import APP_ID, PRIVATE_KEY_PEM

    settings = Settings(github_app_id=APP_ID, github_private_key=PRIVATE_KEY_PEM, data_dir=str(tmp_path / "d"))
    client = create_app(settings, redis=redis_client).test_client()
    page = client.get("/setup")  # from this machine: the read-only page of the bootstrap's progress
    assert page.status_code == 200 and "<form" not in page.text and "manifest" not in page.text
    assert client.get("/setup", environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 404
    assert not (tmp_path / "d").exists(), "nothing written when an App is configured"


def test_merge_hold_setup_print_writes_nothing_and_exits(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_", "REDIS_"))}
    env.update(GITHUB_API_URL=github_emulator.url, GITHUB_WEB_URL=WEB, MERGE_HOLD_DATA_DIR=str(tmp_path / "d"))
    proc = subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "setup", "--print", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"(http://\S+/setup)", line)[1]  # type: ignore[index]
        data = b"org=acme"
        with urllib.request.urlopen(urllib.request.Request(url, data=data, method="POST"), timeout=10) as page:
            state = re.search(r"state=([^\"&]+)", html.unescape(page.read().decode()))[1]  # type: ignore[index]
        github_emulator.add_manifest_code("c0de", conversion())
        with urllib.request.urlopen(f"{url}?code=c0de&state={state}", timeout=10) as done:
            assert "printed on the server" in done.read().decode()
        out, _err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0
    assert "GITHUB_APP_ID=1" in out and "MERGE_HOLD_APP_SLUG=octoapp" in out
    assert "-----BEGIN RSA PRIVATE KEY-----" in out
    written = [p.name for p in (tmp_path / "d").iterdir()] if (tmp_path / "d").exists() else []
    assert written == [], "--print stores nothing"


def test_dry_run_needs_no_token_and_accepts_none(redis_client: redis.Redis, tmp_path: Path) -> None:
    client = create_app(Settings(dry_run=True, data_dir=str(tmp_path / "d")), redis=redis_client).test_client()
    assert redis_client.get("mh:setup:token") is None
    assert client.get("/setup").status_code == 200
    assert client.get("/setup?token=", environ_base=REMOTE).status_code == 403



def test_the_manifest_asks_for_administration_write_only_in_ruleset_mode() -> None:
    from core.app_manifest import manifest

    assert manifest(PUBLIC)["default_permissions"]["administration"] == "read"
    assert manifest(PUBLIC, freeze_mode="ruleset")["default_permissions"]["administration"] == "write"
    # One org ruleset per org freeze where the plan has them: asked for, not required (doctor reports the mode).
    assert manifest(PUBLIC, freeze_mode="ruleset")["default_permissions"]["organization_administration"] == "write"
    assert "organization_administration" not in manifest(PUBLIC)["default_permissions"]
