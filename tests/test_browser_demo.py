"""The demo that can do everything (issue 16 items 3 and 5), in a real browser at a phone's width.

A dry run with the demo sign-in on, as `merge-hold dev` runs it (no App, loopback, the demo Slack
workspace bound): sign in as the pretend users and use the pages' actions — alice holds and lifts from
the PR page, a room hold comes in through `merge-hold simulate chat` (signed like Slack, answered on
its response_url), ada (an org admin) lifts it on `/rooms`, rita (read) gets no Hold form — each
outcome checked in the dry-run record. Then every page, with a long reason and long URLs, is checked
to fit a 390-px screen without sideways scrolling. Screenshots go under `TEST_ARTIFACTS`.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from werkzeug.serving import make_server

from core import keys
from core.demo_users import DEMO_SLACK_ORGS, DEMO_SLACK_TEAM, DEMO_SLACK_USER
from foundation.settings import Settings
from merge_hold import samples, simulate_chat
from merge_hold.redis_server import free_port
from tests.browser_support import OVERFLOW, phone_page, shot, wait_for
from tests.e2e_support import WEBHOOK_SECRET, Service
from tests.needs import needs

pytestmark = needs("chromium")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is a dev dependency: make install")

REPO = "acme/widgets"
PR = 42
SLACK_SECRET = "demo-signing-secret-for-the-browser-test"
LONG_URL = ("https://ci.example.com/acme/widgets/pipelines/1234567890/jobs/9876543210/artifacts/download"
            "?file=integration-report-with-an-unreasonably-long-name-that-never-breaks.html")


@pytest.fixture()
def demo(redis_client: Redis, redis_url: str, tmp_path: Path) -> Iterator[tuple[str, Service, Path]]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "slack-signing-secret").write_text(SLACK_SECRET + "\n")
    settings = Settings(
        redis_url=redis_url, github_webhook_secret=WEBHOOK_SECRET, public_url=base, secret_key="demo-browser",
        api_tokens_file=str(tmp_path / "tokens"), data_dir=str(folder), dry_run=True, demo_signin=True,
        slack_signing_secret=SLACK_SECRET, slack_teams=((DEMO_SLACK_TEAM, DEMO_SLACK_ORGS),),
        chat_admins=(f"slack:{DEMO_SLACK_TEAM}/{DEMO_SLACK_USER}",), write_rate_per_minute=60_000,
    )
    service = Service.start(settings)
    opened = datetime.now(UTC) - timedelta(minutes=5)
    service.deliver("pull_request", samples.pull_request_event(REPO, PR, at=opened))
    service.drain()
    server = make_server("127.0.0.1", port, service.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base, service, folder
    finally:
        server.shutdown()
        thread.join(5)


@pytest.fixture()
def page() -> Iterator[Any]:
    with phone_page(sync_api) as tab:
        yield tab


def verdict_of(service: Service) -> tuple[str, str]:
    found = service.verdict(REPO, PR) or {}
    return str(found.get("state")), str(found.get("description"))


def dry_run_posted(service: Service, state: str, text: str) -> bool:
    """The dry-run GitHub recorded this status for the PR's head (what would have been posted)."""
    import json

    return any(json.loads(raw).get("state") == state and text in json.loads(raw).get("description", "")
               for raw in service.redis.lrange(keys.DRY_RUN_STATUSES, 0, 20))


def sign_in_as(page: Any, base: str, login: str) -> None:
    page.goto(f"{base}/login")
    page.get_by_role("link", name="Sign in as a demo user").click()
    page.get_by_role("button", name=f"Sign in as {login}").click()
    page.wait_for_url(f"{base}/")
    assert page.locator("header .who strong").inner_text() == login


def sign_out(page: Any) -> None:
    if page.locator(".menu-button").is_visible():  # a phone: the menu folds into its button
        page.locator(".menu-button").click()
    page.get_by_role("button", name="Sign out").click()


