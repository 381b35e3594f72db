"""The image, for real, run the way an operator runs it (read-only root, no capabilities, no new
privileges): build the root Dockerfile, run a web and a worker container from it against a real Redis,
send a signed webhook, and read the dry-run status the worker recorded; kill the worker hard and start
the same container again: it runs at once (issue 28 item 1), and its health is the worker's.

Skips, saying why, when no Docker engine answers. Containers use the host's network (an engine without
a bridge works too), so Redis and the web port are on loopback. A stand-in `python:3.11-slim` base
image must have `/` at mode 0755, as the official one does, or a non-root image cannot start
(`stat /bin/sh: permission denied`).
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis

from core import keys
from merge_hold import samples
from merge_hold.redis_server import LocalRedis, free_port
from merge_hold.simulate import post
from tests.needs import needs

ROOT = Path(__file__).resolve().parent.parent
IMAGE = "merge-hold:test"
SECRET = "docker-test-secret"
BUILD_TIMEOUT = 1800
"""A first build installs every dependency from the package registry; later ones hit the layer cache."""


pytestmark = needs("docker")


def docker(*args: str, timeout: float = 300) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"docker {' '.join(args[:3])}… failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def image() -> str:
    docker("build", "--network", "host", "-t", IMAGE, str(ROOT), timeout=BUILD_TIMEOUT)
    return IMAGE


@pytest.fixture()
def containers() -> Iterator[list[str]]:
    started: list[str] = []
    yield started
    for container in started:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, timeout=60)


@pytest.fixture()
def durable_redis(tmp_path: Path) -> Iterator[str]:
    server = LocalRedis(tmp_path / "redis", persist=True).start()
    try:
        yield server.url
    finally:
        server.stop()


def wait_for(what: str, probe: object, deadline: float, logs: list[str]) -> object:
    assert callable(probe)
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; container logs:\n" + "\n".join(
        docker("logs", "--tail", "40", c) for c in logs))


WEB_COMMAND = ["gunicorn", "--config", "python:merge_hold.gunicorn_conf", "app:create_app()"]
HARDENED = ["--network", "host", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
"""How the outside check and the manifests run the image (host network: see the module's docstring)."""


def test_image_metadata(image: str) -> None:
    config = json.loads(docker("image", "inspect", image, "--format", "{{json .Config}}"))
    assert config["User"] == "10001:10001"
    assert config["Healthcheck"]["Test"] == ["CMD", "python", "-m", "merge_hold.healthcheck"]
    assert config["Cmd"] == WEB_COMMAND
    assert not any(var.startswith(("GITHUB_WEBHOOK_SECRET", "GITHUB_PRIVATE_KEY")) for var in config["Env"])
    assert docker("run", "--rm", *HARDENED, image, "sh", "-c", "id -u; id -g").split() == ["10001", "10001"]
    assert docker("run", "--rm", *HARDENED, image, "stat", "-c", "%u:%g", "/var/lib/merge-hold") == "10001:10001"


def test_the_web_command_refuses_two_workers_without_a_secret_key(image: str) -> None:
    done = subprocess.run(["docker", "run", "--rm", *HARDENED, "-e", "REDIS_URL=redis://127.0.0.1:1/0", image,
                           *WEB_COMMAND[:-1], "--bind", f"127.0.0.1:{free_port()}", WEB_COMMAND[-1]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 78, done.stderr
    assert "MERGE_HOLD_SECRET_KEY is not set" in done.stderr


def container_health(name: str) -> subprocess.CompletedProcess[str]:
    """The image's HEALTHCHECK command, run in the container as Docker runs it."""
    return subprocess.run(["docker", "exec", name, "python", "-m", "merge_hold.healthcheck"],
                          capture_output=True, text=True, timeout=60)


def test_web_and_worker_containers_turn_a_signed_webhook_into_a_dry_run_status(
        image: str, containers: list[str], durable_redis: str) -> None:
    port = free_port()
    env = ["-e", f"REDIS_URL={durable_redis}", "-e", f"GITHUB_WEBHOOK_SECRET={SECRET}",
           "-e", "MERGE_HOLD_DRY_RUN=1", "-e", "MERGE_HOLD_SECRET_KEY=docker-test",
           "-e", f"MERGE_HOLD_PUBLIC_URL=http://127.0.0.1:{port}"]
    tag = uuid.uuid4().hex[:8]
    web, worker = f"mh-web-{tag}", f"mh-worker-{tag}"
    # Named before they run: a container that fails to start is removed too.
    containers += [web, worker]
    # The image's own command, on a free port (the host network is shared with other tests).
    docker("run", "-d", *HARDENED, "--name", web, *env, image,
           *WEB_COMMAND[:-1], "--bind", f"127.0.0.1:{port}", WEB_COMMAND[-1])
    docker("run", "-d", *HARDENED, "--name", worker, *env, image, "merge-hold", "worker")
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    wait_for("the web container's /healthz", healthy, time.monotonic() + 60, containers)
    now = datetime.now(UTC)
    opened = samples.delivery("pull_request", samples.pull_request_event("acme/widgets", 42, at=now))
    held = samples.delivery("issue_comment", samples.issue_comment_event(
        "acme/widgets", 42, body="/hold waiting for the image", commenter="alice", at=now,
        comment_id=int(now.timestamp() * 1000)))
    for delivery in (opened, held):
        status, _reason, body = post(base, delivery, SECRET)
        assert status == 202, body
    conn = redis.Redis.from_url(durable_redis)

    def held_status() -> dict[str, str] | None:
        for raw in conn.lrange(keys.DRY_RUN_STATUSES, 0, -1):
            entry: dict[str, str] = json.loads(raw)
            if entry["state"] == "failure":
                return entry
        return None

    entry = wait_for("the worker container's dry-run status", held_status, time.monotonic() + 90, containers)
    assert isinstance(entry, dict)
    assert entry["repo"] == "acme/widgets" and entry["context"] == "merge-hold"
    assert entry["description"] == "Held by @alice: waiting for the image"
    # A forged signature is refused by the containerised web app.
    status, _reason, _body = post(base, samples.delivery("ping", {"zen": "x"}), "wrong-secret")
    assert status == 401
    # The image's HEALTHCHECK picks the check by the container's command.
    assert "(web): http://127.0.0.1:" in container_health(web).stdout
    worker_health = wait_for("the worker container's health", lambda: container_health(worker).returncode == 0
                             and container_health(worker), time.monotonic() + 60, containers)
    assert isinstance(worker_health, subprocess.CompletedProcess) and "registered" in worker_health.stdout

    # Killed hard and started again: same host name, pid 1 again. rq's `host.pid` name made it exit
    # ("There exists an active worker named 'HOST.1' already") for one to two minutes; now it runs at once.
    docker("kill", "-s", "KILL", worker)
    docker("start", worker)
    restarted = time.monotonic()
    wait_for("the restarted worker's health", lambda: container_health(worker).returncode == 0,
             restarted + 30, containers)
    assert time.monotonic() - restarted < 30
    assert docker("inspect", "--format", "{{.State.Running}} {{.RestartCount}}", worker) == "true 0"
    assert "There exists an active worker" not in docker("logs", worker)
    lifted = samples.delivery("issue_comment", samples.issue_comment_event(
        "acme/widgets", 42, body="/unhold", commenter="alice", at=datetime.now(UTC),
        comment_id=int(datetime.now(UTC).timestamp() * 1000) + 1))
    status, _reason, body = post(base, lifted, SECRET)
    assert status == 202, body

    def freed() -> bool:
        latest = json.loads(conn.lindex(keys.DRY_RUN_STATUSES, 0) or b"{}")
        return bool(latest.get("state") == "success")

    wait_for("the restarted worker to apply a delivery", freed, time.monotonic() + 60, containers)
    conn.close()
