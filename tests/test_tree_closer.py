"""The tree closer end to end: a red named status or check run on main's head holds every PR into
main, green lifts it — only merge-hold's own hold (signed webhooks, real Redis and rq, the emulator)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from core import keys
from core.treecloser import Head, Result, after_push, classify, replaces
from merge_hold import samples
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from workers.chat import rooms

REPO = "acme/widgets"
INTO_MAIN, INTO_DEVELOP = 5, 6
T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
CONFIG = "close_on_failure:\n  - branch: main\n    contexts: [ci/build, test, ci-app]\n"
ZERO = "0" * 40
M4, M5, M6, M7 = "4" * 40, "5" * 40, "6" * 40, "7" * 40


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
    _EMULATORS[id(service)] = emu
    yield service
    _EMULATORS.pop(id(service), None)


_EMULATORS: dict[int, GitHubEmulator] = {}
"""The fixture's emulator per service, so that `push` moves GitHub's branch head as a real push would."""


def push(svc: Service, before: str, after: str, *, at: datetime = T0, branch: str = "main",
         emulate: bool = True) -> None:
    """A branch push as GitHub sends it (and, with ``emulate``, GitHub's branch head moved to ``after``)."""
    payload = fixture("push", "with-installation.payload.json")
    payload.update(ref=f"refs/heads/{branch}", before=before, after=after, created=before == "0" * 40,
                   deleted=after == "0" * 40, forced=False, commits=[], head_commit=None)
    payload["repository"] = {**samples.repository(REPO), "pushed_at": int(at.timestamp())}
    payload["installation"] = {"id": 3}
    if emulate:
        _EMULATORS[id(svc)].set_branch_head(REPO, branch, after)
    assert svc.deliver("push", payload).status_code == 202
    svc.drain()


def ci_status(svc: Service, sha: str, state: str, *, context: str = "ci/build", at: datetime = T0,
              head_of: str | None = "main") -> None:
    """A commit status; ``head_of`` names the branch whose head the payload's `branches[]` shows it
    to be at the event's time (None: main contains the commit, its head being another)."""
    payload = fixture("status", "with-installation.payload.json")
    payload.update(sha=sha, state=state, context=context, created_at=at.isoformat(), updated_at=at.isoformat())
    payload["repository"] = samples.repository(REPO)
    payload["installation"] = {"id": 3}
    payload["branches"] = [{"name": "main", "commit": {"sha": sha if head_of == "main" else "f" * 40},
                            "protected": True}]
    assert svc.deliver("status", payload).status_code == 202
    svc.drain()


def check_run(svc: Service, sha: str, conclusion: str, *, name: str = "test", at: datetime = T0,
              branch: str = "main") -> None:
    payload = {"action": "completed", "repository": samples.repository(REPO), "installation": {"id": 3},
               "sender": samples.user("github-actions[bot]", kind="Bot"),
               "check_run": {"id": 1, "name": name, "head_sha": sha, "status": "completed",
                             "conclusion": conclusion, "completed_at": at.isoformat().replace("+00:00", "Z"),
                             "check_suite": {"id": 2, "head_branch": branch, "head_sha": sha}}}
    assert svc.deliver("check_run", payload).status_code == 202
    svc.drain()


def check_suite(svc: Service, sha: str, conclusion: str, *, app: str = "ci-app", at: datetime = T0) -> None:
    payload = fixture("check_suite", "completed.payload.json")
    payload["repository"] = samples.repository(REPO)
    payload["installation"] = {"id": 3}
    payload["check_suite"].update(head_branch="main", head_sha=sha, after=sha, conclusion=conclusion,
                                  status="completed", updated_at=at.isoformat().replace("+00:00", "Z"),
                                  app={**payload["check_suite"]["app"], "slug": app, "name": app})
    assert svc.deliver("check_suite", payload).status_code == 202
    svc.drain()


def state_of(emu: GitHubEmulator, number: int) -> tuple[str, str]:
    found = emu.latest_status(REPO, samples.head_sha(REPO, number)) or {}
    return found.get("state", ""), found.get("description", "")


def test_red_closes_main_and_green_on_a_later_head_reopens(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    assert state_of(emu, INTO_MAIN)[0] == "success"
    push(svc, ZERO, "a" * 40)
    ci_status(svc, "a" * 40, "failure")
    state, description = state_of(emu, INTO_MAIN)
    assert state == "failure" and "main is red: ci/build failed on aaaaaaa" in description
    assert state_of(emu, INTO_DEVELOP)[0] == "success", "only PRs into main"
    ci_status(svc, "a" * 40, "failure", at=T0 + timedelta(seconds=5))  # the same news again: no new write
    posts = len(emu.status_posts())
    push(svc, "a" * 40, "b" * 40, at=T0 + timedelta(minutes=1))
    assert state_of(emu, INTO_MAIN)[0] == "failure", "a push alone never reopens"
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=10))
    assert state_of(emu, INTO_MAIN) == ("success", "No holds")
    assert len(emu.status_posts()) == posts + 1
    history = [f[b"event"] for _i, f in svc.redis.xrange(keys.history(REPO))]  # type: ignore[union-attr,index]
    assert history.count(b"tree.closed") == 1 and history.count(b"tree.opened") == 1


