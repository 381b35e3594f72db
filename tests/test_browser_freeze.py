"""Freeze and thaw from `/rooms` in a real browser at a phone's width (issue 14 item 5): Playwright drives
Debian's Chromium against the real app and workers, with the GitHub emulator serving the sign-in, the
statuses and the rulesets. An admin fills the freeze form for the org, sees the freeze and its progress
(the statuses repo's writes, the ruleset repo's ruleset and descriptions), checks at the emulator that
every PR is blocked, thaws, and sees it all free again. Screenshots go under `TEST_ARTIFACTS`.

Needs `/usr/bin/chromium`; skipped, saying so, without it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis
from werkzeug.serving import make_server

from merge_hold.redis_server import free_port
from state import store
from tests.browser_support import ARTIFACTS, OVERFLOW, phone_page, shot, wait_for
from tests.chat_support import head_sha, seed_repo
from tests.e2e_support import Service, service_settings
from tests.emulator import APP_ID, GitHubEmulator, private_key_pem
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.needs import needs

pytestmark = needs("chromium")
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is a dev dependency: make install")

WIDGETS, GADGETS = "acme/widgets", "acme/gadgets"


@pytest.fixture()
def site(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Iterator[tuple[str, Service]]:
    emu = github_emulator
    seed_repo(emu, redis_client, WIDGETS, 2, installation_id=7)
    seed_repo(emu, redis_client, GADGETS, 2, installation_id=7)
    meta = store.load_repo(redis_client, GADGETS)
    assert meta is not None
    store.save_repo(redis_client, GADGETS, store.RepoMeta(**{**meta.__dict__, "config_text": "freeze_mode: ruleset\n"}))
    for repo in (WIDGETS, GADGETS):
        emu.set_permission(repo, "ada", "admin")
        emu.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
    # Administration: write lets merge-hold keep its ruleset on acme/gadgets (else it falls back to statuses).
    emu.set_installation_permissions(7, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                         "issues": "write", "statuses": "write", "administration": "write"})
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = service_settings(redis_url, emu.url, APP_ID, private_key_pem(), emu.app_slug,
                                github_client_id=CLIENT_ID, github_client_secret=CLIENT_SECRET,
                                github_web_url=emu.url, public_url=base, secret_key="browser-freeze-key",
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


def states(emu: GitHubEmulator, repo: str) -> list[str | None]:
    return [(emu.latest_status(repo, head_sha(repo, n)) or {}).get("state") for n in (1, 2)]


def test_freeze_the_org_watch_its_progress_and_thaw(site: tuple[str, Service], page: Any,
                                                    github_emulator: GitHubEmulator) -> None:
    base, service = site
    emu = github_emulator
    emu.sign_in_as("ada")
    page.goto(f"{base}/rooms")
    page.get_by_role("link", name="Sign in with GitHub").click()
    page.wait_for_url(f"{base}/rooms")
    assert "Nothing is frozen." in page.inner_text("main")
    shot(page, "freeze-1-form")

    page.fill("#target", "acme")
    page.fill("#reason", "incident 4711: payments are down")
    page.fill("#for", "2h")
    page.get_by_role("button", name="Freeze", exact=True).click()
    body = page.inner_text("main")
    assert "Froze acme for 2h: incident 4711: payments are down." in body
    assert "@ada" in body and "exemptions 0" in body
    shot(page, "freeze-2-frozen")

    service.drain()
    wait_for(lambda: states(emu, WIDGETS) == ["failure", "failure"], "the statuses repo's held statuses")
    page.reload()
    body = page.inner_text("main")
    assert "statuses written 2 of 2" in body, body
    assert "rulesets active 1 of 1" in body, body
    assert "descriptions 2 of 2" in body, body
    # GitHub's own reading: the statuses block acme/widgets, the ruleset acme/gadgets
    assert [emu.merge_blockers(WIDGETS, n) for n in (1, 2)] == [["merge-hold: failure"]] * 2
    assert [emu.merge_blockers(GADGETS, n) for n in (1, 2)] == [["merge-hold/freeze: failure"]] * 2
    assert page.evaluate(OVERFLOW) == []  # the form and the progress fit a phone's screen
    shot(page, "freeze-3-progress")

    page.get_by_role("button", name="Thaw").click()
    body = page.inner_text("main")
    assert "Thawed acme: lifted 1 hold (@ada)." in body and "Nothing is frozen." in body
    service.drain()
    wait_for(lambda: states(emu, WIDGETS) == ["success", "success"], "the thaw's statuses")
    assert all(emu.mergeable(repo, n) for repo in (WIDGETS, GADGETS) for n in (1, 2))
    shot(page, "freeze-4-thawed")
    for name in ("freeze-1-form", "freeze-2-frozen", "freeze-3-progress", "freeze-4-thawed"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000
