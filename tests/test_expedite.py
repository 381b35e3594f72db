"""In-delivery recomputes (`workers.publishing.in_delivery`): a delivery job writes the status it caused itself, and the
recompute job written with the state change stays a backstop that is cancelled only once that is done
— left scheduled if the worker dies first, released to the queue at once if the in-process run cannot
happen. Real Redis, real rq, the GitHub emulator as a real App."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from redis import Redis

from core import keys
from merge_hold import samples
from tests.chat_support import emulated_service, latest, seed_repo
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from workers.events.dispatch import handle_delivery
from workers.ops.tenants import burst
from workers.publishing import in_delivery
from workers.publishing.in_delivery import open_delivery
from workers.publishing.locks import pr_lock
from workers.publishing.outbox import URGENT_CEILING
from workers.publishing.request import RECOMPUTE_JOB, request_recompute

REPO = "acme/express"
STATUSES = r"^/repos/[^/]+/[^/]+/statuses/"


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_url: str, redis_client: Redis) -> Service:
    # redis_client: a flushed database per test
    service = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0)
    seed_repo(github_emulator, service.redis, REPO, 3)
    github_emulator.set_permission(REPO, "alice", "write")
    return service


def comment(number: int, body: str, comment_id: int) -> samples.Delivery:
    payload = samples.issue_comment_event(REPO, number, body=body, commenter="alice", at=datetime.now(UTC),
                                          comment_id=comment_id, installation_id=1)
    return samples.delivery("issue_comment", payload)


def deliver(delivery: samples.Delivery) -> str:
    return handle_delivery(delivery.event, delivery.delivery_id, delivery.body)


def statuses_owed(svc: Service) -> int:
    """Statuses waiting on the outbox (a held PR's check run waits there too, after them, for the drain job)."""
    return int(svc.redis.zcount(keys.outbox("inst-1"), "-inf", f"({URGENT_CEILING}"))


def recompute_jobs(svc: Service) -> tuple[list[str], list[str]]:
    """(queued, scheduled) recompute job ids."""
    queue = svc.rt.queue
    queued = [j.id for j in queue.jobs if j.func_name == RECOMPUTE_JOB]
    scheduled = [i for i in queue.scheduled_job_registry.get_job_ids()
                 if (job := queue.fetch_job(i)) is not None and job.func_name == RECOMPUTE_JOB]
    return queued, scheduled


def test_a_delivery_writes_its_status_itself_and_leaves_no_job(svc: Service, github_emulator: GitHubEmulator) -> None:
    assert deliver(comment(1, "/hold waiting for QA", 101)) == "applied"
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"
    assert recompute_jobs(svc) == ([], [])
    assert not svc.redis.exists(keys.recompute_queued(REPO, 1))
    assert statuses_owed(svc) == 0


def test_a_busy_pr_lock_sends_the_backstop_to_the_queue_at_once(svc: Service, github_emulator: GitHubEmulator) -> None:
    """Another worker writes the PR: the delivery does not wait for it; the backstop job is queued."""
    lock = pr_lock(svc.redis, REPO, 2)
    assert lock.acquire(blocking=False)
    started = time.monotonic()
    deliver(comment(2, "/hold until Friday", 102))
    assert time.monotonic() - started < in_delivery.LOCK_WAIT + 5
    assert latest(github_emulator, REPO, 2) is None
    queued, scheduled = recompute_jobs(svc)
    assert (len(queued), scheduled) == (1, [])
    lock.release()
    burst(svc.rt.queue, with_scheduler=False)
    assert (latest(github_emulator, REPO, 2) or {}).get("state") == "failure"


def test_github_failing_in_process_leaves_the_write_to_the_backstop(svc: Service,
                                                                   github_emulator: GitHubEmulator) -> None:
    github_emulator.inject("POST", STATUSES, 502, times=None)
    deliver(comment(3, "/hold", 103))
    assert latest(github_emulator, REPO, 3) is None
    queued, scheduled = recompute_jobs(svc)
    assert (len(queued), scheduled) == (1, [])
    assert statuses_owed(svc) == 1  # still owed
    github_emulator.clear_faults()
    burst(svc.rt.queue, with_scheduler=False)
    assert (latest(github_emulator, REPO, 3) or {}).get("state") == "failure"


def test_a_worker_dying_before_the_run_leaves_a_scheduled_backstop(svc: Service) -> None:
    """Asked for inside a delivery, the recompute is written with the state as a job due in a few
    seconds: whatever happens to the worker afterwards, rq's scheduler queues it then."""
    collected, inside = open_delivery(svc.rt)
    assert request_recompute(inside, REPO, 1)
    queued, scheduled = recompute_jobs(svc)
    assert (queued, len(scheduled)) == ([], 1)
    due = svc.rt.queue.scheduled_job_registry.get_scheduled_time(scheduled[0])
    assert 0 < (due - datetime.now(UTC)).total_seconds() <= in_delivery.BACKSTOP_SECONDS + 1
    assert [a.job_id for a in collected.asked()] == scheduled
    assert in_delivery.cancel_backstop(svc.rt.queue, scheduled[0])
    assert not in_delivery.cancel_backstop(svc.rt.queue, scheduled[0])  # gone: nothing to take twice
    assert recompute_jobs(svc) == ([], [])


def test_a_repo_wide_event_expedites_a_few_and_queues_the_rest(svc: Service) -> None:
    _scope, delivery = open_delivery(svc.rt)
    for number in range(1, in_delivery.MAX_INLINE + 3):
        request_recompute(delivery, REPO, number)
    queued, scheduled = recompute_jobs(svc)
    assert (len(queued), len(scheduled)) == (2, in_delivery.MAX_INLINE)


def test_a_delivery_run_again_after_its_worker_died_writes_at_once(svc: Service,
                                                                    github_emulator: GitHubEmulator) -> None:
    """The first run recorded the state and its backstop, then died: the watchdog's re-run finds the
    state unchanged and the verdict older, and recomputes in-process instead of waiting on the backstop
    (rq's scheduler lock may have died with that worker)."""
    import json

    from workers.events.comments import on_issue_comment

    delivery = comment(1, "/hold until the migration", 106)
    on_issue_comment(open_delivery(svc.rt)[1], json.loads(delivery.body))  # the first run, cut short
    assert latest(github_emulator, REPO, 1) is None
    assert deliver(delivery) == "unchanged"
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"


@pytest.mark.parametrize(("asked_on", "queued", "scheduled"), [
    ("no delivery", 1, 0),  # a job of its own: queued at once
    ("the delivery", 0, 1),  # inside the delivery: a backstop, the delivery runs it
    ("a sibling runtime", 1, 0),  # the scope is handed down, not in the air: a runtime without it queues
    ("the closed delivery", 1, 0),  # asked for after its recomputes ran (a reply): nothing would run it
])
def test_the_delivery_scope_a_recompute_is_asked_in_decides_its_job(svc: Service, asked_on: str, queued: int,
                                                                   scheduled: int) -> None:
    delivery, inside = open_delivery(svc.rt)
    if asked_on == "the closed delivery":
        delivery.close()
    rt = inside if asked_on in ("the delivery", "the closed delivery") else svc.rt
    assert request_recompute(rt, REPO, 1)
    assert tuple(map(len, recompute_jobs(svc))) == (queued, scheduled)
    assert len(delivery.asked()) == scheduled


def test_a_reply_put_off_runs_after_the_recomputes_and_at_once_later(svc: Service) -> None:
    (delivery, inside), ran = open_delivery(svc.rt), []
    in_delivery.after_delivery(svc.rt, lambda: ran.append("outside"))  # no delivery: at once
    in_delivery.after_delivery(inside, lambda: ran.append("reply"))
    assert ran == ["outside"]  # the reply is deferred: the statuses go first
    delivery.close()  # what the delivery job does once its recomputes ran
    delivery.defer(lambda: ran.append("late"))  # the delivery is over: nothing to wait for
    assert ran == ["outside", "reply", "late"]
