"""The tree closer end to end: a red named status or check run on main's head holds every PR into
main, green lifts it — only merge-hold's own hold (signed webhooks, real Redis and rq, the emulator)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core import keys
from core.treecloser import classify
from merge_hold import samples
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from workers import rooms

REPO = "acme/widgets"
INTO_MAIN, INTO_DEVELOP = 5, 6
T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
CONFIG = "close_on_failure:\n  - branch: main\n    contexts: [ci/build, test]\n"


@pytest.mark.parametrize(("kind", "outcome", "red"), [
    ("status", "failure", True), ("status", "error", True), ("status", "success", False),
    ("status", "pending", None), ("check", "failure", True), ("check", "timed_out", True),
    ("check", "success", False), ("check", "skipped", False), ("check", "cancelled", None),
    ("check", None, None), ("status", "FAILURE", True),
])
def test_classify(kind: str, outcome: str | None, red: bool | None) -> None:
    assert classify(kind, outcome) is red


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    emu.add_installation(3, "acme")
    emu.add_repo(REPO, installation_id=3)
    emu.set_file(REPO, ".github/merge-hold.yml", CONFIG)
    service = Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))
    for number, base in ((INTO_MAIN, "main"), (INTO_DEVELOP, "develop")):
        emu.add_pull(REPO, number, head_sha=samples.head_sha(REPO, number), head_ref=f"f{number}", base=base)
        opened = samples.pull_request_event(REPO, number, at=T0, installation_id=3, base=base,
                                            head_ref=f"f{number}")
        service.deliver("pull_request", opened)
    service.drain()
    yield service


def ci_status(svc: Service, sha: str, state: str, *, context: str = "ci/build", at: datetime = T0,
              head_of: str | None = "main") -> None:
    payload = fixture("status", "with-installation.payload.json")
    payload.update(sha=sha, state=state, context=context, created_at=at.isoformat(), updated_at=at.isoformat())
    payload["repository"] = samples.repository(REPO)
    payload["installation"] = {"id": 3}
    payload["branches"] = [{"name": "main", "commit": {"sha": sha if head_of == "main" else "f" * 40},
                            "protected": True}]
    assert svc.deliver("status", payload).status_code == 202
    svc.drain()


def check_run(svc: Service, sha: str, conclusion: str, *, name: str = "test", at: datetime = T0) -> None:
    payload = {"action": "completed", "repository": samples.repository(REPO), "installation": {"id": 3},
               "sender": samples.user("github-actions[bot]", kind="Bot"),
               "check_run": {"id": 1, "name": name, "head_sha": sha, "status": "completed",
                             "conclusion": conclusion, "completed_at": at.isoformat().replace("+00:00", "Z"),
                             "check_suite": {"id": 2, "head_branch": "main", "head_sha": sha}}}
    assert svc.deliver("check_run", payload).status_code == 202
    svc.drain()


def state_of(emu: GitHubEmulator, number: int) -> tuple[str, str]:
    found = emu.latest_status(REPO, samples.head_sha(REPO, number)) or {}
    return found.get("state", ""), found.get("description", "")


def test_red_closes_main_and_green_on_a_later_head_reopens(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    assert state_of(emu, INTO_MAIN)[0] == "success"
    ci_status(svc, "a" * 40, "failure")
    state, description = state_of(emu, INTO_MAIN)
    assert state == "failure" and "main is red: ci/build failed on aaaaaaa" in description
    assert state_of(emu, INTO_DEVELOP)[0] == "success", "only PRs into main"
    ci_status(svc, "a" * 40, "failure", at=T0 + timedelta(seconds=5))  # the same news again: no new write
    posts = len(emu.status_posts())
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=10))
    assert state_of(emu, INTO_MAIN) == ("success", "No holds")
    assert len(emu.status_posts()) == posts + 1
    history = [f[b"event"] for _i, f in svc.redis.xrange(keys.history(REPO))]  # type: ignore[union-attr,index]
    assert history.count(b"tree.closed") == 1 and history.count(b"tree.opened") == 1


def test_late_and_unwatched_results_change_nothing(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=10))
    ci_status(svc, "a" * 40, "failure", at=T0)  # older than the green one: stale
    ci_status(svc, "c" * 40, "failure", context="lint", at=T0 + timedelta(minutes=11))  # not watched
    ci_status(svc, "d" * 40, "failure", at=T0 + timedelta(minutes=12), head_of=None)  # not main's head
    assert state_of(emu, INTO_MAIN)[0] == "success"


def test_check_runs_close_too_and_every_red_context_must_go_green(svc: Service,
                                                                  github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    check_run(svc, "a" * 40, "failure", at=T0)
    ci_status(svc, "a" * 40, "error", at=T0 + timedelta(seconds=1))
    assert "(+1 more)" in state_of(emu, INTO_MAIN)[1]
    check_run(svc, "b" * 40, "success", at=T0 + timedelta(minutes=5))
    assert state_of(emu, INTO_MAIN)[0] == "failure", "ci/build is still red"
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=6))
    assert state_of(emu, INTO_MAIN)[0] == "success"


def test_reopening_lifts_only_its_own_hold(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    rooms.place_hold(svc.redis, f"{REPO}@main", holder="carol", holder_id="slack:T1:U1", reason="release freeze",
                     origin="#releases", now=T0)
    ci_status(svc, "a" * 40, "failure")
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=1))
    state, description = state_of(emu, INTO_MAIN)
    assert state == "failure" and "release freeze" in description
    holds = [json.loads(v)["id"] for v in svc.redis.hvals(keys.room_holds(REPO))]
    assert holds == ["room:slack:T1:U1:acme/widgets@main"]
