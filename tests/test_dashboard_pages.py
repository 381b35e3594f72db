"""The pages around the dashboard (issue #27 items 1, 3 and 5): styled error pages, the live refresh's
conditional GET, `/login` saying who is signed in, `/incidents` in a dry run, a freeze in the history."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from app.dashboard import sentence_filter
from tests.webapp_support import closed_port_url, hold, make_app, post_form, store_verdict

REPO = "octo/widgets"


def _login(app: Flask, token: str) -> FlaskClient:
    client = app.test_client()
    assert post_form(client, "/login", {"token": token}).status_code == 302
    return client


@pytest.mark.parametrize(("method", "path", "code", "says"), [
    ("GET", "/no/such/page/here", 404, "merge-hold does not say which"),
    ("GET", "/octo/a..b/pull/5", 404, "Not found"),
    ("GET", "/logout", 405, "Not this way"),
    ("POST", "/rooms/freeze", 400, "The form has expired or did not come from this site"),
    ("GET", "/boom", 500, "the error is logged"),
])
def test_errors_are_pages_of_the_site(redis_client: redis.Redis, tmp_path: Path, method: str, path: str, code: int,
                                      says: str) -> None:
    app, token = make_app(redis_client, tmp_path)

    def boom() -> str:
        raise RuntimeError("a bug")

    app.add_url_rule("/boom", view_func=boom)
    client = _login(app, token)
    answer = client.open(path, method=method)
    page = answer.get_data(as_text=True)
    assert answer.status_code == code and answer.mimetype == "text/html"
    assert says in page and f'<p class="code">{code}</p>' in page and "/static/style.css" in page
    assert "Signed in as <strong>token:tester</strong>" in page  # the site's own top bar
    if code == 405:
        assert "POST" in answer.headers["Allow"]


def test_json_clients_still_get_json_and_a_down_redis_gets_a_page(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path)
    answer = app.test_client().get("/api/v1/nope")
    assert answer.status_code == 404 and answer.is_json
    down, token = make_app(None, tmp_path / "down", redis_url=closed_port_url())
    # A token sign-in is a session kept in Redis (so that Sign out ends it): with Redis down the sign-in
    # itself is the page that says so.
    answer = post_form(down.test_client(), "/login", {"token": token})
    assert answer.status_code == 503 and "Unavailable for a moment" in answer.get_data(as_text=True)


def test_the_live_refresh_is_a_conditional_get_that_leaves_the_flash(redis_client: redis.Redis,
                                                                        tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    store_verdict(redis_client, REPO, 3, (hold("alice", "waiting"),))
    client = _login(app, token)
    live = {"X-Merge-Hold-Live": "1"}
    first = client.get(f"/{REPO}/pull/3", headers=live)
    assert first.status_code == 200 and first.headers["ETag"] and first.headers["Cache-Control"] == "no-store"
    text = first.get_data(as_text=True)
    assert 'src="/static/live.js"' in text and 'data-live="holds"' in text
    same = client.get(f"/{REPO}/pull/3", headers={**live, "If-None-Match": first.headers["ETag"]})
    assert same.status_code == 304 and same.get_data() == b""
    store_verdict(redis_client, REPO, 3, (hold("alice", "waiting"), hold("bob", "a second hold")))
    changed = client.get(f"/{REPO}/pull/3", headers={**live, "If-None-Match": first.headers["ETag"]})
    assert changed.status_code == 200 and "a second hold" in changed.get_data(as_text=True)
    with client.session_transaction() as session:
        session["_flashes"] = [("ok", "Held octo/widgets#3: waiting.")]
    assert "Held octo/widgets#3" not in client.get(f"/{REPO}/pull/3", headers=live).get_data(as_text=True)
    assert "Held octo/widgets#3" in client.get(f"/{REPO}/pull/3").get_data(as_text=True)  # still there for the page


def test_login_says_who_is_signed_in(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    assert "You are signed in as" not in app.test_client().get("/login").get_data(as_text=True)
    page = _login(app, token).get("/login").get_data(as_text=True)
    assert "You are signed in as <strong>token:tester</strong>" in page and "with a token" in page


@pytest.mark.parametrize(("dry_run", "says", "never"), [
    (True, "A dry run reads no branch protection or rulesets from GitHub", "Every managed branch merge-hold has read"),
    (False, "Every managed branch merge-hold has read requires it from this App.", "A dry run reads"),
])
def test_incidents_in_a_dry_run_do_not_claim_branches_were_read(redis_client: redis.Redis, tmp_path: Path,
                                                                 dry_run: bool, says: str, never: str) -> None:
    app, token = make_app(redis_client, tmp_path, dry_run=dry_run)
    page = _login(app, token).get("/incidents").get_data(as_text=True)
    assert says in page and never not in page


def test_the_history_names_a_freeze_that_started_and_a_prs_first_verdict() -> None:
    freeze = {"id": "freeze:weekend", "source": "freeze", "holder": "weekend"}
    assert sentence_filter({"event": "verdict.held", "data": {"holds": [freeze], "version": 4}}) == \
        "Freeze weekend started: this PR is held"
    assert sentence_filter({"event": "verdict.free", "data": {"holds": [], "version": 1}}) == \
        "merge-hold first saw this PR: no holds"
    assert sentence_filter({"event": "verdict.held", "data": {"holds": [{"source": "comment"}], "version": 5}}) == \
        "The verdict became held"
