"""The fan-out of a room hold at the GitHub emulator: every verdict record written at once, every open PR's
status posted once through the funnel, most-mergeable first, pagination followed, writes paced, rate limits
pausing every worker, and resumption after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from github import GithubException
from redis import Redis
from requests.exceptions import RetryError
from rq.registry import StartedJobRegistry

from core import keys
from core.prstate import PullState, Register, record_review
from state import store
from tests.chat_support import emulated_service, head_sha, latest, seed_repo
from tests.e2e_support import ROOT, Service, service_env
from tests.emulator import GitHubEmulator
from tests.paced_gateway import PacedGateway, RateLimited
from workers.chat.rooms import lift_holds, place_hold
from workers.publishing.fanout import Progress, request_fanout, request_repo_fanout
from workers.publishing.pacing import Pacer, SlotTooFar, rate_limit_wait

REPO = "acme/widgets"
HELD = "Held by @dana in slack:acme/#releases: incident 4711"
FAST = 600_000.0
"""Writes a minute in tests that are not about the pace: one slot a millisecond."""


def hold(redis: Redis, scope: str = REPO) -> None:
    place_hold(redis, scope, holder="dana", holder_id="slack:T1:U1", reason="incident 4711",
               origin="slack:acme/#releases", now=datetime.now(UTC))


def review(register: Register, reviewer: str, state: PullState) -> PullState:
    return record_review(state, reviewer, register)


def approve(redis: Redis, number: int, *, reviewer: str = "rita", held: bool = False) -> None:
    register = Register(at=datetime(2026, 1, 5, tzinfo=UTC), held=held, ref=str(number * 10 + held))
    store.update_pull(redis, REPO, number, partial(review, register, reviewer))


def posted_numbers(emulator: GitHubEmulator, repo: str = REPO) -> list[int]:
    by_sha = {head_sha(repo, n): n for n in range(1, 1001)}
    return [by_sha[s["sha"]] for s in emulator.status_posts() if s["repo"].lower() == repo]


def list_calls(emulator: GitHubEmulator, repo: str = REPO) -> int:
    return emulator.count("GET", rf"^/repos/{repo}/pulls$")


def test_a_repo_hold_over_250_prs_posts_each_status_once_most_mergeable_first(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    seed_repo(github_emulator, redis_client, REPO, 250, drafts=range(1, 11))
    for number in (50, 100, 150, 3):
        approve(redis_client, number)
    approve(redis_client, 200)
    approve(redis_client, 200, reviewer="carl", held=True)  # approved, but changes requested too
    hold(redis_client)
    assert request_fanout(svc.rt, REPO) == [REPO]
    svc.drain()

    others = [n for n in range(250, 10, -1) if n not in (50, 100, 150)]
    assert posted_numbers(github_emulator) == [150, 100, 50, *others, *range(10, 0, -1)]
    described = {head_sha(REPO, n): HELD for n in range(1, 251)}
    described[head_sha(REPO, 200)] = "Changes requested by @carl (+1 more)"  # the older hold comes first
    assert {s["sha"]: s["description"] for s in github_emulator.status_posts()} == described
    assert {s["state"] for s in github_emulator.status_posts()} == {"failure"}
    pages = [r for r in github_emulator.requests if r.method == "GET" and r.path == f"/repos/{REPO}/pulls"]
    assert len(pages) == 3 and all(r.query.get("per_page") == "100" for r in pages[:1])
    progress = Progress.read(redis_client, REPO)
    assert (progress.want, progress.gen, progress.done, progress.total, progress.queued) == (1, 1, 1, 250, 250)

    # The same again: nothing differs, so nothing is posted, and a fresh listing is reused.
    request_fanout(svc.rt, REPO)
    svc.drain()
    assert len(github_emulator.status_posts()) == 250 and list_calls(github_emulator) == 3


def test_requests_coalesce_into_one_pass(github_emulator: GitHubEmulator, redis_client: Redis,
                                         redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    seed_repo(github_emulator, redis_client, REPO, 30)
    hold(redis_client)
    queued = [request_repo_fanout(svc.rt, REPO) for _ in range(5)]
    assert queued == [True, False, False, False, False]
    svc.drain()
    assert len(github_emulator.status_posts()) == 30 and list_calls(github_emulator) == 1
    assert Progress.read(redis_client, REPO).done == 5


def test_a_long_fanout_goes_on_in_slices_under_one_run(github_emulator: GitHubEmulator, redis_client: Redis,
                                                        redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600.0, write_burst=1)  # 0.1 s apart
    seed_repo(github_emulator, redis_client, REPO, 12)
    hold(redis_client)
    request_repo_fanout(svc.rt, REPO, slice_seconds=0.0)  # one PR recorded per slice
    svc.drain()
    assert sorted(posted_numbers(github_emulator)) == list(range(1, 13)) and list_calls(github_emulator) == 1
    bulk = svc.rt.bulk("inst-1")  # fan-outs run on their installation's bulk queue
    finished = bulk.finished_job_registry
    results = [job.return_value() for job in (bulk.fetch_job(j) for j in finished.get_job_ids())
               if job is not None and job.func_name == "workers.publishing.fanout.fanout_job"]
    assert len([r for r in results if str(r).startswith("continued at")]) >= 3
    assert results.count("done") == 1
    assert len({job.args[1] for job in (bulk.fetch_job(j) for j in finished.get_job_ids())
                if job is not None and job.func_name == "workers.publishing.fanout.fanout_job"}) == 1  # one run token
    assert redis_client.get(keys.fanout_lease(REPO)) is None  # released at the end


def test_an_org_hold_fans_out_over_every_managed_repo_of_the_org(github_emulator: GitHubEmulator,
                                                                  redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    seed_repo(github_emulator, redis_client, "acme/widgets", 3)
    seed_repo(github_emulator, redis_client, "acme/gadgets", 2)
    seed_repo(github_emulator, redis_client, "acme-labs/tools", 2, installation_id=2)
    hold(redis_client, "acme")
    assert request_fanout(svc.rt, "acme") == ["acme/gadgets", "acme/widgets"]
    svc.drain()
    assert sorted(posted_numbers(github_emulator, "acme/widgets")) == [1, 2, 3]
    assert sorted(posted_numbers(github_emulator, "acme/gadgets")) == [1, 2]
    assert posted_numbers(github_emulator, "acme-labs/tools") == []
    assert latest(github_emulator, "acme/gadgets", 2) is not None


def test_a_pr_github_refuses_is_skipped_and_the_others_go_on(github_emulator: GitHubEmulator,
                                                              redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    seed_repo(github_emulator, redis_client, REPO, 4)
    github_emulator.inject("POST", rf"/statuses/{head_sha(REPO, 2)}$", 422, times=None,
                           body={"message": "No commit found for SHA"})
    hold(redis_client)
    request_fanout(svc.rt, REPO)
    svc.drain()  # fails the test if the job failed
    assert sorted(posted_numbers(github_emulator)) == [1, 3, 4]
    history: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.history(REPO))  # type: ignore[assignment]
    skipped = [e for _, e in history if e[b"event"] == b"status.skipped"]
    assert len(skipped) == 1 and Progress.read(redis_client, REPO).done == 1
    assert svc.verdict(REPO, 2)["held"] is True  # type: ignore[index]  # recorded all the same
    assert redis_client.zcard(keys.outbox("inst-1")) == 0  # nothing left blocking the outbox


# --- the pacer -------------------------------------------------------------------------------------


def test_the_pacer_hands_out_one_slot_per_interval_across_workers(redis_client: Redis) -> None:
    one, other = Pacer(redis_client, 60, "inst-1"), Pacer(redis_client, 60, "inst-1")
    waits = [p.reserve() for p in (one, other, one, other, one)]
    assert [round(w or 0) for w in waits] == [0, 1, 2, 3, 4]
    assert all(abs((w or 0) - round(w or 0)) < 0.1 for w in waits)
    # Another installation has its own budget.
    assert Pacer(redis_client, 60, "inst-2").reserve() == 0
    # A slot further than the caller will wait is not taken.
    assert one.reserve(max_wait=0.5) is None
    assert one.counters() == {"granted": 5, "pauses": 0}
    with pytest.raises(SlotTooFar) as far:
        other.acquire(max_wait=1.0)
    assert 4 < far.value.seconds <= 5


def test_a_pause_holds_every_worker_back(redis_client: Redis) -> None:
    one, other = Pacer(redis_client, 6000, "inst-1"), Pacer(redis_client, 6000, "inst-1")
    assert one.pause(2.0) == pytest.approx(2.0, abs=0.05)
    assert one.pause(0.5) == pytest.approx(2.0, abs=0.05)  # a shorter pause never shortens a longer one
    assert other.reserve() == pytest.approx(2.0, abs=0.05)
    assert other.paused_for() == pytest.approx(2.0, abs=0.05)
    slept: list[float] = []
    Pacer(redis_client, 6000, "inst-3", sleep=slept.append).acquire()
    assert slept == []


def test_a_fanout_is_paced_at_the_configured_rate(github_emulator: GitHubEmulator, redis_client: Redis,
                                                  redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=300.0,
                           write_burst=1)  # one write per 0.2 s
    seed_repo(github_emulator, redis_client, REPO, 6)
    hold(redis_client)
    request_fanout(svc.rt, REPO)
    started = time.monotonic()
    svc.drain()
    took = time.monotonic() - started
    assert len(github_emulator.status_posts()) == 6
    assert 1.0 <= took < 3.0  # five intervals between six writes
    assert Pacer(redis_client, 300.0, "inst-1").counters()["granted"] == 6


def test_a_rate_limit_answer_pauses_the_pacer(github_emulator: GitHubEmulator, redis_client: Redis,
                                              redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url)
    seed_repo(github_emulator, redis_client, REPO, 1)
    gateway = PacedGateway(svc.rt.github, Pacer(redis_client, FAST, "inst-1"), default_pause=1.5)
    payload = {"state": "failure", "context": "merge-hold", "description": HELD}
    # More refusals than PyGithub's retry tries (each after its retry-after): the gateway gets them.
    github_emulator.inject("POST", r"/statuses/", 403, headers={"retry-after": "0"}, times=4,
                           body={"message": "You have exceeded a secondary rate limit."})
    with pytest.raises(RateLimited) as limited:
        gateway.post_status(REPO, head_sha(REPO, 1), payload)
    assert limited.value.seconds == pytest.approx(1.5, abs=0.05)
    another_worker = Pacer(redis_client, FAST, "inst-1")
    assert another_worker.paused_for() == pytest.approx(1.5, abs=0.1)
    started = time.monotonic()
    gateway.post_status(REPO, head_sha(REPO, 1), payload)
    assert time.monotonic() - started >= 1.3
    assert len(github_emulator.status_posts()) == 1 and gateway.writes == 1


def _github_error(status: int, message: str, headers: dict[str, str]) -> GithubException:
    return GithubException(status, {"message": message}, headers)


@pytest.mark.parametrize(("error", "wait"), [
    (_github_error(403, "You have exceeded a secondary rate limit", {"Retry-After": "7"}), 7.0),
    (_github_error(429, "Too many requests", {"retry-after": " 12 "}), 12.0),
    (_github_error(403, "API rate limit exceeded", {"x-ratelimit-remaining": "0",
                                                   "x-ratelimit-reset": "1000030"}), 30.0),
    (_github_error(403, "You have exceeded a secondary rate limit", {}), 60.0),
    (_github_error(429, "", {}), 60.0),
    (_github_error(403, "Resource not accessible by integration", {}), None),
    (_github_error(422, "Validation Failed", {"retry-after": "5"}), None),
    (_github_error(404, "Not Found", {}), None),
    (RetryError("Max retries exceeded (Caused by ResponseError('too many 403 error responses'))"), 60.0),
    (RetryError("Max retries exceeded (Caused by ResponseError('too many 502 error responses'))"), None),
    # A 5xx from a port or a SHA that holds "403": not a rate limit (it paused every writer for a minute;
    # seen as a flake of tests/test_expedite.py when the emulator's port was 40329).
    (RetryError("HTTPConnectionPool(host='127.0.0.1', port=40329): Max retries exceeded with url: /repos/acme/"
                "express/statuses/9f4031d429aa (Caused by ResponseError('too many 502 error responses'))"), None),
    (RetryError("Max retries exceeded with url: /repos/a/b/statuses/5 (Caused by ResponseError('too many 429 "
                "error responses'))"), 60.0),
    (ValueError("429"), None),
])
def test_rate_limit_answers_are_told_from_other_errors(error: BaseException, wait: float | None) -> None:
    assert rate_limit_wait(error, now=1_000_000.0) == wait


# --- crashes and changes during a fan-out ----------------------------------------------------------


def _wait_for(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def _worker(svc: Service) -> subprocess.Popen[bytes]:
    # --fork: these tests kill the work-horse that runs the job, apart from the worker that supervises it.
    env = {**service_env(svc.settings), "MERGE_HOLD_WRITE_RATE": str(svc.settings.write_rate_per_minute),
           "MERGE_HOLD_WRITE_BURST": str(svc.settings.write_burst)}
    # Its log goes to a file: an unread pipe fills up and stalls the worker mid-job.
    log = tempfile.TemporaryFile()  # noqa: SIM115 — the child holds it; closed with the test process
    return subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler", "--fork"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)


def _horse(worker: subprocess.Popen[bytes]) -> int:
    """The work-horse rq forked for the running job (the worker's only child process)."""
    children = [int(pid) for task in os.listdir(f"/proc/{worker.pid}/task")
                for pid in Path(f"/proc/{worker.pid}/task/{task}/children").read_text().split()]
    assert len(children) == 1, children
    return children[0]


def _kill_between_writes(github_emulator: GitHubEmulator, worker: subprocess.Popen[bytes], after: int,
                         interval: float) -> int:
    """SIGKILL the drain's work-horse while it waits for a write slot (half an interval after a write)."""
    _wait_for(lambda: len(github_emulator.status_posts()) >= after, 30, f"{after} statuses")
    time.sleep(interval / 2)
    pid = _horse(worker)
    os.kill(pid, signal.SIGKILL)
    return pid


def test_a_killed_work_horse_is_retried_and_resumes_without_reposting(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=300.0, write_burst=1)  # 0.2 s apart
    seed_repo(github_emulator, redis_client, REPO, 14)
    hold(redis_client)
    request_fanout(svc.rt, REPO)
    worker = _worker(svc)
    try:
        _kill_between_writes(github_emulator, worker, 6, 0.2)
        assert worker.wait(timeout=60) == 0
    finally:
        worker.kill()
    assert sorted(posted_numbers(github_emulator)) == list(range(1, 15))  # each exactly once
    assert all((latest(github_emulator, REPO, n) or {}).get("description") == HELD for n in range(1, 15))
    assert list_calls(github_emulator) == 1  # the resumed run did not list again
    assert svc.rt.bulk("inst-1").failed_job_registry.count == 0
    assert Progress.read(redis_client, REPO).done == 1
    assert redis_client.get(keys.outbox_lease("inst-1")) is None  # the retried drain took its lease over


def test_a_dead_worker_is_resumed_by_rqs_abandoned_job_cleanup(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=300.0, write_burst=1)
    seed_repo(github_emulator, redis_client, REPO, 12)
    hold(redis_client)
    request_fanout(svc.rt, REPO)
    worker = _worker(svc)
    try:
        _kill_between_writes(github_emulator, worker, 4, 0.2)
        worker.kill()  # the worker itself dies too: nobody is left to notice the horse's death
        worker.wait(timeout=10)
    finally:
        worker.kill()
    bulk = svc.rt.bulk("inst-1")  # fan-outs run on their installation's bulk queue
    assert bulk.count == 0
    # What rq's maintenance does once the dead worker's heartbeat has lapsed (fast-forwarded here).
    StartedJobRegistry(queue=bulk).cleanup(timestamp=time.time() + 24 * 3600)
    assert bulk.count == 1
    svc.drain()
    assert sorted(posted_numbers(github_emulator)) == list(range(1, 13))
    assert list_calls(github_emulator) == 1


def test_a_lift_during_the_fanout_leaves_every_pr_free(github_emulator: GitHubEmulator, redis_client: Redis,
                                                       redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=2000.0, write_burst=1)  # 30 ms apart
    seed_repo(github_emulator, redis_client, REPO, 60)
    hold(redis_client)
    request_fanout(svc.rt, REPO)
    worker = _worker(svc)
    try:
        _wait_for(lambda: len(github_emulator.status_posts()) >= 20, 30, "20 statuses")
        assert [h.scope for h in lift_holds(redis_client, REPO, actor="erin", origin="slack:acme/#releases")] == [REPO]
        request_fanout(svc.rt, REPO)
        assert worker.wait(timeout=60) == 0
    finally:
        worker.kill()
    held_first = [n for n, s in zip(posted_numbers(github_emulator), github_emulator.status_posts(), strict=True)
                  if s["state"] == "failure"]
    assert 20 <= len(held_first) < 60
    for number in range(1, 61):
        assert (latest(github_emulator, REPO, number) or {}).get("state") == "success", number
    assert len(github_emulator.status_posts()) == 60 + len(held_first)  # only the held ones were posted again
    assert redis_client.scard(keys.held_prs(REPO)) == 0


def test_a_hold_expires_on_its_own(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    seed_repo(github_emulator, redis_client, REPO, 2)
    now = datetime.now(UTC)
    place_hold(redis_client, REPO, holder="dana", holder_id="slack:T1:U1", reason="deploy", origin="slack:a/#b",
               now=now, duration=timedelta(hours=2))
    request_fanout(svc.rt, REPO)
    svc.drain()
    wake = [svc.rt.queue.fetch_job(j) for j in svc.rt.queue.scheduled_job_registry.get_job_ids()]
    assert sorted(j.args for j in wake if j is not None) == [(REPO, 1), (REPO, 2)]
    from tests.publish_now import publish

    assert publish(svc.rt, REPO, 1, now + timedelta(hours=2)) == "posted"
    assert (latest(github_emulator, REPO, 1) or {}).get("description") == "No holds"
