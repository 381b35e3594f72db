"""The rest of issue 24's table (item 5), one test per row, each through the real web app: CSRF by route
(an owner named ``api``, ``chat`` or ``webhooks``), sign-out ends a token sign-in server-side, "local"
refuses every forwarding header and says so, no two gunicorn workers without one secret key, 400s for
a malformed ``before`` and over-deep JSON, and the signature header checked before the body is read."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import redis
from rq import Queue

from app import create_app
from core import keys
from core.comment_rules import DASHBOARD_JOB
from merge_hold.redis_server import free_port
from tests.chat_support import manage
from tests.emulator import GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.test_github_login import PUBLIC, sign_in
from tests.webapp_support import csrf_of, delivery_headers, fixture_body, make_app, post_form, serving, settings

ROOT = Path(__file__).resolve().parent.parent

# --- row 7: CSRF by route, not by path prefix ------------------------------------------------------


@pytest.mark.parametrize("owner", ["api", "chat", "webhooks"])
def test_a_form_of_an_owner_named_like_a_machine_path_needs_its_csrf_token(
        github_emulator: GitHubEmulator, redis_client: redis.Redis, tmp_path: Path, owner: str) -> None:
    repo = f"{owner}/widgets"
    github_emulator.add_installation(1, owner)
    github_emulator.add_repo(repo, installation_id=1)
    github_emulator.set_permission(repo, "ada", "admin")
    manage(redis_client, repo, {1: "main"})
    app, token = make_app(redis_client, tmp_path, github_client_id=CLIENT_ID, github_client_secret=CLIENT_SECRET,
                          github_web_url=github_emulator.url, github_api_url=github_emulator.url, public_url=PUBLIC)
    client = app.test_client()
    sign_in(client, github_emulator, "ada")
    forged = client.post(f"/{repo}/pull/1/hold", data={"reason": "forged by another site"})
    assert forged.status_code == 400 and "did not come from this site" in forged.get_data(as_text=True)
    assert client.post(f"/{repo}/pull/1/unhold", data={"holder": "ada"}).status_code == 400
    queue = Queue("merge-hold-test", connection=redis_client)
    assert [job.func_name for job in queue.jobs] == []
    # The machine routes under those paths stay exempt: their callers sign or carry a bearer token.
    placed = client.post("/api/v1/holds", json={"target": f"{repo}#1", "reason": "deploy"},
                         headers={"Authorization": f"Bearer {token}"})
    assert placed.status_code == 201
    assert client.post(f"/{repo}/pull/1/hold", data={"reason": "mine", "csrf_token": csrf_of(client)}) \
        .status_code == 302
    assert DASHBOARD_JOB in [job.func_name for job in queue.jobs]


# --- row 8: sign-out ends a token sign-in ----------------------------------------------------------


def test_sign_out_ends_a_token_sign_in_for_every_copy_of_its_cookie(redis_client: redis.Redis,
                                                                    tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    client = app.test_client()
    assert post_form(client, "/login", {"token": token}).status_code == 302
    cookie = client.get_cookie("merge_hold_session")
    assert cookie is not None and client.get("/").status_code == 200
    assert post_form(client, "/logout", {}).status_code == 302
    thief = app.test_client()
    thief.set_cookie("merge_hold_session", cookie.value)  # a copy taken before sign-out
    answer = thief.get("/")
    assert answer.status_code == 302 and answer.headers["Location"].startswith("/login")
    assert not redis_client.keys("mh:web:session:*")


# --- row 9: "local" refuses every forwarding header and says so -----------------------------------

FORWARDING = [("Forwarded", "for=192.0.2.7;proto=https"), ("X-Forwarded-For", "192.0.2.7"),
              ("X-Forwarded-Host", "merge-hold.example"), ("X-Real-IP", "192.0.2.7"),
              ("True-Client-IP", "192.0.2.7"), ("CF-Connecting-IP", "192.0.2.7"), ("Via", "1.1 proxy")]


@pytest.mark.parametrize(("header", "value"), FORWARDING, ids=[h for h, _ in FORWARDING])
def test_setup_and_the_demo_are_local_only_without_any_proxy(redis_client: redis.Redis, tmp_path: Path,
                                                             header: str, value: str) -> None:
    app = create_app(settings("redis://unused", tmp_path, github_webhook_secret=None), redis=redis_client)
    client = app.test_client()
    assert client.get("/setup").status_code == 200  # loopback, no proxy
    refused = client.get("/setup", headers={header: value})
    assert refused.status_code == 403 and f"it carries {header}".lower() in refused.get_data(as_text=True).lower()

    demo = create_app(settings("redis://unused", tmp_path, demo_signin=True, dry_run=True), redis=redis_client)
    demo_client = demo.test_client()
    assert demo_client.get("/login/demo").status_code == 200
    answer = demo_client.get("/login/demo", headers={header: value})
    assert answer.status_code == 403 and f"it carries {header}".lower() in answer.get_data(as_text=True).lower()


# --- row 10: no two workers without one secret key -------------------------------------------------


def _gunicorn(redis_url: str, tmp_path: Path, workers: int, key: str | None) -> tuple[bool, int | None, str]:
    """Start `gunicorn --workers N "app:create_app()"` as the image does; (answered /healthz, exit code
    if it stopped, its log)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_", "REDIS_"))}
    env.update(REDIS_URL=redis_url, MERGE_HOLD_DATA_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    if key is not None:
        env["MERGE_HOLD_SECRET_KEY"] = key
    gunicorn = Path(sys.executable).with_name("gunicorn")
    process = subprocess.Popen([str(gunicorn), "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
                                "--no-control-socket", "app:create_app()"], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    answered, deadline = False, time.monotonic() + 30
    while not answered and process.poll() is None and time.monotonic() < deadline:
        try:
            answered = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).status == 200
        except OSError:
            time.sleep(0.2)
    stopped = process.poll()
    process.terminate()
    log = process.communicate(timeout=30)[0].decode(errors="replace")
    return answered, stopped, log


def test_two_workers_without_a_secret_key_refuse_to_start(redis_url: str, tmp_path: Path) -> None:
    answered, stopped, log = _gunicorn(redis_url, tmp_path, 2, None)
    assert not answered and stopped not in (None, 0), log[-2000:]
    assert "MERGE_HOLD_SECRET_KEY is not set and gunicorn runs 2 workers" in log
    answered, stopped, log = _gunicorn(redis_url, tmp_path, 2, "k" * 64)
    assert answered, log[-2000:]


# --- row 11: 400s, and the signature before the body ------------------------------------------------


@pytest.mark.parametrize(("before", "status"), [
    ("99999999999999999999-99999999999999999999", 400), ("18446744073709551616", 400),
    ("1-18446744073709551616", 400), ("0-0", 400),
    ("18446744073709551615-18446744073709551615", 200), ("1700000000000-0", 200), ("0", 200),
])
def test_a_malformed_before_is_a_400(redis_client: redis.Redis, tmp_path: Path, before: str, status: int) -> None:
    app, token = make_app(redis_client, tmp_path)
    redis_client.xadd(keys.AUDIT, {"event": "room.held", "data": "{}"})
    answer = app.test_client().get("/api/v1/events", query_string={"before": before},
                                   headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == status, answer.get_data(as_text=True)


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/hook-events", b'{"events":[' + b"[" * 5000 + b"]" * 5000 + b"]}"),
    ("/api/v1/hook-events", b'{"events":[{"repo":"acme/widgets","x":' + b"[" * 70 + b"]" * 70 + b"}]}"),
    ("/api/v1/holds", b'{"target":"acme/widgets","reason":' + b"[" * 5000 + b"]" * 5000 + b"}"),
])
def test_over_deep_json_is_a_400(redis_client: redis.Redis, tmp_path: Path, path: str, body: bytes) -> None:
    app, token = make_app(redis_client, tmp_path)
    manage(redis_client, "acme/widgets")
    answer = app.test_client().post(path, data=body, headers={"Authorization": f"Bearer {token}",
                                                              "Content-Type": "application/json"})
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert not redis_client.exists(keys.HOOK_EVENTS) and not redis_client.hlen(keys.room_holds("acme/widgets"))


