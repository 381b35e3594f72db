"""Two tenants on one service: installation A (`bigco`, several repos of open PRs) and installation B
(`acme`, one repo). B's hold is never queued behind A's bulk work (a bootstrap, a fan-out), A's bulk
work is never starved by a stream of B's deliveries, bulk work gives way between slices, and one drain
per outbox waits at a time. Judged by queue order and jobs run, one job at a time (no clock)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from redis import Redis

from core import keys
from merge_hold import samples
from state.queueing import all_queues, bulk_name, enqueue_delivery
from tests.chat_support import emulated_service, head_sha, seed_repo
from tests.e2e_support import Service, fixture
from tests.emulator import GitHubEmulator
from workers.chat.rooms import place_hold
from workers.ops.tenants import tenant_worker, work
from workers.publishing.fanout import request_fanout
from workers.publishing.outbox import enqueue_drain

A_REPOS = [f"bigco/service-{i}" for i in range(3)]
A_PRS = 12
B_REPO = "acme/widgets"
FAST = 600_000.0
_ids = itertools.count(5000)


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    service = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    github_emulator.add_installation(1, "bigco")
    for repo in A_REPOS:
        github_emulator.add_repo(repo, installation_id=1)
        for number in range(1, A_PRS + 1):
            github_emulator.add_pull(repo, number, head_sha=head_sha(repo, number), head_ref=f"t-{number}",
                                     updated_at=1_767_000_000 + number)
    seed_repo(github_emulator, redis_client, B_REPO, 1, installation_id=2)
    github_emulator.set_permission(B_REPO, "alice", "write")
    return service


def step(svc: Service, jobs: int = 1) -> None:
    """Run exactly ``jobs`` jobs (or fewer, when every queue empties) with a worker of the new layout."""
    work(tenant_worker(svc.rt.queue), burst=True, max_jobs=jobs, with_scheduler=False)


def a_bootstrap(svc: Service) -> None:
    created = fixture("installation", "created.payload.json")
    created["installation"]["id"] = 1
    created["installation"]["account"]["login"] = "bigco"
    created["repositories"] = [{"full_name": r, "private": False} for r in A_REPOS]
    enqueue_delivery(svc.rt.queue, "installation", "a-install", samples.encode(created))
    step(svc)  # the delivery: one bootstrap job per repo on A's bulk queue, nothing on the interactive one


def a_fanout(svc: Service) -> None:
    for repo in A_REPOS:
        seed_repo_meta(svc, repo)
    place_hold(svc.redis, "bigco", holder="dana", holder_id="slack:T1:U1", reason="freeze",
               origin="slack:bigco/#ops", now=datetime.now(UTC))
    assert request_fanout(svc.rt, "bigco") == sorted(A_REPOS)


def seed_repo_meta(svc: Service, repo: str) -> None:
    from state import store

    store.save_repo(svc.redis, repo, store.RepoMeta(installation_id=1, config_loaded=True))


def b_hold(svc: Service) -> str:
    payload = samples.issue_comment_event(B_REPO, 1, body="/hold release blocker", commenter="alice",
                                          at=datetime.now(UTC), comment_id=next(_ids), installation_id=2)
    return enqueue_delivery(svc.rt.queue, "issue_comment", f"b-{next(_ids)}", samples.encode(payload))


def a_bulk_waiting(svc: Service) -> int:
    return int(svc.redis.llen(f"rq:queue:{bulk_name(svc.rt.queue.name, 'inst-1')}"))


def a_statuses(emu: GitHubEmulator) -> int:
    return sum(emu.latest_status(repo, head_sha(repo, n)) is not None for repo in A_REPOS for n in range(1, A_PRS + 1))


def b_status(emu: GitHubEmulator) -> str | None:
    found = emu.latest_status(B_REPO, head_sha(B_REPO, 1))
    return None if found is None else str(found["description"])


@pytest.mark.parametrize("start", [a_bootstrap, a_fanout], ids=["A bootstraps", "A fans out an org hold"])
def test_bs_hold_is_next_whatever_a_has_queued(svc: Service, github_emulator: GitHubEmulator,
                                               start: Callable[[Service], None]) -> None:
    start(svc)
    step(svc, 3)  # A's bulk work under way
    assert a_bulk_waiting(svc) > 0 and svc.rt.queue.count == 0  # A's work is all on its own bulk queue
    job_id = b_hold(svc)
    assert svc.rt.queue.job_ids == [job_id]  # nothing of A's ahead of it
    step(svc)  # the very next job a worker takes is B's delivery: its status is posted by it
    assert (b_status(github_emulator) or "").startswith("Held by @alice")
    assert a_bulk_waiting(svc) > 0 and a_statuses(github_emulator) < len(A_REPOS) * A_PRS  # A still at it
    step(svc, 10_000)
    assert a_statuses(github_emulator) == len(A_REPOS) * A_PRS
    assert not any(q.failed_job_registry.count for q in all_queues(svc.rt.queue))


def test_a_bootstrap_queues_one_job_per_repo_not_per_pr(svc: Service) -> None:
    a_bootstrap(svc)
    assert a_bulk_waiting(svc) == len(A_REPOS) and svc.rt.queue.count == 0
    step(svc, 10_000)
    assert svc.redis.scard(keys.open_prs(A_REPOS[0])) == A_PRS


def run_next_bulk_job(svc: Service) -> str:
    """Take A's next bulk job and run it here, as a worker that took it just before B's delivery came."""
    bulk = next(q for q in all_queues(svc.rt.queue) if q.name == bulk_name(svc.rt.queue.name, "inst-1"))
    job = bulk.fetch_job(bulk.job_ids[0])
    assert job is not None
    bulk.remove(job.id)
    return str(job.perform())


def test_as_bulk_work_is_not_starved_by_a_stream_of_bs_deliveries(svc: Service,
                                                                  github_emulator: GitHubEmulator) -> None:
    """A delivery of B's waits while every bulk job of A's runs: each slice still records a PR (or
    writes a status) before it gives way, so A's bootstrap finishes."""
    a_bootstrap(svc)
    for _ in range(400):
        if not a_bulk_waiting(svc):
            break
        b_hold(svc)
        run_next_bulk_job(svc)
        step(svc)  # B's delivery
    assert a_statuses(github_emulator) == len(A_REPOS) * A_PRS


