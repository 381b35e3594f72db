"""The dashboard: login with an API token, holds by repo, the PR page, dry-run statuses; all escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from app.dashboard import ago
from core import keys
from core.holds import from_iso
from merge_hold.tokens import revoke
from tests.webapp_support import closed_port_url, hold, make_app, post_form, serving, store_verdict

REPO = "octo/widgets"


def _login(app: Flask, token: str) -> FlaskClient:
    client = app.test_client()
    response = post_form(client, "/login", {"token": token})
    assert response.status_code == 302
    return client


@pytest.mark.parametrize("path", ["/", f"/{REPO}/pull/1", "/dry-run"])
def test_pages_need_a_login(redis_client: redis.Redis, tmp_path: Path, path: str) -> None:
    app, _ = make_app(redis_client, tmp_path)
    response = app.test_client().get(path)
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/login?next=")


@pytest.mark.parametrize("token", ["", "wrong", "{token}x", " "])
def test_login_with_a_bad_token_is_refused(redis_client: redis.Redis, tmp_path: Path, token: str) -> None:
    app, good = make_app(redis_client, tmp_path)
    client = app.test_client()
    response = post_form(client, "/login", {"token": token.format(token=good)})
    assert response.status_code == 401
    assert b"not valid" in response.data
    assert client.get("/").status_code == 302


@pytest.mark.parametrize(
    ("next_path", "landing"),
    [
        (None, "/"),
        (f"/{REPO}/pull/1", f"/{REPO}/pull/1"),
        ("//evil.example/x", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
    ],
)
def test_login_lands_only_on_our_pages(
    redis_client: redis.Redis, tmp_path: Path, next_path: str | None, landing: str
) -> None:
    app, token = make_app(redis_client, tmp_path)
    data = {"token": token} if next_path is None else {"token": token, "next": next_path}
    response = post_form(app.test_client(), "/login", data)
    assert response.status_code == 302
    assert response.headers["Location"] == landing


def test_session_cookie_is_signed_and_httponly(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    response = post_form(app.test_client(), "/login", {"token": token})
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert token not in cookie
    forged = app.test_client()
    forged.set_cookie("merge_hold_session", cookie.split(";")[0].split("=", 1)[1][:-3] + "AAA")
    assert forged.get("/").status_code == 302


def test_index_groups_holds_by_repo(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    store_verdict(redis_client, REPO, 12, (hold("alice", "waiting for DB migration"),
                                           hold("bob", "gone", expires="2020-01-01T00:00:00Z")))
    store_verdict(redis_client, "octo/other", 3, (hold("carol", "<script>alert(1)</script>",
                                                       expires="2099-01-01T00:00:00Z"),))
    store_verdict(redis_client, "octo/other", 4, error="invalid .github/merge-hold.yml")
    store_verdict(redis_client, "octo/free", 1)
    store_verdict(redis_client, "Octo/Mixed", 2, (hold("dan", "case"),))
    page = _login(app, token).get("/").get_data(as_text=True)
    assert page.index("Octo/Mixed") < page.index("octo/other") < page.index(REPO)  # repos in order
    assert 'href="/Octo/Mixed/pull/2"' in page  # shown as GitHub spells it
    assert "@alice" in page and "waiting for DB migration" in page
    assert "@bob" not in page  # expired holds are not shown as active
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "invalid .github/merge-hold.yml" in page
    assert f'href="/{REPO}/pull/12"' in page
    assert "octo/free" not in page
    assert "Dry run" not in page


def test_index_when_nothing_is_held(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    store_verdict(redis_client, REPO, 1)
    page = _login(app, token).get("/").get_data(as_text=True)
    assert "No pull request is held in 1 managed repository." in page


def test_pull_page(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    store_verdict(redis_client, REPO, 12, (hold("alice", "waiting for DB migration"),
                                           hold("bob", "old", expires="2020-01-01T00:00:00Z")))
    redis_client.set(keys.posted(REPO, 12), json.dumps(
        {"sha": "ec26c3e57ca3a959", "state": "failure", "description": "Held by @alice: waiting"}))
    for n, (number, event) in enumerate([(12, "hold.placed"), (13, "hold.lifted-on-13"), (12, "status.posted")]):
        redis_client.xadd(keys.history(REPO), {"event": event, "data": json.dumps(
            {"repo": REPO, "number": number, "holder": "alice"})}, id=f"{1000 + n}-0")
    redis_client.xadd(keys.history(REPO), {"event": "hold.held", "data": json.dumps(
        {"repo": REPO, "number": 12, "message": "@alice held this PR", "actor": "alice"})}, id="2000-0")
    page = _login(app, token).get(f"/{REPO}/pull/12").get_data(as_text=True)
    assert "octo/widgets#12" in page
    assert "held" in page and "Held by @alice: waiting for DB migration" in page
    assert "Expired, awaiting recompute" in page and "@bob" in page
    assert "ec26c3e57ca3" in page
    assert "hold.placed" in page and "status.posted" in page
    assert "hold.lifted-on-13" not in page
    assert "@alice held this PR</code>" in page and "&#34;actor&#34;" not in page  # a message reads better
    assert "merge-hold does not manage" not in page


@pytest.mark.parametrize(("path", "status", "text"), [
    ("/octo/unknown/pull/5", 200, "merge-hold does not manage octo/unknown"),
    ("/octo/unknown/pull/5", 200, "No verdict recorded"),
    ("/octo/unknown/pull/x", 404, ""),
    ("/octo/a..b/pull/5", 404, ""),
])
def test_pull_page_edges(redis_client: redis.Redis, tmp_path: Path, path: str, status: int, text: str) -> None:
    app, token = make_app(redis_client, tmp_path)
    response = _login(app, token).get(path)
    assert response.status_code == status
    assert text in response.get_data(as_text=True)


def test_dry_run_statuses(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path, dry_run=True)
    for n in range(12):
        redis_client.lpush(keys.DRY_RUN_STATUSES, json.dumps({
            "repo": REPO, "number": n, "sha": f"{n:040x}", "state": "failure",
            "description": f"Held by @alice #{n}", "at": "2026-01-05T10:00:00Z"}))
    redis_client.lpush(keys.DRY_RUN_STATUSES, json.dumps({"repo": "javascript:alert(1)//x", "number": 1}))
    redis_client.lpush(keys.DRY_RUN_STATUSES, json.dumps({  # as workers.github.dry_run.DryRunGateway records it
        "repo": REPO, "sha": "ab" * 20, "state": "success", "description": "No holds", "context": "merge-hold",
        "target_url": f"http://127.0.0.1:8000/{REPO}/pull/77", "at": "2026-01-05T10:00:00+00:00"}))
    redis_client.lpush(keys.DRY_RUN_STATUSES, b"not json")
    client = _login(app, token)
    index = client.get("/").get_data(as_text=True)
    assert "Dry run" in index and "Held by @alice #11" in index and "Held by @alice #1<" not in index
    full = client.get("/dry-run").get_data(as_text=True)
    assert all(f"Held by @alice #{n}<" in full for n in range(12))
    assert f'href="/{REPO}/pull/3"' in full and f'href="/{REPO}/pull/77"' in full
    assert "not json" in full
    assert 'href="javascript' not in full


def test_logout_and_revocation_end_the_session(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    client = _login(app, token)
    assert client.get("/").status_code == 200
    assert post_form(client, "/logout", {}).status_code == 302
    assert client.get("/").status_code == 302
    client = _login(app, token)
    assert revoke(tmp_path / "tokens", "tester")
    assert client.get("/").status_code == 302
    assert client.get("/logout").status_code == 405  # logout is a POST: a link cannot log anyone out


def test_dashboard_through_a_real_server(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    import requests

    app, token = make_app(None, tmp_path, redis_url=redis_url)
    store_verdict(redis_client, REPO, 12, (hold("alice", "waiting"),))
    with serving(app) as base:
        session = requests.Session()
        form = session.get(f"{base}/login", timeout=10).text
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form)
        assert csrf is not None
        answer = session.post(f"{base}/login", data={"token": token, "csrf_token": csrf[1]}, timeout=10)
        assert answer.status_code == 200
        page = session.get(f"{base}/", timeout=10)
        css = session.get(f"{base}/static/style.css", timeout=10)
    assert "@alice" in page.text
    assert css.status_code == 200 and "font" in css.text


def test_dashboard_when_redis_is_down(tmp_path: Path) -> None:
    app, token = make_app(None, tmp_path, redis_url=closed_port_url())
    response = post_form(app.test_client(), "/login", {"token": token})  # the session is kept in Redis
    assert response.status_code == 503
    assert "unavailable" in response.get_data(as_text=True)


@pytest.mark.parametrize(("iso", "text"), [
    ("2026-01-05T09:59:30Z", "30s ago"),
    ("2026-01-05T07:00:00Z", "3h ago"),
    ("2026-01-01T10:00:00Z", "4d ago"),
    ("2026-01-05T10:05:00Z", "in 5m"),
    (None, ""),
    ("garbage", "garbage"),
])
def test_ago(iso: str | None, text: str) -> None:
    assert ago(iso, from_iso("2026-01-05T10:00:00Z")) == text