@pytest.mark.parametrize("signature", [None, "sha256=", "sha1=" + "0" * 40, "sha256=" + "z" * 64, "secret"])
def test_an_unsigned_body_is_refused_before_it_is_read(redis_client: redis.Redis, tmp_path: Path,
                                                       signature: str | None) -> None:
    """A request announcing 20 MB with no well-formed signature gets its 401 while the body is still
    unsent: nothing of it was waited for, let alone read."""
    app, _ = make_app(redis_client, tmp_path)
    with serving(app) as base:
        host, port = base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            head = ["POST /webhooks/github HTTP/1.1", f"Host: {host}", "Content-Type: application/json",
                    "Content-Length: 20000000", "X-GitHub-Event: push", "X-GitHub-Delivery: big-1"]
            if signature is not None:
                head.append(f"X-Hub-Signature-256: {signature}")
            conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + b"{")
            received = b""
            while chunk := conn.recv(4096):  # the server answers and closes; the body was never sent
                received += chunk
            answer = received.decode(errors="replace")
    assert answer.startswith("HTTP/1.1 401"), answer
    assert "missing or invalid X-Hub-Signature-256" in answer


def test_a_well_signed_client_still_gets_its_body_read(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path)
    body = fixture_body("push/payload.json")
    answer = app.test_client().post("/webhooks/github", data=body, headers=delivery_headers("push", body))
    assert answer.status_code == 202
