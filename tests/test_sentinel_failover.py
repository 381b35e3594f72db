"""Redis Sentinel from outside: a real primary, one replica and three sentinels; `merge-hold serve` and two
`merge-hold worker` processes on ``REDIS_URL=redis+sentinel://...`` with ``MERGE_HOLD_MIN_REPLICAS=1``.
Signed deliveries stream in, the primary is SIGKILLed mid-stream, and every delivery that got a 2xx is
processed after the failover (the workers and the pump reconnect through Sentinel), including the ones
still waiting in the intake list when the primary died."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import requests

from core import keys
from foundation.redis_conn import connect
from merge_hold.redis_server import free_port
from tests.e2e_support import ROOT, fixture, service_env, service_settings, sign
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


def _stream(base: str, numbers: range, *, until_acked: bool = False) -> tuple[list[str], list[str]]:
    """Send `/hold` comments at about 50 a second; returns (acknowledged, refused) delivery ids. With
    ``until_acked`` each one is re-sent (as GitHub's redelivery would) until it gets a 2xx."""
    acked: list[str] = []
    refused: list[str] = []
    for n in numbers:
        delivery = f"failover-{n}"
        deadline = time.monotonic() + 60
        while True:
            status = _post(base, "issue_comment", _comment(n), delivery)
            if 200 <= status < 300 or not until_acked or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        (acked if 200 <= status < 300 else refused).append(delivery)
        time.sleep(0.02)
    return acked, refused


def _spawn_workers(env: dict[str, str], tmp_path: Path, count: int) -> list[subprocess.Popen[bytes]]:
    """`merge-hold worker` processes (rq worker, scheduler and intake pump), logging to files."""
    return [subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "worker", "--name", f"fo-{n}"], cwd=ROOT,
                             env=env, stdout=subprocess.DEVNULL, stderr=(tmp_path / f"worker{n}.log").open("wb"))
            for n in range(count)]


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
                               stderr=(tmp_path / "web.log").open("wb"), start_new_session=True)
        workers = _spawn_workers(env, tmp_path, 2)
        base = f"http://127.0.0.1:{port}"
        client = connect(group.url, "worker")

        def processed(ids: list[str]) -> bool:
            return all(client.exists(keys.delivery_seen(d)) for d in ids)

        try:
            _wait(lambda: _ready(base), 30, "the web app")
            added = fixture("installation_repositories", "added.payload.json")
            added["installation"]["id"] = 3
            added["repositories_added"] = [{"full_name": REPO, "private": False}]
            # Right after start the replica may not have synced yet: a 503 is the receiver saying "not
            # durable, send it again" (GitHub redelivers), so retry until acknowledged.
            _wait(lambda: _post(base, "installation_repositories", added, "install-1") == 202, 30,
                  "the installation delivery")
            before, _ = _stream(base, range(0, 20), until_acked=True)
            assert len(before) == 20
            _wait(lambda: processed(["install-1", *before]), 60, "the first deliveries")

            # A backlog at the moment of the crash: workers frozen, deliveries acknowledged (each on the
            # replica too, by WAIT) and waiting in the intake list. Then SIGKILL the primary.
            for worker in workers:
                worker.send_signal(signal.SIGSTOP)
            backlog, refused = _stream(base, range(20, 60), until_acked=True)
            assert len(backlog) == 40 and not refused
            group.primary.kill()
            during, refused = _stream(base, range(60, 70))  # a few answered 503, none lost
            _wait(lambda: group.primary_port() == group.replicas[0].port, 60, "the replica's promotion")
            for worker in workers:
                worker.send_signal(signal.SIGCONT)

            # The old primary comes back empty: Sentinel makes it a replica of the new primary, and the
            # receiver acknowledges again (MIN_REPLICAS=1 is met once more).
            group.restart_primary()
            after, refused = _stream(base, range(70, 90), until_acked=True)
            assert not refused, f"still refused after the old primary rejoined: {refused}"

            acked = ["install-1", *before, *backlog, *during, *after]
            _wait(lambda: processed(acked), 120, "every acknowledged delivery to be processed")
            assert (emu.latest_status(REPO, SHA) or {}).get("state") == "failure"
            alive = [w.poll() is None for w in workers]
            assert all(alive), "a worker exited instead of riding out the failover"
        except AssertionError:
            for log in sorted(tmp_path.glob("*.log")):
                print(f"--- {log.name}", log.read_text(errors="replace")[-3000:])
            raise
        finally:
            for worker in workers:
                worker.send_signal(signal.SIGCONT)
                worker.send_signal(signal.SIGTERM)
            os.killpg(web.pid, signal.SIGTERM)
            for child in [*workers, web]:
                try:
                    child.wait(20)
                except subprocess.TimeoutExpired:
                    child.kill()
            client.close()


def _ready(base: str) -> bool:
    try:
        return requests.get(f"{base}/healthz", timeout=2).status_code == 200
    except requests.RequestException:
        return False
