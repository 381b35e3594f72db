"""The image, for real: build the root Dockerfile, run a web and a worker container from it against a
real Redis, send a signed webhook, and read the dry-run status the worker recorded.

Skips, saying why, when no Docker engine answers. Containers use the host's network (the engine
`/work/shared/tools/local-docker.sh` starts has no bridge), so Redis and the web port are on loopback.
That script's stand-in `python:3.11-slim` is imported from a `mktemp -d` root, so its `/` is mode 0700
and a non-root image cannot start (`stat /bin/sh: permission denied`); the official image has 0755.
Re-import the stand-in with `/` at 0755 before running this test against it.
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


def test_image_metadata(image: str) -> None:
    config = json.loads(docker("image", "inspect", image, "--format", "{{json .Config}}"))
    assert config["User"] == "10001"
    assert config["Healthcheck"]["Test"][0] == "CMD" and "/healthz" in " ".join(config["Healthcheck"]["Test"])
    assert config["Cmd"][0] == "gunicorn"
    assert not any(var.startswith(("GITHUB_WEBHOOK_SECRET", "GITHUB_PRIVATE_KEY")) for var in config["Env"])
    assert docker("run", "--rm", "--network", "host", image, "id", "-u") == "10001"


def test_web_and_worker_containers_turn_a_signed_webhook_into_a_dry_run_status(
        image: str, containers: list[str], durable_redis: str) -> None:
    port = free_port()
    env = ["-e", f"REDIS_URL={durable_redis}", "-e", f"GITHUB_WEBHOOK_SECRET={SECRET}",
           "-e", "MERGE_HOLD_DRY_RUN=1", "-e", "MERGE_HOLD_SECRET_KEY=docker-test",
           "-e", f"MERGE_HOLD_PUBLIC_URL=http://127.0.0.1:{port}"]
    tag = uuid.uuid4().hex[:8]
    # Named before they run: a container that fails to start is removed too.
    containers += [f"mh-web-{tag}", f"mh-worker-{tag}"]
    # The image's own command, on a free port (the host network is shared with other tests).
    docker("run", "-d", "--network", "host", "--name", f"mh-web-{tag}", *env, image,
                             "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4",
                             "--worker-class", "gthread", "--no-control-socket", "--worker-tmp-dir", "/dev/shm",
                             "app:create_app()")
    docker("run", "-d", "--network", "host", "--name", f"mh-worker-{tag}", *env, image, "merge-hold", "worker")
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
    conn.close()