def test_late_and_unwatched_results_change_nothing(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, ZERO, "b" * 40)
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=10))
    ci_status(svc, "b" * 40, "failure", at=T0)  # a result of b older than its green one: stale
    ci_status(svc, "c" * 40, "failure", context="lint", at=T0 + timedelta(minutes=11))  # not watched
    ci_status(svc, "d" * 40, "failure", at=T0 + timedelta(minutes=12), head_of=None)  # not main's head
    assert state_of(emu, INTO_MAIN)[0] == "success"


def test_check_runs_close_too_and_every_red_context_must_go_green(svc: Service,
                                                                  github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, ZERO, "a" * 40)
    check_run(svc, "a" * 40, "failure", at=T0)
    ci_status(svc, "a" * 40, "error", at=T0 + timedelta(seconds=1))
    assert "(+1 more)" in state_of(emu, INTO_MAIN)[1]
    push(svc, "a" * 40, "b" * 40, at=T0 + timedelta(minutes=1))
    check_run(svc, "b" * 40, "success", at=T0 + timedelta(minutes=5))
    assert state_of(emu, INTO_MAIN)[0] == "failure", "ci/build is still red"
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=6))
    assert state_of(emu, INTO_MAIN)[0] == "success"


def test_reopening_lifts_only_its_own_hold(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    rooms.place_hold(svc.redis, f"{REPO}@main", holder="carol", holder_id="slack:T1:U1", reason="release freeze",
                     origin="#releases", now=T0)
    push(svc, ZERO, "a" * 40)
    ci_status(svc, "a" * 40, "failure")
    push(svc, "a" * 40, "b" * 40, at=T0 + timedelta(seconds=30))
    ci_status(svc, "b" * 40, "success", at=T0 + timedelta(minutes=1))
    state, description = state_of(emu, INTO_MAIN)
    assert state == "failure" and "release freeze" in description
    holds = [json.loads(v)["id"] for v in svc.redis.hvals(keys.room_holds(REPO))]
    assert holds == ["room:slack:T1:U1:acme/widgets@main"]


# --- the tree closer follows the head (issue 16 item 2) ----------------------------------------------

S = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
AFTER_PUSH_ROWS: list[tuple[str, Head | None, str, str, datetime | None, Head | None]] = [
    # (why, known head, before, after, pushed at, head after the push; None: unknown, ask GitHub)
    ("first push seen", None, M4, M5, S, Head(M5, S)),
    ("a push continuing the head", Head(M5, S), M5, M6, S + timedelta(seconds=9), Head(M6, S + timedelta(seconds=9))),
    ("a chain wins over the clock", Head(M5, S), M5, M6, S - timedelta(hours=1), Head(M6, S - timedelta(hours=1))),
    ("the same push again", Head(M6, S), M5, M6, S, Head(M6, S)),
    ("an older push delivered late", Head(M6, S), M4, M5, S - timedelta(seconds=5), Head(M6, S)),
    ("a later force-push", Head(M6, S), M4, M7, S + timedelta(seconds=5), Head(M7, S + timedelta(seconds=5))),
    ("two pushes of one second, no chain", Head(M6, S), M4, M5, S, None),
    ("a push without a time, no chain", Head(M6, S), M4, M5, None, None),
    ("a head read from GitHub without a time", Head(M6, None), M4, M5, S, None),
]


@pytest.mark.parametrize(("current", "before", "after", "at", "expected"), [r[1:] for r in AFTER_PUSH_ROWS],
                         ids=[r[0] for r in AFTER_PUSH_ROWS])
def test_after_push(current: Head | None, before: str, after: str, at: datetime | None,
                    expected: Head | None) -> None:
    assert after_push(current, before, after, at) == expected


@pytest.mark.parametrize(("stored", "result", "expected"), [
    (None, Result(M6, False, S), True),
    (Result(M5, True, S + timedelta(hours=1)), Result(M6, False, S), True),  # an older head's: always
    (Result(M6, False, S), Result(M6, True, S + timedelta(seconds=1)), True),  # a newer re-run
    (Result(M6, False, S + timedelta(seconds=1)), Result(M6, True, S), False),  # older on the same head
    (Result(M6, False, S), Result(M6, True, S), True),  # a tie: red wins
    (Result(M6, True, S), Result(M6, False, S), False),
])
def test_replaces(stored: Result | None, result: Result, expected: bool) -> None:
    assert replaces(stored, result) is expected


def late_records(svc: Service) -> list[dict[str, Any]]:
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], svc.redis.xrange(keys.history(REPO)))
    return [json.loads(f[b"data"]) for _i, f in entries if f[b"event"] == b"tree.late"]


