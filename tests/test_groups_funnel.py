"""Merge-group statuses through the funnel (design §4 invariant 8): on the outbox ahead of every PR, paced,
fenced, a refusal skipped without blocking the others; and a forged status on a group's commit put back
once per verdict, like one on a PR's head (invariant 6). Real Redis and rq, the GitHub emulator."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from redis import Redis

from core import keys
from tests.chat_support import emulated_service, head_sha, seed_repo
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.test_e2e_webhooks import PR, REPO, SHA, comment, seed_hello_world, status
from workers.publishing import group_status, merge_groups
from workers.publishing.drain import drain
from workers.publishing.locks import pr_lock
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer
from workers.publishing.recompute import record
from workers.publishing.write import Fenced, write_group

GROUP_SHA = "9" * 40
WIDGETS = "acme/widgets"


def _record_all(svc: Service, repo: str, numbers: list[int]) -> None:
    """Verdicts recorded and on the outbox, nothing written yet (what a fan-out's recording does)."""
    for number in numbers:
        with pr_lock(svc.redis, repo, number):
            assert record(svc.rt, repo, number, datetime.now(UTC)) == "pending"


def _group(svc: Service, repo: str, number: int, sha: str = GROUP_SHA) -> None:
    svc.redis.hset(keys.merge_groups(repo, number), sha, f"gh-readonly-queue/main/pr-{number}-{'0' * 40}")


def test_a_group_status_is_written_by_the_paced_outbox_ahead_of_every_pr(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=1200.0)
    seed_repo(github_emulator, redis_client, WIDGETS, 5)
    github_emulator.add_commit(WIDGETS, GROUP_SHA)
    _record_all(svc, WIDGETS, [1, 2, 3, 4, 5])
    _group(svc, WIDGETS, 3)
    assert merge_groups.enqueue(svc.rt, WIDGETS, 3, GROUP_SHA)
    merge_groups.enqueue(svc.rt, WIDGETS, 3, GROUP_SHA)  # asked twice: one entry (its best place)
    assert redis_client.zcard(keys.outbox("inst-1")) == 6
    assert github_emulator.status_posts() == []
    counts = drain(svc.rt, bucket_of(redis_client, WIDGETS))
    assert counts["posted"] == 6
    posts = github_emulator.status_posts()
    assert posts[0]["sha"] == GROUP_SHA and posts[0]["description"] == "No holds"
    assert {p["sha"] for p in posts[1:]} == {head_sha(WIDGETS, n) for n in range(1, 6)}
    assert Pacer(redis_client, 1200.0, "inst-1").counters()["granted"] == 6  # the group's write paid its slot
    # Written once: the next drain finds nothing that differs.
    assert merge_groups.enqueue(svc.rt, WIDGETS, 3, GROUP_SHA) is False


def test_a_group_write_whose_lock_lapsed_posts_nothing(github_emulator: GitHubEmulator, redis_client: Redis,
                                                       redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url)
    seed_repo(github_emulator, redis_client, WIDGETS, 1)
    _record_all(svc, WIDGETS, [1])
    _group(svc, WIDGETS, 1)
    lock = group_status.lock(redis_client, WIDGETS, GROUP_SHA)
    lock.acquire()
    redis_client.delete(keys.group_lock(WIDGETS, GROUP_SHA))  # lapsed: another writer may hold it now
    with pytest.raises(Fenced):
        write_group(svc.rt, WIDGETS, 1, GROUP_SHA, lock, bucket="inst-1")
    assert github_emulator.status_posts() == []


def test_a_group_commit_github_refuses_is_skipped_and_the_prs_go_on(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url)
    seed_repo(github_emulator, redis_client, WIDGETS, 2)
    _record_all(svc, WIDGETS, [1, 2])
    _group(svc, WIDGETS, 1)
    github_emulator.inject("POST", rf"/statuses/{GROUP_SHA}$", 422, times=None,
                           body={"message": "No commit found for SHA"})
    assert merge_groups.enqueue(svc.rt, WIDGETS, 1, GROUP_SHA)
    counts = drain(svc.rt, "inst-1")
    assert counts["posted"] == 2 and redis_client.zcard(keys.outbox("inst-1")) == 0
    assert {p["sha"] for p in github_emulator.status_posts()} == {head_sha(WIDGETS, 1), head_sha(WIDGETS, 2)}
    history: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.history(WIDGETS))  # type: ignore[assignment]
    assert [f[b"event"] for _id, f in history].count(b"status.skipped") == 1


