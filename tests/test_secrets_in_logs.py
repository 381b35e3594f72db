"""No secret in any log line (issue #9 item 5): the whole stack (`merge-hold serve`, `merge-hold worker`)
runs at DEBUG with distinctive secrets, is driven through every door (webhooks good and forged, Slack
and Mattermost commands with token-bearing response URLs, API, metrics, login), and every byte it
logged is searched for each secret."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

from merge_hold.redis_server import free_port
from tests.chat_support import TEAM, response_catcher, slack_body, slack_headers
from tests.e2e_support import ROOT, fixture, service_env, service_settings, sign
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.webapp_support import closed_port_url

REPO = "acme/widgets"
SECRETS = {
    "GITHUB_WEBHOOK_SECRET": "whsec-QQ7-webhook-distinct",
    "SLACK_SIGNING_SECRET": "slacksign-QQ7-distinct",
    "SLACK_BOT_TOKEN": "xoxb-QQ7-bot-distinct",
    "MATTERMOST_TOKEN": "mmtoken-QQ7-distinct",
    "MERGE_HOLD_SECRET_KEY": "sessionkey-QQ7-distinct",
    "MERGE_HOLD_METRICS_TOKEN": "metrics-QQ7-distinct",
    "GITHUB_CLIENT_SECRET": "oauthclient-QQ7-distinct",
}
RESPONSE_SECRET = "respurl-QQ7-distinct"
"""Part of the response URLs' paths: those URLs are credentials for the channel."""


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def send(url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> int:
    method = "POST" if body is not None else "GET"
    request = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0  # not listening (yet)


def test_no_secret_reaches_any_log(github_emulator: GitHubEmulator, redis_url: str, tmp_path: Path) -> None:
    emu = github_emulator
    emu.add_installation(7, "acme")
    emu.add_repo(REPO, installation_id=7)
    emu.add_pull(REPO, 1, head_sha="1" * 40, head_ref="topic-1", user="octocat")
    tokens_file = tmp_path / "tokens"
    api_token = subprocess.run([sys.executable, "-m", "merge_hold.cli", "token", "create", "ci", "--file",
                                str(tokens_file)], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    settings = service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug)
    env = service_env(settings) | SECRETS | {
        "MERGE_HOLD_SLACK_TEAMS": f"{TEAM}=acme", "MERGE_HOLD_CHAT_ADMINS": "U0DANA",
        "MERGE_HOLD_MATTERMOST_TEAMS": "mmteam=acme", "MATTERMOST_URL": "http://127.0.0.1:9",
        "MERGE_HOLD_API_TOKENS_FILE": str(tokens_file), "MERGE_HOLD_LOG_LEVEL": "DEBUG",
        "GITHUB_CLIENT_ID": "Iv1.QQ7client", "MERGE_HOLD_WRITE_RATE": "6000",
    }
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logs = [tmp_path / "serve.log", tmp_path / "worker.log"]
    command = [sys.executable, "-m", "merge_hold.cli"]
    with logs[0].open("wb") as serve_log, logs[1].open("wb") as worker_log:
        processes = [
            subprocess.Popen([*command, "serve", "--port", str(port), "--workers", "1"], env=env, cwd=ROOT,
                             stdout=serve_log, stderr=subprocess.STDOUT),
            subprocess.Popen([*command, "worker"], env=env, cwd=ROOT, stdout=worker_log, stderr=subprocess.STDOUT),
        ]
        try:
            wait_until(lambda: send(f"{base}/healthz") == 200)
            _drive(base, emu, api_token)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
    logged = "\n".join(path.read_text(errors="replace") for path in logs)
    assert "chat command" in logged or "POST" in logged  # the logs are not empty: something was said
    key_line = PRIVATE_KEY_PEM.strip().splitlines()[3]
    installation_tokens = list(emu.tokens)
    assert installation_tokens, "the worker never fetched an installation token"
    wanted = {**SECRETS, "api token": api_token, "private key": key_line, "response url": RESPONSE_SECRET,
              **{f"installation token {i}": t for i, t in enumerate(installation_tokens)}}
    leaked = {name: value for name, value in wanted.items() if value in logged}
    assert leaked == {}, f"secrets in the logs: {sorted(leaked)}"


def _drive(base: str, emu: GitHubEmulator, api_token: str) -> None:
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = 7
    added["repositories_added"] = [{"full_name": REPO, "private": False}]
    body = json.dumps(added).encode()
    hook_headers = {"Content-Type": "application/json", "X-GitHub-Event": "installation_repositories"}
    secret = SECRETS["GITHUB_WEBHOOK_SECRET"]
    assert send(f"{base}/webhooks/github", body, {**hook_headers, "X-GitHub-Delivery": str(uuid.uuid4()),
                                                  "X-Hub-Signature-256": sign(body, secret)}) == 202
    assert send(f"{base}/webhooks/github", body, {**hook_headers, "X-GitHub-Delivery": str(uuid.uuid4()),
                                                  "X-Hub-Signature-256": sign(body, "wrong")}) == 401
    wait_until(lambda: emu.latest_status(REPO, "1" * 40) is not None)
    with response_catcher() as catcher:
        reply_url = catcher.url.replace("/x", f"/{RESPONSE_SECRET}")
        slack = SECRETS["SLACK_SIGNING_SECRET"]
        for text in (f"{REPO} incident 4711", f"{REPO}#1 db"):
            chat = slack_body("/hold", text, reply_url)
            assert send(f"{base}/chat/slack", chat, slack_headers(chat, secret=slack)) == 200
        wait_until(lambda: len(catcher.bodies) >= 2)
    # The response URL now answers nothing: the worker's failed reply must not log it either.
    chat = slack_body("/holds", "", reply_url)
    assert send(f"{base}/chat/slack", chat, slack_headers(chat, secret=slack)) == 200
    forged = slack_body("/holds", "", reply_url)
    assert send(f"{base}/chat/slack", forged, slack_headers(forged, secret="nope")) == 401
    mattermost = {"team_id": "mmteam", "user_id": "u1", "command": "/holds", "text": "", "channel_id": "c1",
                  "token": SECRETS["MATTERMOST_TOKEN"]}
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for response_url in (f"http://127.0.0.1:9/hooks/{RESPONSE_SECRET}",
                         closed_port_url().replace("redis://", "http://") + f"/{RESPONSE_SECRET}"):
        assert send(f"{base}/chat/mattermost", urlencode({**mattermost, "response_url": response_url}).encode(),
                    form) == 200
    assert send(f"{base}/chat/mattermost", urlencode({**mattermost, "token": "wrong"}).encode(), form) == 401
    bearer = {"Authorization": f"Bearer {api_token}"}
    assert send(f"{base}/api/v1/holds", headers=bearer) == 200
    assert send(f"{base}/api/v1/holds", headers={"Authorization": "Bearer mhk_wrong"}) == 401
    assert send(f"{base}/metrics", headers={"Authorization": f"Bearer {SECRETS['MERGE_HOLD_METRICS_TOKEN']}"}) == 200
    assert send(f"{base}/metrics", headers={"Authorization": "Bearer wrong"}) == 401
    assert send(f"{base}/login", urlencode({"token": api_token}).encode(), form) == 400  # no CSRF token
    time.sleep(1.0)  # let the worker finish (and log) the last replies