LATE_RUN: list[tuple[str, Any]] = [
    ("status", lambda svc, sha, outcome, at: ci_status(
        svc, sha, {"success": "success", "failure": "failure"}[outcome], at=at, head_of="main")),
    ("check run", lambda svc, sha, outcome, at: check_run(svc, sha, outcome, at=at)),
    ("check suite", lambda svc, sha, outcome, at: check_suite(svc, sha, outcome, at=at)),
]


@pytest.mark.parametrize("send", [r[1] for r in LATE_RUN], ids=[r[0] for r in LATE_RUN])
def test_a_late_red_on_the_previous_head_closes_nothing(svc: Service, github_emulator: GitHubEmulator,
                                                        send: Any) -> None:
    """push m5, push m6; m6's run goes green; m5's run then goes red (its payload still naming main)."""
    emu = github_emulator
    push(svc, M4, M5, at=T0)
    push(svc, M5, M6, at=T0 + timedelta(minutes=1))
    send(svc, M6, "success", T0 + timedelta(minutes=5))
    asked = emu.count("GET", r"/branches/main$")
    send(svc, M5, "failure", T0 + timedelta(minutes=9))  # later by the clock, on an older commit
    assert state_of(emu, INTO_MAIN) == ("success", "No holds")
    assert svc.redis.hget(keys.room_holds(REPO), "treecloser:main") is None
    [late] = late_records(svc)
    assert (late["sha"], late["head"], late["result"], late["scope"]) == (M5, M6, "red", f"{REPO}@main")
    assert emu.count("GET", r"/branches/main$") == asked + 1, "GitHub asked once whether m5 became the head"
    send(svc, M5, "failure", T0 + timedelta(minutes=9))  # redelivered: recorded once
    assert len(late_records(svc)) == 1


