"""A worker killed hard comes back at once (issue 28 item 1, design §5 `merge-hold worker`).

rq named a worker ``hostname.pid``; in a container the pid is 1 at every start, so after ``docker kill -s
KILL`` and ``docker start`` the new worker met its dead predecessor's registration and exited ("There
exists an active worker named 'vm.1' already") until it expired, one to two minutes later. Here a real
worker runs a job, is SIGKILLed, and a new one starts on the same host with the same pid (pid 1 of a fresh
PID namespace, as in a container) or under the same ``--name``: it runs at once, and the job the dead one
held is put back and finished by it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from rq import Queue
from rq.job import Job, JobStatus
from rq.worker import Worker

from core import keys
from tests.worker_support import NAP, kill_hard, namespace_problem, start_worker, wait_until, worker_env
from workers.ops.watchdog import ALIVE_TTL, SWEEP_SECONDS

QUEUE = "merge-hold"
RESCUE_SECONDS = ALIVE_TTL + SWEEP_SECONDS + 20
"""The dead worker's alive key lapses, a watchdog sweeps, the new worker runs the job (slack for a busy
machine)."""


def registered(redis: Any) -> dict[str, dict[str, str]]:
    """rq's live registrations: name -> its hash (text)."""
    found = {}
    for worker in Worker.all(connection=redis):
        data = {k.decode(): v.decode() for k, v in redis.hgetall(worker.key).items()}
        if "death" not in data:
            found[worker.name] = data
    return found


def running_job(job: Job) -> str | None:
    job.refresh()  # type: ignore[no-untyped-call]
    return job.worker_name if job.get_status(refresh=False) == JobStatus.STARTED and job.worker_name else None


@pytest.mark.parametrize("how", ["pid 1 of a new PID namespace", "the same --name"])
def test_a_hard_killed_worker_comes_back_at_once_and_its_job_is_put_back(
        how: str, redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    as_pid_1 = how.startswith("pid 1")
    if as_pid_1 and (problem := namespace_problem()):
        pytest.skip(problem)
    args = () if as_pid_1 else ("--name", "worker-0")
    env = worker_env(redis_url)
    job = Queue(QUEUE, connection=redis_client).enqueue(NAP, 120, job_timeout=300, result_ttl=600)
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_worker(env, first_log, *args, as_pid_1=as_pid_1)
    try:
        dead = wait_until("the first worker to start the job", lambda: running_job(job), 60, first_log)
        if as_pid_1:
            assert registered(redis_client)[str(dead)]["pid"] == "1", "the worker runs as pid 1 of its namespace"
    finally:
        kill_hard(first)
    second = start_worker(env, second_log, *args, as_pid_1=as_pid_1)
    try:
        def back() -> str | None:
            assert second.poll() is None, "the new worker exited:\n" + second_log.read_text(errors="replace")
            for name, data in registered(redis_client).items():
                if (name != dead) if as_pid_1 else (data.get("pid") == str(second.pid)):
                    return name
            return None

        started = time.monotonic()
        # At once: its start-up, plus (a taken-over name) the dead one's alive key lapsing (ALIVE_TTL).
        name = wait_until("the new worker's registration", back, 15 + (0 if as_pid_1 else ALIVE_TTL), second_log)
        assert time.monotonic() - started < 15 + ALIVE_TTL
        if as_pid_1:
            assert registered(redis_client)[str(name)]["pid"] == "1", "same host, same pid: another name"
        else:
            assert name == dead == "worker-0"
        wait_until("the dead worker's job put back and finished",
                   lambda: job.get_status(refresh=True) == JobStatus.FINISHED, RESCUE_SECONDS, second_log)
        job.refresh()  # type: ignore[no-untyped-call]
        assert job.return_value() == "done"
        assert job.meta.get("rescued") == 1, "put back once, by a watchdog or by the worker taking the name"
        assert job.worker_name == name, "the new worker ran it"
        assert redis_client.exists(keys.worker_alive(str(name)))
    finally:
        kill_hard(second)


def test_a_live_workers_name_is_refused(redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    """Two live workers must never share a name (their started jobs would be taken for each other's)."""
    env = worker_env(redis_url)
    log = tmp_path / "worker.log"
    first = start_worker(env, log, "--name", "twin")
    try:
        wait_until("the first worker", lambda: "twin" in registered(redis_client), 60, log)
        second = start_worker(env, tmp_path / "second.log", "--name", "twin")
        assert second.wait(timeout=60) == 75
        assert "a live worker is named 'twin'" in (tmp_path / "second.log").read_text()
        assert first.poll() is None and "twin" in registered(redis_client)
    finally:
        kill_hard(first)