def test_a_fanout_gives_way_to_a_waiting_delivery(svc: Service) -> None:
    """A fan-out slice whose time is not used up still ends as soon as an interactive job waits."""
    a_fanout(svc)
    b_hold(svc)  # waiting before A's first slice starts
    bulk = all_queues(svc.rt.queue)[1]
    fanout_id = bulk.job_ids[0]
    # Run A's first fan-out job directly, as a worker that took it before B's delivery came.
    job = bulk.fetch_job(fanout_id)
    assert job is not None and job.func_name == "workers.publishing.fanout.fanout_job"
    bulk.remove(fanout_id)
    outcome = job.perform()
    assert str(outcome).startswith("continued at 1/")  # one PR recorded, then it gave way
    assert svc.rt.queue.count == 1  # B's delivery is next


def test_one_drain_waits_per_outbox(svc: Service) -> None:
    svc.redis.zadd(keys.outbox("inst-1"), {"bigco/service-0#1": 1})
    asked = [enqueue_drain(svc.rt, "inst-1") for _ in range(5)]
    assert asked == [True, False, False, False, False]
    svc.redis.set(keys.outbox_lease("inst-2"), "someone")  # a drain running there looks again before it lets go
    assert enqueue_drain(svc.rt, "inst-2") is False
    assert enqueue_drain(svc.rt, "inst-2", token="its-own-run") is True  # a run's own continuation
    step(svc)  # the waiting drain starts: the next one asked for is queued
    assert enqueue_drain(svc.rt, "inst-1") is True


def test_the_reconcile_gives_way_between_repos(svc: Service, github_emulator: GitHubEmulator) -> None:
    """The scheduled reconcile is bulk work too: with a delivery waiting it hands on after one repo."""
    from workers.ops.reconcile import reconcile_job

    for repo in A_REPOS:
        seed_repo_meta(svc, repo)
    b_hold(svc)
    assert reconcile_job() == "continued after acme/widgets"  # the first repo of the sorted managed ones
    global_bulk = next(q for q in all_queues(svc.rt.queue) if q.name == bulk_name(svc.rt.queue.name, "global"))
    (continued,) = [global_bulk.fetch_job(i) for i in global_bulk.job_ids]
    assert continued is not None and continued.args == ("acme/widgets", 0)
    step(svc)  # B's delivery first
    assert (b_status(github_emulator) or "").startswith("Held by @alice")
    step(svc, 10_000)
    assert not any(q.count for q in all_queues(svc.rt.queue))