@pytest.mark.parametrize("send", [r[1] for r in LATE_RUN], ids=[r[0] for r in LATE_RUN])
def test_a_late_green_on_the_previous_head_reopens_nothing(svc: Service, github_emulator: GitHubEmulator,
                                                           send: Any) -> None:
    emu = github_emulator
    push(svc, M4, M5, at=T0)
    push(svc, M5, M6, at=T0 + timedelta(minutes=1))
    send(svc, M6, "failure", T0 + timedelta(minutes=5))
    assert state_of(emu, INTO_MAIN)[0] == "failure"
    send(svc, M5, "success", T0 + timedelta(minutes=9))
    assert state_of(emu, INTO_MAIN)[0] == "failure", "main's head is still red"
    send(svc, M6, "success", T0 + timedelta(minutes=12))  # a re-run on the head
    assert state_of(emu, INTO_MAIN)[0] == "success"


def test_a_result_ahead_of_its_push_counts_once_github_confirms_the_head(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, M4, M5, at=T0)
    emu.set_branch_head(REPO, "main", M6)  # pushed at GitHub; its delivery is still queued
    check_run(svc, M6, "failure", at=T0 + timedelta(minutes=2))
    assert "main is red: test failed on 6666666" in state_of(emu, INTO_MAIN)[1]
    push(svc, M5, M6, at=T0 + timedelta(minutes=1), emulate=False)  # the push arrives after its result
    asked = emu.count("GET", r"/branches/main$")
    check_run(svc, M6, "success", at=T0 + timedelta(minutes=3))
    assert state_of(emu, INTO_MAIN)[0] == "success"
    assert emu.count("GET", r"/branches/main$") == asked, "a result on the known head needs no GitHub call"


def test_without_any_push_the_head_is_asked_of_github(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    emu.set_branch_head(REPO, "main", M7)
    ci_status(svc, M6, "failure", at=T0)  # main contains m6, but its head is m7
    assert state_of(emu, INTO_MAIN)[0] == "success"
    ci_status(svc, M7, "failure", at=T0 + timedelta(seconds=1))
    assert state_of(emu, INTO_MAIN)[0] == "failure"
    assert emu.count("GET", r"/branches/main$") == 1, "GitHub's answer is kept: m7's result needs no call"


def test_a_forks_branch_called_main_is_not_main(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, M4, M5, at=T0)
    check_run(svc, "f" * 40, "failure", at=T0 + timedelta(minutes=1))  # head_branch "main" of a fork's PR
    assert state_of(emu, INTO_MAIN)[0] == "success"
    assert [r["sha"] for r in late_records(svc)] == ["f" * 40]


def test_pushes_in_any_order_leave_the_latest_head(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, M5, M6, at=T0 + timedelta(minutes=1))
    push(svc, M4, M5, at=T0, emulate=False)  # delivered late: GitHub's head is m6
    asked = emu.count("GET", r"/branches/main$")
    ci_status(svc, M5, "failure", at=T0 + timedelta(minutes=2))
    assert state_of(emu, INTO_MAIN)[0] == "success"
    ci_status(svc, M6, "failure", at=T0 + timedelta(minutes=3))
    assert state_of(emu, INTO_MAIN)[0] == "failure"
    assert emu.count("GET", r"/branches/main$") == asked + 1  # only for m5's result, not on the head


def test_a_deleted_branch_has_no_head(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    push(svc, M4, M5, at=T0)
    push(svc, M5, ZERO, at=T0 + timedelta(minutes=1), emulate=False)
    assert svc.redis.hget(keys.branch_heads(REPO), "main") is None
    emu.set_branch_head(REPO, "main", M7)  # recreated at GitHub
    ci_status(svc, M5, "failure", at=T0 + timedelta(minutes=2))
    assert state_of(emu, INTO_MAIN)[0] == "success"
    assert svc.redis.hget(keys.branch_heads(REPO), "main") is not None  # GitHub's answer is kept


def test_heads_are_kept_only_for_watched_branches(svc: Service) -> None:
    push(svc, M4, M5, at=T0, branch="develop")
    push(svc, M4, M5, at=T0)
    assert set(svc.redis.hkeys(keys.branch_heads(REPO))) == {b"main"}
