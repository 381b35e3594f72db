"""Jobs queued by the flat `workers/` layout still run (issue 17): a stored job names its function by its
old dotted path (``workers.funnel.drain_job``), and a worker of the folder layout must import it there
(`core.jobs.MOVED`, resolved by `workers.__getattr__`). Real Redis, a real `merge-hold worker` process,
the GitHub emulator as a real App."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import pytest
from redis import Redis
from rq.utils import import_attribute

from core import jobs, keys
from core.freeze_gate import FREEZE_CONTEXT
from merge_hold import samples
from state import store
from tests.chat_support import emulated_service, latest, seed_repo
from tests.e2e_support import Service, worker_processes
from tests.emulator import GitHubEmulator
from workers.publishing.recompute import record

REPO = "acme/legacy"

FLAT_LAYOUT = {
    "workers.events.handle_delivery", "workers.publish.recompute_job", "workers.funnel.drain_job",
    "workers.fanout.fanout_job", "workers.freeze_marks.marks_job", "workers.freeze_sync.freeze_sync_job",
    "workers.deployments.recheck_job", "workers.tamper.answer_job", "workers.reconcile.reconcile_job",
    "workers.redeliver.sweep_job", "workers.notify.drain_job", "workers.rooms.chat_command_job",
    "workers.rooms.republish_job", "workers.dashboard_holds.dashboard_command_job",
}
"""Every job address of the release before the folders (its `core/jobs.py`), spelled out here so that a
row dropped from `MOVED` fails this test."""

MOVED_SINCE = {"workers.chat.dashboard_holds.dashboard_command_job", "workers.events.fanout.fanout_job",
               "workers.events.freeze_sync.freeze_sync_job", "workers.chat.notify.drain_job"}
"""Addresses of the folder layout that a later move changed (issue 31: the dashboard's job left chat/, the
fan-out and the freeze ruleset sync went in behind publishing's front door, a chat channel's "drain" job
became its post job: "drain" is the outbox's word)."""


BORN_IN_FOLDERS = {jobs.WEBHOOK_DELIVERY.address, jobs.FREEZE_CLOCK.address, jobs.EXEMPTION_NEWS.address,
                   jobs.CHECK_RUNS.address, jobs.EXEMPTION_REQUEST.address, jobs.BOOTSTRAP.address}
"""Jobs made after the folder layout: no stored job can name them by an older address."""


def test_every_old_address_is_kept() -> None:
    assert set(jobs.MOVED) == FLAT_LAYOUT | MOVED_SINCE
    assert {row.address for row in jobs.MOVED.values()} == {row.address for row in jobs.ALL} - BORN_IN_FOLDERS


@pytest.mark.parametrize("old", sorted(FLAT_LAYOUT | MOVED_SINCE))
def test_an_old_address_imports_the_function_its_row_names(old: str) -> None:
    # rq's own resolver, as a worker runs a stored job.
    assert import_attribute(old) is import_attribute(jobs.MOVED[old].address)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import workers

    with pytest.raises(AttributeError):
        workers.nothing_here  # noqa: B018
    with pytest.raises(ValueError):
        import_attribute("workers.funnel.no_such_job")
    with pytest.raises(ValueError):
        import_attribute("workers.chat.dashboard_holds.no_such_job")
    with pytest.raises(ValueError):
        import_attribute("workers.events.fanout.no_such_job")


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_url: str, redis_client: Redis) -> Service:
    service = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0)
    seed_repo(github_emulator, service.redis, REPO, 2)
    github_emulator.set_permission(REPO, "alice", "write")
    return service


def test_a_new_worker_drains_jobs_the_old_layout_queued(svc: Service, github_emulator: GitHubEmulator) -> None:
    """A delivery and a recompute queued under their old addresses, as an old worker left them in Redis,
    are run by a `merge-hold worker` of this layout: the hold lands and both statuses are posted."""
    payload = samples.issue_comment_event(REPO, 1, body="/hold waiting for the old jobs", commenter="alice",
                                          at=datetime.now(UTC), comment_id=901, installation_id=1)
    delivery = samples.delivery("issue_comment", payload)
    queue = svc.rt.queue
    queue.enqueue("workers.events.handle_delivery", delivery.event, delivery.delivery_id, delivery.body)
    queue.enqueue("workers.publish.recompute_job", REPO, 2)
    queue.enqueue("workers.funnel.drain_job", "inst-1")
    # The dashboard's job under the address it had in chat/ before issue 31: alice lifts her own hold on #2.
    lift = queue.enqueue("workers.chat.dashboard_holds.dashboard_command_job", REPO, 2, {
        "kind": "lift", "actor": "alice", "permission": 3, "is_author": False, "at": datetime.now(UTC).isoformat(),
        "target": "alice"})
    for worker in worker_processes(svc.settings, 1):
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()[-2000:]
    assert not queue.failed_job_registry.count, [queue.fetch_job(i).exc_info for i in  # type: ignore[union-attr]
                                                  queue.failed_job_registry.get_job_ids()]
    assert (svc.verdict(REPO, 1) or {}).get("held") is True
    lift.refresh()  # type: ignore[no-untyped-call]
    assert lift.is_finished, lift.get_status()
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"
    assert (latest(github_emulator, REPO, 2) or {}).get("state") == "success"
    assert not svc.redis.exists(keys.recompute_queued(REPO, 1))


