"""The tamper banner in a real browser: Playwright drives Debian's Chromium against the real app, signed in
with GitHub through the emulator's OAuth flow. Two repos lose their protection; alice, who can read only
acme/widgets, sees its red banner on the dashboard, on the held PR's page and on /incidents, never the
other repo's; once the requirement comes back the banner is gone. Screenshots under `TEST_ARTIFACTS`.

Needs Debian's Chromium (tests/needs.py); skipped, saying so, without it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from merge_hold.redis_server import free_port
from tests.browser_support import ARTIFACTS, CHROMIUM, LAUNCH_ARGS
from tests.e2e_support import fixture
from tests.emulator import APP_ID, GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.needs import needs
from tests.watch_support import (  # fast_chat: a fixture
    INSTALLATION,
    REPO,
    fast_chat,  # noqa: F401
    gate_event,
    watched,
)

SECRET_REPO = "acme/secret"

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is a dev dependency: make install")

pytestmark = [needs("chromium"), pytest.mark.usefixtures("fast_chat")]


@pytest.fixture()
def page() -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 390, "height": 844})  # a phone's screen
        tab = context.new_page()
        tab.set_default_timeout(20_000)
        try:
            yield tab
        finally:
            context.close()
            browser.close()


def _secret_repo(emu: GitHubEmulator) -> None:
    emu.add_repo(SECRET_REPO, installation_id=INSTALLATION)
    emu.protect_branch(SECRET_REPO, "main", checks=[("merge-hold", APP_ID)])
    emu.set_permission(SECRET_REPO, "alice", "none")


def _lose(event: dict[str, Any], repo: str) -> dict[str, Any]:
    event["repository"] = {**event["repository"], "full_name": repo, "name": repo.split("/")[1]}
    return event


def test_the_banner_is_red_on_the_repos_pages_and_only_for_repos_alice_can_read(
        github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path, page: Any) -> None:
    emu = github_emulator
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with watched(emu, redis_url, tmp_path, arrange=_secret_repo, github_client_id=CLIENT_ID,
                 github_client_secret=CLIENT_SECRET, github_web_url=emu.url, public_url=base) as w:
        added = fixture("installation_repositories", "added.payload.json")
        added["installation"]["id"] = INSTALLATION
        added["repositories_added"] = [{"full_name": SECRET_REPO, "private": True}]
        w.deliver("installation_repositories", added)
        for repo in (REPO, SECRET_REPO):
            emu.unprotect_branch(repo, "main")
            w.deliver("branch_protection_rule", _lose(gate_event("branch_protection_rule", "deleted", by="mallory"),
                                                      repo))
        server = make_server("127.0.0.1", port, w.svc.app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            emu.sign_in_as("alice")
            page.goto(f"{base}/")
            page.get_by_role("link", name="Sign in with GitHub").click()
            page.wait_for_url(f"{base}/")
            for path, name in (("/", "1-index"), (f"/{REPO}/pull/5", "2-pull"), ("/incidents", "3-incidents")):
                page.goto(f"{base}{path}")
                banner = page.get_by_role("alert")
                assert banner.count() == 1, path  # acme/widgets's only: acme/secret is not alice's to see
                text = banner.inner_text()
                assert f"{REPO}@main no longer requires merge-hold (changed by @mallory)" in text
                assert SECRET_REPO not in page.inner_text("body")
                assert banner.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(209, 36, 47)"  # red
                page.screenshot(path=str(ARTIFACTS / f"watch-{name}.png"), full_page=True)
            emu.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID)])
            w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "created", by="maria"))
            page.goto(f"{base}/{REPO}/pull/5")
            assert page.get_by_role("alert").count() == 0
            page.screenshot(path=str(ARTIFACTS / "watch-4-restored.png"), full_page=True)
        finally:
            server.shutdown()
            thread.join(5)
