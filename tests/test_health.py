"""Liveness, readiness, metrics, and `merge-hold serve` running the app under gunicorn for real."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests

from core import keys
from core.deliveries import pack
from merge_hold.redis_server import free_port
from tests.webapp_support import SECRET, closed_port_url, delivery_headers, fixture_body, make_app

ROOT = Path(__file__).resolve().parent.parent


def test_healthz_needs_nothing(tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=closed_port_url())
    response = app.test_client().get("/healthz")
    assert (response.status_code, response.get_json()) == (200, {"ok": True})


def test_readyz_follows_redis(redis_client: redis.Redis, tmp_path: Path) -> None:
    up, _ = make_app(redis_client, tmp_path)
    down, _ = make_app(None, tmp_path / "down", redis_url=closed_port_url())
    assert up.test_client().get("/readyz").status_code == 200
    response = down.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.get_json() == {"ok": False, "error": "redis unavailable: ConnectionError"}


def _sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.split(" ")[0] == name:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


METRICS_TOKEN = "metrics-7f3a9c0d1e"
SCRAPER = {"Authorization": f"Bearer {METRICS_TOKEN}"}


def test_metrics_count_deliveries_by_event_and_outcome(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path, metrics_token=METRICS_TOKEN)
    other, _ = make_app(redis_client, tmp_path / "other", metrics_token=METRICS_TOKEN)
    client = app.test_client()
    body = fixture_body("pull_request/opened.payload.json")
    for delivery in ("a", "b"):
        client.post("/webhooks/github", data=body, headers=delivery_headers("pull_request", body, delivery))
    client.post("/webhooks/github", data=body, headers={"X-GitHub-Event": "pull_request"})
    label = fixture_body("label/created.payload.json")
    client.post("/webhooks/github", data=label, headers=delivery_headers("label", label))
    client.post("/webhooks/github", data=label, headers=delivery_headers("made-up-event-123", label))

    response = client.get("/metrics", headers=SCRAPER)
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    text = response.get_data(as_text=True)
    assert _sample(text, 'merge_hold_webhooks_total{event="pull_request",outcome="queued"}') == 2
    assert _sample(text, 'merge_hold_webhooks_total{event="pull_request",outcome="bad_signature"}') == 1
    assert _sample(text, 'merge_hold_webhooks_total{event="other",outcome="ignored"}') == 2
    assert "made-up-event-123" not in text  # a sender cannot grow the label set
    assert _sample(text, "merge_hold_webhook_seconds_count") == 5
    # Each app has its own registry: the other app counted nothing.
    scraped = other.test_client().get("/metrics", headers=SCRAPER).get_data(as_text=True)
    assert _sample(scraped, "merge_hold_webhook_seconds_count") == 0


@pytest.mark.parametrize(("configured", "header", "status"), [
    (None, None, 404),  # no token configured: not served on the public app at all
    (None, f"Bearer {METRICS_TOKEN}", 404),
    (METRICS_TOKEN, None, 401),
    (METRICS_TOKEN, f"Bearer {METRICS_TOKEN}x", 401),
    (METRICS_TOKEN, f"Bearer {METRICS_TOKEN[:-1]}", 401),
    (METRICS_TOKEN, f"Basic {METRICS_TOKEN}", 401),
    (METRICS_TOKEN, "Bearer ", 401),
    (METRICS_TOKEN, f"bearer {METRICS_TOKEN}", 200),
    (METRICS_TOKEN, f"Bearer {METRICS_TOKEN}", 200),
])
def test_metrics_need_their_bearer_token(redis_client: redis.Redis, tmp_path: Path, configured: str | None,
                                         header: str | None, status: int) -> None:
    app, api_token = make_app(redis_client, tmp_path, metrics_token=configured)
    headers = {"Authorization": header} if header else {}
    assert app.test_client().get("/metrics", headers=headers).status_code == status
    # An API token is no metrics token.
    assert app.test_client().get("/metrics", headers={"Authorization": f"Bearer {api_token}"}).status_code != 200


# -- `merge-hold serve` -------------------------------------------------------------------------------------


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MERGE_HOLD_", "GITHUB_", "REDIS_URL", "SLACK_", "MATTERMOST_"))}
    env.update(extra)
    return env


def test_serve_runs_gunicorn(redis_url: str, redis_client: redis.Redis, tmp_path: Path) -> None:
    port = free_port()
    tokens = tmp_path / "tokens"
    process = subprocess.Popen(
        [sys.executable, "-m", "merge_hold.cli", "serve", "--port", str(port), "--workers", "2"],
        cwd=ROOT, env=_env(REDIS_URL=redis_url, GITHUB_WEBHOOK_SECRET=SECRET,
                           MERGE_HOLD_API_TOKENS_FILE=str(tokens), MERGE_HOLD_QUEUE="serve-test"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if requests.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except (requests.ConnectionError, requests.Timeout):  # booting, or slow on a loaded machine
                pass
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "server did not become ready"
            time.sleep(0.1)
        body = fixture_body("pull_request/opened.payload.json")
        reply = requests.post(f"{base}/webhooks/github", data=body, timeout=10,
                              headers=delivery_headers("pull_request", body, "served-1"))
        assert (reply.status_code, reply.json()) == (202, {"queued": True, "delivery": "served-1"})
        # Acknowledged once in the intake list, which the workers' pump turns into the job.
        assert redis_client.lrange(keys.intake("serve-test"), 0, -1) == [pack("pull_request", "served-1", body)]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert err.count(b"Booting worker") == 2
    assert b"MERGE_HOLD_SECRET_KEY is not set" in err


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "REDIS_URL"),
        ({"REDIS_URL": "redis://x", "MERGE_HOLD_FOO": "1"}, "MERGE_HOLD_FOO"),
        ({"REDIS_URL": "redis://x", "GITHUB_API_URL": "api.github.com"}, "GITHUB_API_URL"),
        ({"REDIS_URL": "redis://x", "GITHUB_APP_ID": "12"}, "GITHUB_PRIVATE_KEY"),
        ({"REDIS_URL": "localhost:6379"}, "REDIS_URL"),
        ({"REDIS_URL": "redis://x", "MERGE_HOLD_LOG_LEVEL": "chatty"}, "MERGE_HOLD_LOG_LEVEL"),
    ],
)
def test_serve_refuses_bad_settings_naming_the_variable(
    env: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from merge_hold import serve

    for name in list(os.environ):
        if name.startswith(("MERGE_HOLD_", "GITHUB_", "REDIS_URL")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serve.main([]) == 78
    assert named in capsys.readouterr().err


def test_serve_help_lists_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    from merge_hold import serve

    with pytest.raises(SystemExit) as exit_info:
        serve.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert all(option in out for option in ("--host", "--port", "--workers", "--debug"))