def test_freeze_marks_an_old_worker_left_on_their_own_set_are_written(svc: Service,
                                                                      github_emulator: GitHubEmulator) -> None:
    """Before issue 31 freeze marks waited on a sorted set of their own (`core.keys.freeze_marks`) for a job
    of their own: that job, queued under the flat layout's address and under the folder layout's, moves
    them onto the outbox, and the outbox's drain writes them — the one the old set ranked urgent first."""
    from workers.publishing.outbox import RANK_SPAN

    for number in (1, 2):
        record(svc.rt, REPO, number, datetime.now(UTC))
        found = dict(store.load_verdict(svc.redis, REPO, number) or {})
        found["freeze_mark"] = {"state": "failure", "context": FREEZE_CONTEXT, "description": f"Frozen #{number}"}
        with svc.redis.pipeline() as pipe:
            store.put_verdict(pipe, REPO, number, found)
            pipe.execute()
    old = keys.freeze_marks("inst-1")
    svc.redis.zadd(old, {f"{REPO}#1": 1 * RANK_SPAN + 1, f"{REPO}#2": 0 * RANK_SPAN + 2})
    queue = svc.rt.queue
    queue.enqueue("workers.freeze_marks.marks_job", "inst-1")
    svc.rt.bulk("inst-1").enqueue(jobs.FREEZE_MARKS.address, "inst-1")
    for worker in worker_processes(svc.settings, 1):
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()[-2000:]
    assert not queue.failed_job_registry.count and not svc.rt.bulk("inst-1").failed_job_registry.count
    marks = github_emulator.status_posts(FREEZE_CONTEXT)
    assert [m["description"] for m in marks] == ["Frozen #2", "Frozen #1"]
    assert not svc.redis.exists(old) and not svc.redis.zcard(keys.outbox("inst-1"))
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "success"  # the statuses went too


def test_check_runs_an_old_worker_left_on_their_own_set_are_written(svc: Service,
                                                                    github_emulator: GitHubEmulator) -> None:
    """Before issue 31 check runs waited on a sorted set of their own (`core.keys.check_runs`) for a job of
    their own (`core.jobs.CHECK_RUNS`, on the installation's bulk queue): that job's address still runs,
    moves them onto the outbox, and the outbox's drain writes them — the click's answer (old rank 0) first."""
    from core.outbox import run_member
    from state.room_holds import place_hold
    from tests.chat_support import head_sha
    from tests.emulator.seeding import DEFAULT_PERMISSIONS
    from workers.publishing.outbox import RANK_SPAN

    github_emulator.set_installation_permissions(1, {**DEFAULT_PERMISSIONS, "checks": "write"})
    place_hold(svc.redis, REPO, holder="dana", holder_id="slack:T1:U1", reason="legacy freeze",
               origin="slack:acme/#ops", now=datetime.now(UTC))
    for number in (1, 2):
        record(svc.rt, REPO, number, datetime.now(UTC))
        svc.redis.zrem(keys.outbox("inst-1"), run_member(REPO, number))  # as an old worker: on their own set
    old = keys.check_runs("inst-1")
    svc.redis.zadd(old, {f"{REPO}#1": 2 * RANK_SPAN + 1, f"{REPO}#2": 0 * RANK_SPAN + 2})
    svc.rt.bulk("inst-1").empty()  # type: ignore[no-untyped-call]  # the old job alone asks for the drain
    svc.redis.delete(keys.outbox_drain_queued("inst-1"))
    svc.rt.bulk("inst-1").enqueue(jobs.CHECK_RUNS.address, "inst-1")
    for worker in worker_processes(svc.settings, 1):
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()[-2000:]
    assert not svc.rt.bulk("inst-1").failed_job_registry.count
    written = [r.body["head_sha"] for r in github_emulator.requests
               if r.method == "POST" and r.path.endswith("/check-runs") and isinstance(r.body, dict)]
    assert written == [head_sha(REPO, 2), head_sha(REPO, 1)]
    assert not svc.redis.exists(old) and not svc.redis.zcard(keys.outbox("inst-1"))
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"  # the statuses went too


def test_the_worker_command_still_runs(svc: Service) -> None:
    out = subprocess.run([".venv/bin/merge-hold", "worker", "--help"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and "worker" in out.stdout


def test_a_worker_of_the_queue_layout_drains_the_one_queue_an_old_worker_filled(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    """Before the per-installation bulk queues every job waited on the one ``MERGE_HOLD_QUEUE`` queue: a
    fan-out, its drain and a fan-out slice's continuation queued there by an old worker are run by a
    worker of this layout (the old queue is its interactive queue), their next slices go to the
    installation's bulk queue, and every PR gets its status."""
    from workers.chat.rooms import place_hold

    place_hold(svc.redis, REPO, holder="dana", holder_id="slack:T1:U1", reason="legacy freeze",
               origin="slack:acme/#ops", now=datetime.now(UTC))
    queue = svc.rt.queue
    svc.redis.hincrby(keys.fanout(REPO), "want", 1)
    queue.enqueue("workers.fanout.fanout_job", REPO, "old-run-token", True, 0.0)  # one PR a slice
    queue.enqueue("workers.funnel.drain_job", "inst-1")
    queue.enqueue("workers.funnel.drain_job", "inst-1")  # the old layout queued one drain per slice
    assert not svc.redis.exists(keys.bulk_queues(queue.name))
    for worker in worker_processes(svc.settings, 1):
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()[-2000:]
    bulk = f"{queue.name}-bulk-inst-1"
    assert svc.redis.smembers(keys.bulk_queues(queue.name)) == {bulk.encode()}  # the continuations went there
    assert queue.count == 0 and svc.redis.llen(f"rq:queue:{bulk}") == 0
    assert not queue.failed_job_registry.count
    for number in (1, 2):
        assert ((latest(github_emulator, REPO, number) or {}).get("description") or "").startswith("Held")