def chat(base: str, folder: Path, service: Service, line: str) -> str:
    """`merge-hold simulate chat LINE` against the live server, the worker draining meanwhile."""
    out, done = io.StringIO(), threading.Event()
    codes: list[int] = []

    def send() -> None:
        with contextlib.redirect_stdout(out):
            codes.append(simulate_chat.run(base, folder, line, user="ada", wait=30))
        done.set()

    sender = threading.Thread(target=send)
    sender.start()
    while not done.wait(0.2):
        service.drain()
    sender.join()
    assert codes == [0], out.getvalue()
    return out.getvalue()


def test_the_demo_users_can_do_everything_a_page_offers(demo: tuple[str, Service, Path], page: Any) -> None:
    base, service, folder = demo

    page.goto(f"{base}/")
    assert "/login" in page.url
    sign_in_as(page, base, "alice")
    shot(page, "demo-1-alice")

    page.goto(f"{base}/{REPO}/pull/{PR}")
    page.fill("#reason", "waiting for DB migration")
    page.get_by_role("button", name="Hold").click()
    assert f"Held {REPO}#{PR}" in page.inner_text("main")
    service.drain()
    wait_for(lambda: dry_run_posted(service, "failure", "Held by @alice: waiting for DB migration"), "her hold")
    page.reload()
    assert "@alice held this PR: waiting for DB migration (dashboard)" in page.inner_text("main")
    shot(page, "demo-2-held")

    said = chat(base, folder, service, "/hold acme/widgets release freeze")
    assert "<- in the channel: @ada held acme/widgets (1 open PR): release freeze" in said
    assert "(+1 more)" in verdict_of(service)[1]

    page.get_by_role("button", name="Lift").first.click()
    assert "Lifted @alice's hold" in page.inner_text("main")
    service.drain()
    wait_for(lambda: "alice" not in verdict_of(service)[1].lower(), "her lift")
    assert verdict_of(service)[0] == "failure", "the room hold stands"
    page.goto(f"{base}/rooms")
    assert "release freeze" in page.inner_text("main")
    assert page.get_by_role("button", name="Lift").count() == 0, "alice may not lift a repo-wide hold"
    sign_out(page)

    sign_in_as(page, base, "rita")
    page.goto(f"{base}/{REPO}/pull/{PR}")
    assert page.locator("#reason").count() == 0, "read access: no Hold form"
    sign_out(page)

    sign_in_as(page, base, "ada")  # admin of every acme repo
    page.goto(f"{base}/rooms")
    shot(page, "demo-3-rooms")
    page.get_by_role("button", name="Lift").click()
    assert "Lifted @ada's hold on acme/widgets" in page.inner_text("main")
    service.drain()
    wait_for(lambda: verdict_of(service) == ("success", "No holds"), "the room hold's lift")
    assert dry_run_posted(service, "success", "No holds")
    shot(page, "demo-4-free")


def test_every_page_fits_a_phone(demo: tuple[str, Service, Path], page: Any) -> None:
    base, service, folder = demo
    body = f"/hold waiting for the report at {LONG_URL}"
    service.deliver("issue_comment", samples.issue_comment_event(
        REPO, PR, body=body, commenter="maint", at=datetime.now(UTC), comment_id=987654321))
    service.drain()
    chat(base, folder, service, f"/hold acme/widgets see {LONG_URL}")
    sign_in_as(page, base, "maint")
    pages = {"holds": "/", "pull": f"/{REPO}/pull/{PR}", "rooms": "/rooms", "dry-run": "/dry-run",
             "login": "/login/demo"}
    wide = {}
    for name, path in pages.items():
        page.goto(f"{base}{path}")
        assert LONG_URL[:40] in page.inner_text("main") or name in ("login",), name
        shot(page, f"phone-{name}")
        if found := page.evaluate(OVERFLOW):
            wide[name] = found
    assert not wide, wide
