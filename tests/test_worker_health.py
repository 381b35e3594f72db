"""`merge-hold worker --healthcheck` (issue 28 item 2, design §5): exit 0 when this container's worker is
registered, heartbeating and reaches Redis through any REDIS_URL form; ``liveness`` passes while Redis
is away and fails on a worker Redis says is gone or stuck.

The rows build the state a worker leaves in Redis (its alive key, whose value says where it runs, and rq's
registration) on a real Redis; the end-to-end rows run a real worker and the real command, over a plain
URL and over Sentinel (the old compose check, ``redis.Redis.from_url``, refused ``redis+sentinel://``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.utils import utcformat
from rq.worker import Worker

from core import keys
from merge_hold.redis_server import free_port
from tests.conftest import ROOT
from tests.sentinel_support import sentinel_group
from tests.worker_support import kill_hard, start_worker, wait_until, worker_env
from workers.ops.health import check
from workers.ops.naming import here, running_here

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
HERE = here()
"""This process's place: the rows' workers are "here" when their alive key says so."""
HOST, NAMESPACE, PID, STARTED = HERE.split(" ")
SAME_HOST_OTHER_CONTAINER = f"{HOST} pid:[4026599999] 1 777"
DEAD_HERE = f"{HOST} {NAMESPACE} {PID} {int(STARTED) + 1}"
"""A process of this container that has gone: its pid is in use again, by a process started later (a
restarted container's pid 1; its namespace number may come back too)."""


def place_worker(r: redis.Redis, name: str, *, where: str | None = HERE, registered: bool = True,
                 dead: bool = False, beat_ago: int = 3) -> None:
    """What a worker leaves in Redis: the watchdog's alive key (valued with where it runs) and rq's
    registration (gone once its main loop stopped heartbeating; ``death`` once it ended)."""
    r.sadd(keys.WATCHED_WORKERS, name)
    if where is not None:
        r.set(keys.worker_alive(name), where, ex=5)
    if registered:
        key = Worker.redis_worker_namespace_prefix + name
        r.hset(key, mapping={"state": "idle", "last_heartbeat": utcformat(NOW - timedelta(seconds=beat_ago))})
        if dead:
            r.hset(key, "death", utcformat(NOW))


ROWS: list[tuple[str, list[dict[str, Any]], str, str | None, bool, str]] = [
    # (row, workers placed, mode, --name, healthy, a line says)
    ("a live registered worker here", [{"name": "vm.a1"}], "full", None, True,
     "vm.a1: registered, idle, last heartbeat 3 s"),
    ("the same in liveness mode", [{"name": "vm.a1"}], "liveness", None, True, "registered"),
    ("no worker at all", [], "full", None, False, f"no merge-hold worker of this container (host {HOST})"),
    ("no worker at all, liveness", [], "liveness", None, False, "no merge-hold worker"),
    ("its main loop stopped: rq's registration expired", [{"name": "vm.a1", "registered": False}], "full", None,
     False, "vm.a1: not registered with rq"),
    ("the same, liveness restarts it", [{"name": "vm.a1", "registered": False}], "liveness", None, False,
     "not registered"),
    ("its registration ended", [{"name": "vm.a1", "dead": True}], "full", None, False, "registration ended"),
    ("its watchdog stopped beating (dead, or frozen)", [{"name": "vm.a1", "where": None}], "full", None, False,
     "no merge-hold worker"),
    ("a dead worker of this container, its alive key not lapsed yet", [{"name": "vm.old", "where": DEAD_HERE}],
     "full", None, False, "no merge-hold worker"),
    ("a healthy worker of another container on the same host is not ours",
     [{"name": "vm.b2", "where": SAME_HOST_OTHER_CONTAINER}], "full", None, False, "no merge-hold worker"),
    ("ours among others", [{"name": "vm.b2", "where": SAME_HOST_OTHER_CONTAINER, "registered": False},
                           {"name": "vm.a1"}], "full", None, True, "vm.a1: registered"),
    ("two of ours, one stuck", [{"name": "vm.a1"}, {"name": "vm.a2", "registered": False}], "full", None, False,
     "vm.a2: not registered"),
    ("--name: that worker, wherever it runs", [{"name": "w0", "where": SAME_HOST_OTHER_CONTAINER}], "full", "w0",
     True, "w0: registered"),
    ("--name: a worker that is not alive", [{"name": "w0", "where": None}], "full", "w0", False, "w0: not alive"),
]


@pytest.mark.parametrize(("row", "workers", "mode", "name", "healthy", "says"), ROWS, ids=[r[0] for r in ROWS])
def test_health_rows(row: str, workers: list[dict[str, Any]], mode: str, name: str | None, healthy: bool,
                     says: str, redis_client: redis.Redis) -> None:
    for worker in workers:
        place_worker(redis_client, **worker)
    ok, lines = check(redis_client, HERE, mode, name, now=NOW)
    assert (ok, any(says in line for line in lines)) == (healthy, True), lines


@pytest.mark.parametrize(("mode", "healthy"), [("full", False), ("liveness", True)])
def test_redis_away(mode: str, healthy: bool) -> None:
    """Redis does not answer: not ready, but alive (restarting a worker does not bring Redis back)."""
    away = redis.Redis(port=free_port(), socket_connect_timeout=0.5)
    ok, lines = check(away, HERE, mode)
    assert ok is healthy and "Redis unreachable" in lines[0]


def healthcheck(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "merge_hold.cli", "worker", "--healthcheck", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture()
def sentinel_url(tmp_path: Path) -> Iterator[str]:
    with sentinel_group(tmp_path, replicas=0, sentinels=1) as group:
        yield group.url


@pytest.mark.parametrize("form", ["redis://", "redis+sentinel://"])
def test_a_real_worker_is_healthy_and_a_killed_one_is_not(form: str, request: pytest.FixtureRequest,
                                                          tmp_path: Path) -> None:
    url = request.getfixturevalue("sentinel_url" if form.startswith("redis+sentinel") else "redis_url")
    if form == "redis://":
        request.getfixturevalue("redis_client")  # a clean db
    env = worker_env(url)
    before = healthcheck(env)
    assert before.returncode == 1 and "no merge-hold worker of this container" in before.stdout
    log = tmp_path / "worker.log"
    worker = start_worker(env, log)
    try:
        found = wait_until("a healthy worker", lambda: (run := healthcheck(env)).returncode == 0 and run, 60, log)
        assert isinstance(found, subprocess.CompletedProcess)
        assert found.stdout.startswith("healthy (full; Redis ") and "registered" in found.stdout
        assert (form.startswith("redis+sentinel") and "sentinel" in found.stdout) or "redis://" in found.stdout
        assert healthcheck(env, "liveness").returncode == 0
    finally:
        kill_hard(worker)
    # Its alive key lapses within seconds: the container's worker is gone.
    wait_until("the killed worker to be unhealthy", lambda: healthcheck(env).returncode == 1, 20)


def test_the_alive_key_says_where_the_worker_runs(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    worker = start_worker(worker_env(redis_url), log)
    try:
        def alive() -> list[str]:
            found = [redis_client.get(k) for k in redis_client.keys(keys.worker_alive("*"))]
            return [v.decode() for v in found if isinstance(v, bytes)]

        values = wait_until("the worker's alive key", alive, 60, log)
        assert isinstance(values, list) and len(values) == 1
        host, namespace, pid, _started = values[0].split(" ")
        assert (host, namespace) == tuple(here().split(" ")[:2]) and pid == str(worker.pid)
        assert running_here(values[0]) is True
    finally:
        kill_hard(worker)
    assert running_here(values[0]) is False, "that pid with that start time runs no more"


def test_a_configuration_error_is_unhealthy_and_says_why(redis_url: str) -> None:
    env = worker_env(redis_url, MERGE_HOLD_NO_SUCH_SETTING="1")
    run = healthcheck(env)
    assert run.returncode == 1 and "MERGE_HOLD_NO_SUCH_SETTING: unknown setting" in run.stderr
