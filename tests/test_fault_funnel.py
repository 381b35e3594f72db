"""The funnel's request step (design §4 invariant 4): a PR's state, its state version and its recompute job
land in one EXEC, and the coalescing flag never exists without its job. Real Redis and rq."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from redis import Redis
from rq import Queue

from core import keys
from core.prstate import PullState, Register, record_comment
from state import store
from state.recompute_requests import RecomputeRequest
from workers.publishing.request import RECOMPUTE_JOB

REPO = "acme/funnel"


def _hold(who: str) -> object:
    register = Register(at=datetime(2026, 1, 5, tzinfo=UTC), held=True, ref=f"c-{who}", reason="r")
    return lambda state: record_comment(state, who, register)


def _jobs(queue: Queue) -> list[str]:
    return [str(job.func_name) for job in queue.jobs]


@pytest.mark.parametrize(("flag_before", "change", "jobs", "version"), [
    (False, "hold", [RECOMPUTE_JOB], 1),  # a change: state, version, flag and job together
    (True, "hold", [], 1),  # a recompute already waits: coalesced, the state still written
    (False, "none", [], 0),  # nothing changed: nothing written, nothing asked
], ids=["change-queues-its-recompute", "waiting-recompute-coalesces", "no-change-no-request"])
def test_a_state_write_carries_its_recompute(redis_client: Redis, flag_before: bool, change: str,
                                             jobs: list[str], version: int) -> None:
    queue = Queue("funnel-test", connection=redis_client)
    if flag_before:
        redis_client.set(keys.recompute_queued(REPO, 1), "1")
    fn = _hold("ann") if change == "hold" else (lambda state: state)
    state, changed = store.update_pull(redis_client, REPO, 1, fn,  # type: ignore[arg-type]
                                       request=RecomputeRequest(queue, REPO, 1))
    assert changed == (change == "hold")
    assert _jobs(queue) == jobs
    assert store.state_version(redis_client, REPO, 1) == version
    assert bool(redis_client.exists(keys.recompute_queued(REPO, 1))) == bool(jobs or flag_before)
    assert store.load_pull(redis_client, REPO, 1) == (state if changed else PullState(repo=REPO, number=1))


def test_a_finished_recompute_keeps_no_job(redis_client: Redis, redis_url: str) -> None:
    """Design §7's footprint: a finished recompute leaves neither its payload nor its result."""
    from foundation.settings import Settings
    from workers import runtime
    from workers.ops.tenants import burst

    rt = runtime.install(runtime.build(Settings(redis_url=redis_url), redis_client))  # dry run
    store.update_pull(rt.redis, REPO, 2, _hold("bo"),  # type: ignore[arg-type]
                      request=RecomputeRequest(rt.queue, REPO, 2))
    job_id = rt.queue.job_ids[0]
    burst(rt.queue, with_scheduler=False)
    assert rt.queue.fetch_job(job_id) is None
    assert rt.queue.finished_job_registry.count == 0
    assert not rt.redis.exists(keys.recompute_queued(REPO, 2))
