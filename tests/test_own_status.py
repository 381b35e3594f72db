"""Own statuses and forged ones (design §4, invariant 6): a status equal to our last post is ours whatever
the sender; the configured slug is checked at worker start; a forgery is put back once per verdict,
never in a loop. Real Redis, real rq worker, the GitHub emulator over HTTP; the worker start-up check
through a real `merge-hold worker` process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e_support import ROOT, Service, fixture, service_env, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.test_e2e_webhooks import REPO, SHA, comment, seed_hello_world

WRONG_SLUG = "merge-hold"  # what the Kubernetes sample used to ship: somebody else's App


def _service(emu: GitHubEmulator, redis_url: str, slug: str | None) -> Service:
    seed_hello_world(emu, alice="write")
    return Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, slug))  # type: ignore[arg-type]


@pytest.fixture(params=["right slug", "wrong slug", "no slug"])
def svc(request: pytest.FixtureRequest, github_emulator: GitHubEmulator, redis_client: Any,
        redis_url: str) -> Iterator[Service]:
    slug = {"right slug": github_emulator.app_slug, "wrong slug": WRONG_SLUG, "no slug": None}[request.param]
    yield _service(github_emulator, redis_url, slug)


def status_event(emu: GitHubEmulator, *, sender: str | None = None, state: str | None = None,
                 description: str | None = None) -> dict[str, Any]:
    """The `status` webhook GitHub sends for the latest merge-hold status on the PR's head (or a forged one)."""
    latest = emu.latest_status(REPO, SHA) or {}
    event = fixture("status", "payload.json")
    event.update(sha=SHA, context="merge-hold", state=state or latest["state"],
                 description=description if description is not None else latest["description"])
    event["repository"] = {**event["repository"], "full_name": REPO}
    event["sender"] = {**event["sender"], "login": sender or latest["creator"]}
    return event


def forged_events(svc: Service) -> list[dict[bytes, bytes]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(f"mh:{{{REPO.lower()}}}:history")  # type: ignore[assignment]
    return [fields for _id, fields in entries if fields[b"event"] == b"status.forged"]


def test_own_statuses_echoed_back_never_repost(svc: Service, github_emulator: GitHubEmulator) -> None:
    """Each status we post comes back as a `status` event (sent by our bot, whatever slug we were told):
    fed back ten rounds, it posts nothing more and records no forgery."""
    svc.deliver("issue_comment", comment("/hold real"))
    svc.drain()
    posts = len(github_emulator.status_posts())
    for _ in range(10):
        svc.deliver("status", status_event(github_emulator))
        svc.drain()
    assert len(github_emulator.status_posts()) == posts
    assert forged_events(svc) == []


def test_equal_to_our_last_post_is_ours_whatever_the_sender(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold real"))
    svc.drain()
    posts = len(github_emulator.status_posts())
    svc.deliver("status", status_event(github_emulator, sender="someone-else[bot]"))
    svc.drain()
    assert len(github_emulator.status_posts()) == posts and forged_events(svc) == []


def test_a_forger_reposting_forever_is_overwritten_once_per_verdict(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold real"))
    svc.drain()
    posts = len(github_emulator.status_posts())

    def forge() -> None:
        github_emulator.add_status(REPO, SHA, state="success", context="merge-hold", description="lgtm",
                                   creator="eve")
        svc.deliver("status", status_event(github_emulator, sender="eve", state="success", description="lgtm"))
        svc.drain()
        if (github_emulator.latest_status(REPO, SHA) or {}).get("creator") == github_emulator.bot_login:
            # Our own put-back comes back as an event too: ours, ignored.
            svc.deliver("status", status_event(github_emulator))
            svc.drain()

    for _ in range(6):
        forge()
    assert len(github_emulator.status_posts()) == posts + 1  # put back once, not six times
    recorded = forged_events(svc)
    assert len(recorded) == 6
    assert [b'"overwritten": true' in f[b"data"] for f in recorded] == [True] + [False] * 5

    # A real change of verdict: a new forgery of the new verdict is put back once again.
    svc.deliver("issue_comment", comment("/hold cancel", at="2019-05-15T15:31:00Z", comment_id=101))
    svc.drain()
    assert (github_emulator.latest_status(REPO, SHA) or {}).get("state") == "success"
    github_emulator.add_status(REPO, SHA, state="failure", context="merge-hold", description="nope", creator="eve")
    svc.deliver("status", status_event(github_emulator, sender="eve", state="failure", description="nope"))
    svc.drain()
    latest = github_emulator.latest_status(REPO, SHA) or {}
    assert (latest.get("state"), latest.get("creator")) == ("success", github_emulator.bot_login)


def _worker(emu: GitHubEmulator, redis_url: str, slug: str) -> subprocess.CompletedProcess[str]:
    settings = service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, slug)
    return subprocess.run([sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler"],
                          env=service_env(settings), cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_worker_refuses_to_start_with_another_apps_slug(github_emulator: GitHubEmulator, redis_client: Any,
                                                        redis_url: str) -> None:
    run = _worker(github_emulator, redis_url, WRONG_SLUG)
    assert run.returncode == 78, run.stderr
    assert "MERGE_HOLD_APP_SLUG" in run.stderr
    assert repr(WRONG_SLUG) in run.stderr and repr(github_emulator.app_slug) in run.stderr


def test_worker_starts_with_its_own_slug(github_emulator: GitHubEmulator, redis_client: Any,
                                         redis_url: str) -> None:
    run = _worker(github_emulator, redis_url, github_emulator.app_slug.upper())  # slugs compare case-blind
    assert run.returncode == 0, run.stderr


def test_a_stalled_github_does_not_stall_the_worker_start(github_emulator: GitHubEmulator, redis_client: Any,
                                                          redis_url: str) -> None:
    """GET /app hangs (the emulator holds its lock): the check gives up after a few seconds, the worker
    starts (here: a burst on an empty queue, so it exits 0) and says why in its log."""
    with github_emulator.lock:
        run = _worker(github_emulator, redis_url, WRONG_SLUG)
    assert run.returncode == 0, run.stderr
    assert "cannot check MERGE_HOLD_APP_SLUG" in run.stderr
