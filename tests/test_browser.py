"""The dashboard in a real browser (issue #9 item 6): Playwright drives Debian's Chromium against the real
app, with the GitHub emulator serving the OAuth web flow and the statuses. Sign in with GitHub, see only
the permitted repos, place a hold from the page and watch the `merge-hold` status appear at the emulator,
lift it, follow the status's `target_url` back to the page. A screenshot of each page is saved under
`TEST_ARTIFACTS` (default `.test-artifacts/`) as a test artifact.

Needs `/usr/bin/chromium` (`.ci/run` installs it with apt-get when missing); skipped, saying so, without it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis
from werkzeug.serving import make_server

from merge_hold.redis_server import free_port
from tests.browser_support import ARTIFACTS, phone_page, shot, wait_for
from tests.chat_support import head_sha, seed_repo
from tests.e2e_support import Service, service_settings
from tests.emulator import APP_ID, GitHubEmulator, private_key_pem
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.needs import needs
from tests.webapp_support import hold, store_verdict

pytestmark = needs("chromium")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is a dev dependency: make install")


@pytest.fixture()
def site(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Iterator[tuple[str, Service]]:
    emu = github_emulator
    seed_repo(emu, redis_client, "acme/widgets", 2, installation_id=7)
    seed_repo(emu, redis_client, "acme/secret", 1, installation_id=7)
    emu.set_permission("acme/widgets", "alice", "write")
    emu.set_permission("acme/secret", "bob", "write")
    store_verdict(redis_client, "acme/widgets", 2, (hold("carol", "waiting for the widgets release"),))
    store_verdict(redis_client, "acme/secret", 1, (hold("bob", "the secret launch"),))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = service_settings(redis_url, emu.url, APP_ID, private_key_pem(), emu.app_slug,
                                github_client_id=CLIENT_ID, github_client_secret=CLIENT_SECRET,
                                github_web_url=emu.url, public_url=base, secret_key="browser-test-key",
                                write_rate_per_minute=60_000)
    service = Service.start(settings)
    server = make_server("127.0.0.1", port, service.app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base, service
    finally:
        server.shutdown()
        thread.join(5)


@pytest.fixture()
def page() -> Iterator[Any]:
    with phone_page(sync_api) as tab:
        yield tab


def test_sign_in_hold_lift_and_follow_the_status_back(site: tuple[str, Service], page: Any,
                                                      github_emulator: GitHubEmulator) -> None:
    base, service = site
    emu = github_emulator
    emu.sign_in_as("alice")

    page.goto(f"{base}/")
    assert "/login" in page.url
    shot(page, "1-login")
    page.get_by_role("link", name="Sign in with GitHub").click()
    page.wait_for_url(f"{base}/")
    body = page.inner_text("main")
    assert "waiting for the widgets release" in body
    assert "acme/secret" not in body and "secret launch" not in body  # not alice's to see
    shot(page, "2-holds")

    page.goto(f"{base}/acme/widgets/pull/1")
    page.fill("#reason", "waiting for DB migration")
    page.fill("#for", "2h")
    page.get_by_role("button", name="Hold").click()
    assert "Held acme/widgets#1" in page.inner_text("main")
    service.drain()
    sha = head_sha("acme/widgets", 1)
    wait_for(lambda: (emu.latest_status("acme/widgets", sha) or {}).get("state") == "failure", "the hold's status")
    status = emu.latest_status("acme/widgets", sha)
    assert status is not None and "waiting for DB migration" in status["description"]
    page.reload()
    assert "@alice held this PR for 2h: waiting for DB migration (dashboard)" in page.inner_text("main")
    shot(page, "3-held")

    page.goto(f"{base}/rooms")  # her hold is the PR's own, as a `/hold` comment's: not a room hold
    assert page.title().startswith("Rooms")
    assert "waiting for DB migration" not in page.inner_text("main")
    shot(page, "4-rooms")

    page.goto(status["target_url"])  # the status's link leads back to the PR's page
    assert page.url == f"{base}/acme/widgets/pull/1"
    page.get_by_role("button", name="Lift").click()
    assert "Lifted @alice" in page.inner_text("main")
    service.drain()
    wait_for(lambda: (emu.latest_status("acme/widgets", sha) or {}).get("state") == "success", "the lift's status")
    shot(page, "5-lifted")

    assert page.goto(f"{base}/acme/secret/pull/1").status == 404
    for name in ("1-login", "2-holds", "3-held", "4-rooms", "5-lifted"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000
