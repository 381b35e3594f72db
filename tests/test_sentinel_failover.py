"""Redis Sentinel from outside: a real primary, one replica and three sentinels; `merge-hold serve` and two
`merge-hold worker` processes on ``REDIS_URL=redis+sentinel://...`` with ``MERGE_HOLD_MIN_REPLICAS=1``.
Signed deliveries stream in, the primary is SIGKILLed mid-stream, and every delivery that got a 2xx is
processed after the failover (the workers and the pump reconnect through Sentinel)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests

from core import keys
from merge_hold.redis_conn import connect
from merge_hold.redis_server import free_port
from tests.e2e_support import ROOT, fixture, service_env, service_settings, sign, worker_processes
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.sentinel_support import sentinel_group

REPO = "acme/widgets"
SHA = "5" * 40


def _comment(n: int) -> dict[str, Any]:
    payload = fixture("issue_comment", "created.payload.json")
    payload["repository"] = {**payload["repository"], "full_name": REPO}
    payload["installation"] = {"id": 3}
    payload["issue"].update(number=5, pull_request={"url": "x"})
    payload["comment"].update(body=f"/hold step {n}", author_association="OWNER", id=1000 + n,
                              created_at=f"2026-01-05T10:{n // 60:02d}:{n % 60:02d}Z")
    payload["comment"]["user"] = {**payload["comment"]["user"], "login": "alice"}
    return payload


def _post(base: str, event: str, payload: dict[str, Any], delivery: str) -> int:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
               "X-Hub-Signature-256": sign(body)}
    try:
        return requests.post(f"{base}/webhooks/github", data=body, headers=headers, timeout=15).status_code
    except requests.RequestException:
        return 0


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_failover_loses_no_acknowledged_delivery(tmp_path: Path, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    emu.add_installation(3, "acme")
    emu.add_repo(REPO, installation_id=3)
    emu.add_pull(REPO, 5, head_sha=SHA, head_ref="feature/login", user="octocat")
    with sentinel_group(tmp_path) as group:
        settings = service_settings(group.url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug,
                                    queue_name=f"failover-{uuid.uuid4().hex[:6]}")
        env = {**service_env(settings), "MERGE_HOLD_MIN_REPLICAS": "1", "MERGE_HOLD_SECRET_KEY": "k"}
        port = free_port()
        web = subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "serve", "--port", str(port),
                                "--workers", "2"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        workers = list(worker_processes(settings, 2, burst=False))
        base = f"http://127.0.0.1:{port}"
        try:
            _wait(lambda: _ready(base), 30, "the web app")
            added = fixture("installation_repositories", "added.payload.json")
            added["installation"]["id"] = 3
            added["repositories_added"] = [{"full_name": REPO, "private": False}]
            assert _post(base, "installation_repositories", added, "install-1") == 202

            acked: list[str] = []
            refused: list[str] = []
            killed = threading.Event()

            def stream() -> None:
                for n in range(120):
                    if n == 40:
                        group.primary.kill()  # SIGKILL: no shutdown, no last write
                        killed.set()
                    delivery = f"failover-{n}"
                    status = _post(base, "issue_comment", _comment(n), delivery)
                    (acked if 200 <= status < 300 else refused).append(delivery)
                    time.sleep(0.02)  # about 50 deliveries/s

            sender = threading.Thread(target=stream)
            sender.start()
            sender.join(240)
            assert killed.is_set() and not sender.is_alive()
            assert len(acked) >= 40, f"only {len(acked)} deliveries acknowledged"

            _wait(lambda: group.primary_port() == group.replicas[0].port, 60, "the replica's promotion")
            client = connect(group.url, "worker")
            _wait(lambda: all(client.exists(keys.delivery_seen(d)) for d in ["install-1", *acked]), 120,
                  "every acknowledged delivery to be processed")
            status = emu.latest_status(REPO, SHA) or {}
            assert status.get("state") == "failure"
            assert all(w.poll() is None for w in workers), "a worker exited instead of riding out the failover"
        finally:
            for child in [*workers]:
                child.send_signal(signal.SIGTERM)
            os.killpg(web.pid, signal.SIGTERM)
            for child in [*workers, web]:
                try:
                    child.wait(20)
                except subprocess.TimeoutExpired:
                    child.kill()


def _ready(base: str) -> bool:
    try:
        return requests.get(f"{base}/healthz", timeout=2).status_code == 200
    except requests.RequestException:
        return False
