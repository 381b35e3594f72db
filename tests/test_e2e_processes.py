"""The service as it is deployed: `merge-hold serve` and `merge-hold worker` processes, configured only
through the environment the design names, against the GitHub emulator at `GITHUB_API_URL`.

Webhooks and a Slack slash command go in over real HTTP; the statuses are read at the emulator.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from merge_hold.redis_server import free_port
from tests.chat_support import SLACK_SECRET, TEAM, response_catcher, slack_body, slack_headers
from tests.e2e_support import ROOT, fixture, service_env, service_settings, sign
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator

REPO = "acme/widgets"
SHAS = {n: f"{n:02d}" * 20 for n in (1, 2, 3)}


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, json.loads(answer.read() or b"{}")


@pytest.fixture()
def deployment(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[str]:
    emu = github_emulator
    emu.add_installation(7, "acme")
    emu.add_repo(REPO, installation_id=7)
    for number, sha in SHAS.items():
        emu.add_pull(REPO, number, head_sha=sha, head_ref=f"topic-{number}", user="octocat")
    settings = service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug)
    env = service_env(settings) | {"SLACK_SIGNING_SECRET": SLACK_SECRET, "MERGE_HOLD_SLACK_TEAMS": f"{TEAM}=acme",
                                   "MERGE_HOLD_CHAT_ADMINS": "U0DANA",
                                   "MERGE_HOLD_WRITE_RATE": "6000"}
    port = free_port()
    command = [sys.executable, "-m", "merge_hold.cli"]
    processes = [
        subprocess.Popen([*command, "serve", "--port", str(port), "--workers", "1"], env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([*command, "worker"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
    ]
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    try:
        wait_until(healthy)
        yield base
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def webhook(base: str, event: str, payload: dict[str, Any]) -> int:
    body = json.dumps(payload).encode()
    status, _ = post(f"{base}/webhooks/github", body, {
        "Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(body)})
    return status


def states(emu: GitHubEmulator) -> dict[int, tuple[str, str] | None]:
    found = {n: emu.latest_status(REPO, sha) for n, sha in SHAS.items()}
    return {n: None if s is None else (s["state"], s["description"]) for n, s in found.items()}


def test_serve_and_worker_processes_publish_webhook_and_room_holds(
    deployment: str, github_emulator: GitHubEmulator
) -> None:
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = 7
    added["repositories_added"] = [{"full_name": REPO, "private": False}]
    assert webhook(deployment, "installation_repositories", added) == 202
    wait_until(lambda: all(s == ("success", "No holds") for s in states(github_emulator).values()))

    with response_catcher() as catcher:
        body = slack_body("/hold", f"{REPO} incident 4711", catcher.url)
        status, answer = post(f"{deployment}/chat/slack", body, slack_headers(body))
        assert status == 200 and answer["response_type"] == "ephemeral"
        wait_until(lambda: all(s is not None and s[0] == "failure" and "incident 4711" in s[1]
                               for s in states(github_emulator).values()))
        assert all("@dana" in s[1] for s in states(github_emulator).values() if s)
        body = slack_body("/unhold", REPO, catcher.url)
        post(f"{deployment}/chat/slack", body, slack_headers(body))
        wait_until(lambda: all(s == ("success", "No holds") for s in states(github_emulator).values()))
        said = " ".join(str(b.get("text", "")) for b in catcher.wait(2))
        assert "incident 4711" in said

    comment = fixture("issue_comment", "created.payload.json")
    comment["repository"] = {**comment["repository"], "full_name": REPO, "name": "widgets",
                             "owner": {**comment["repository"]["owner"], "login": "acme"}}
    comment["installation"] = {"id": 7}
    comment["issue"].update(number=2, pull_request={"url": "x"})
    comment["comment"].update(body="/hold waiting for DB migration", author_association="OWNER",
                              created_at="2026-01-05T10:00:00Z", id=77)
    assert webhook(deployment, "issue_comment", comment) == 202
    wait_until(lambda: states(github_emulator)[2] == ("failure", "Held by @Codertocat: waiting for DB migration"))
