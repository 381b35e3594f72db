"""The one table of rq jobs (issue 17 item 3): every row names a job function a worker can import, and
no job address is spelled outside the table."""

from __future__ import annotations

import ast
import re

import pytest
from redis import Redis
from rq import Queue
from rq.utils import import_attribute

from core import jobs
from state.queueing import create_job, enqueue_after, options
from tests.conftest import ROOT

PRODUCT = ("core", "foundation", "state", "app", "workers", "hook", "merge_hold")
ADDRESS = re.compile(r"workers(\.[A-Za-z_]\w*){2,}")


def is_address(value: str) -> bool:
    """A dotted path to a function under workers/ (a module's own path, like `merge-hold worker`'s, is not)."""
    if not ADDRESS.fullmatch(value):
        return False
    path = ROOT.joinpath(*value.split("."))
    return not (path.with_suffix(".py").is_file() or (path / "__init__.py").is_file())


def test_every_job_of_the_module_is_in_the_closed_set() -> None:
    defined = {name for name, value in vars(jobs).items() if isinstance(value, jobs.Job)}
    assert {id(vars(jobs)[name]) for name in defined} == {id(job) for job in jobs.ALL}
    addresses = [job.address for job in jobs.ALL]
    assert len(addresses) == len(set(addresses)), "two rows name one job"


@pytest.mark.parametrize("job", jobs.ALL, ids=lambda job: job.address)
def test_every_address_imports_to_a_callable(job: jobs.Job) -> None:
    # A stored job names its function by this path: a worker must still find it there.
    assert callable(import_attribute(job.address))
    assert job.queue in (jobs.WORK, jobs.BULK, jobs.SUBSCRIBER)
    assert all(pause >= 0 for pause in job.retry)


def test_no_job_address_is_spelled_outside_the_table() -> None:
    table = ROOT / "core" / "jobs.py"
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == table:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and is_address(node.value):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}")
    assert not found, "job addresses belong in core/jobs.py: " + ", ".join(found)


def test_the_address_pattern_catches_a_job_and_spares_a_module() -> None:
    assert is_address("workers.chat.rooms.republish_job")
    assert is_address("workers.funnel.drain_job")  # an old address too
    assert not is_address("workers.ops.cli")  # `merge-hold worker`'s module, not a job
    assert not is_address("see `workers.chat.rooms.republish_job`")


def test_a_row_becomes_rq_options() -> None:
    assert options(jobs.FANOUT)["job_timeout"] == 900
    assert options(jobs.FANOUT)["retry"].intervals == [0, 10, 60, 300, 900]
    assert options(jobs.FANOUT)["retry"].max == 5
    assert (options(jobs.FANOUT)["result_ttl"], options(jobs.FANOUT)["failure_ttl"]) == (600, 7 * 86400)
    # rq's own defaults stay rq's: nothing is passed for a None.
    assert options(jobs.REDELIVERY_SWEEP) == {}
    assert options(jobs.REPUBLISH) == {"result_ttl": 0, "failure_ttl": 7 * 86400}


def test_create_job_carries_the_row(redis_client: Redis) -> None:
    queue = Queue("jobs-table-test", connection=redis_client)
    job = create_job(queue, jobs.RECOMPUTE, ("o/r", 1), description="recompute o/r#1")
    assert (job.func_name, job.args, job.timeout) == (jobs.RECOMPUTE.address, ("o/r", 1), 180)
    assert (job.result_ttl, job.failure_ttl, job.retries_left) == (0, 86400, 8)
    assert job.retry_intervals == [1, 2, 5, 10, 20, 30, 60, 120]


@pytest.mark.parametrize(("delay", "queued", "scheduled"), [(0.0, 1, 0), (-1.0, 1, 0), (30.0, 0, 1)])
def test_enqueue_after_queues_a_row_now_or_later(redis_client: Redis, delay: float, queued: int,
                                                 scheduled: int) -> None:
    """The one spelling of "now or after a delay": either way the job carries its row's options."""
    queue = Queue("jobs-table-test", connection=redis_client)
    job = enqueue_after(queue, jobs.OUTBOX_DRAIN, "inst-1", None, delay=delay, description="drain outbox inst-1")
    assert (queue.count, queue.scheduled_job_registry.count) == (queued, scheduled)
    assert (job.func_name, job.args, job.timeout, job.description) == (
        jobs.OUTBOX_DRAIN.address, ("inst-1", None), 180, "drain outbox inst-1")
    assert job.retry_intervals == list(jobs.OUTBOX_DRAIN.retry)