# --- forged statuses on a group's commit --------------------------------------------------------------


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    seed_hello_world(emu, alice="write")
    emu.add_commit(REPO, GROUP_SHA)
    service = Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))
    service.deliver("issue_comment", comment("/hold in the queue"))
    group = fixture("merge_group", "checks_requested.payload.json")
    group["repository"] = fixture("pull_request", "opened.payload.json")["repository"]
    group["merge_group"].update(head_sha=GROUP_SHA, head_ref=f"refs/heads/gh-readonly-queue/master/pr-{PR}-{SHA}")
    service.deliver("merge_group", group)
    service.drain()
    assert status(emu, GROUP_SHA) == ("failure", f"PR #{PR}: Held by @alice: in the queue")
    yield service


def _status_event(emu: GitHubEmulator, sha: str, *, sender: str | None = None, state: str | None = None,
                  description: str | None = None) -> dict[str, Any]:
    latest = emu.latest_status(REPO, sha) or {}
    event = fixture("status", "payload.json")
    event.update(sha=sha, context="merge-hold", state=state or latest["state"],
                 description=description if description is not None else latest["description"])
    event["repository"] = {**event["repository"], "full_name": REPO}
    event["sender"] = {**event["sender"], "login": sender or latest["creator"]}
    return event


def _forge(svc: Service, emu: GitHubEmulator, sha: str) -> None:
    """Eve posts `success` on ``sha``; GitHub tells us; our put-back (if any) comes back as an event too."""
    emu.add_status(REPO, sha, state="success", context="merge-hold", description="lgtm", creator="eve")
    svc.deliver("status", _status_event(emu, sha, sender="eve", state="success", description="lgtm"))
    svc.drain()
    if (emu.latest_status(REPO, sha) or {}).get("creator") == emu.bot_login:
        svc.deliver("status", _status_event(emu, sha))
        svc.drain()


def _forged(svc: Service) -> list[str]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(keys.history(REPO))  # type: ignore[assignment]
    return [f[b"data"].decode() for _id, f in entries if f[b"event"] == b"status.forged"]


def test_equal_to_our_last_group_post_is_ours_whatever_the_sender(svc: Service,
                                                                  github_emulator: GitHubEmulator) -> None:
    posts = len(github_emulator.status_posts())
    svc.deliver("status", _status_event(github_emulator, GROUP_SHA, sender="someone-else[bot]"))
    svc.drain()
    assert len(github_emulator.status_posts()) == posts and _forged(svc) == []


def test_a_forged_group_status_is_put_back_once_per_verdict(svc: Service, github_emulator: GitHubEmulator) -> None:
    posts = len(github_emulator.status_posts())
    for _ in range(5):
        _forge(svc, github_emulator, GROUP_SHA)
    assert len(github_emulator.status_posts()) == posts + 1  # put back once, not five times
    assert status(github_emulator, GROUP_SHA) == ("success", "lgtm")  # the later forgeries are left (audited)
    recorded = _forged(svc)
    assert len(recorded) == 5 and all('"merge_group": true' in r for r in recorded)
    assert ['"overwritten": true' in r for r in recorded] == [True] + [False] * 4

    # A new verdict: the group follows it, and a forgery of the new verdict is put back once again.
    svc.deliver("issue_comment", comment("/hold cancel", at="2019-05-15T15:31:00Z", comment_id=101))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("success", "No holds")
    github_emulator.add_status(REPO, GROUP_SHA, state="failure", context="merge-hold", description="nope",
                               creator="eve")
    svc.deliver("status", _status_event(github_emulator, GROUP_SHA, sender="eve", state="failure",
                                        description="nope"))
    svc.drain()
    latest = github_emulator.latest_status(REPO, GROUP_SHA) or {}
    assert (latest.get("state"), latest.get("creator")) == ("success", github_emulator.bot_login)


def test_a_forger_alternating_head_and_group_gets_one_put_back_each(svc: Service,
                                                                     github_emulator: GitHubEmulator) -> None:
    posts = len(github_emulator.status_posts())
    for _ in range(4):
        _forge(svc, github_emulator, SHA)
        _forge(svc, github_emulator, GROUP_SHA)
    assert len(github_emulator.status_posts()) == posts + 2  # one per SHA, not one per alternation
