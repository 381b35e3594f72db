"""End-to-end plumbing shared by the tests: the real app, real Redis, real rq workers, the GitHub emulator.

`Service` wires one merge-hold deployment to a `GitHubEmulator`: deliveries go in through the Flask app
(signed like GitHub signs them), `drain()` runs a real rq worker in burst mode until the queue is
empty, and the statuses are read back at the emulator.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from redis import Redis
from werkzeug.test import TestResponse

from foundation.settings import Settings
from state.queueing import all_queues
from workers import runtime
from workers.ops.tenants import burst
from workers.runtime import Runtime

WEBHOOK_SECRET = "e2e-secret"
PUBLIC_URL = "http://merge-hold.test"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "github" / "webhooks"
ROOT = Path(__file__).resolve().parent.parent


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def fixture(event: str, name: str) -> dict[str, Any]:
    """A GitHub webhook example (octokit/webhooks, MIT) as a fresh dict."""
    data: dict[str, Any] = json.loads((FIXTURES / event / name).read_text())
    return copy.deepcopy(data)


def service_settings(redis_url: str, api_url: str, app_id: int, private_key: str, app_slug: str,
                     **overrides: Any) -> Settings:
    base = Settings(
        redis_url=redis_url,
        github_app_id=app_id,
        github_private_key=private_key,
        github_webhook_secret=WEBHOOK_SECRET,
        github_api_url=api_url,
        public_url=PUBLIC_URL,
        app_slug=app_slug,
    )
    return replace(base, **overrides)


def service_env(settings: Settings) -> dict[str, str]:
    """The same settings as environment variables, for `merge-hold worker` subprocesses."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({
        "REDIS_URL": str(settings.redis_url),
        "GITHUB_APP_ID": str(settings.github_app_id),
        "GITHUB_PRIVATE_KEY": str(settings.github_private_key),
        "GITHUB_WEBHOOK_SECRET": str(settings.github_webhook_secret),
        "GITHUB_API_URL": settings.github_api_url,
        "MERGE_HOLD_PUBLIC_URL": settings.public_url,
        "MERGE_HOLD_APP_SLUG": str(settings.app_slug),
        "MERGE_HOLD_QUEUE": settings.queue_name,
    })
    return env


@dataclass
class Service:
    settings: Settings
    rt: Runtime
    app: Flask
    client: FlaskClient

    @classmethod
    def start(cls, settings: Settings) -> Service:
        from app import create_app

        rt = runtime.install(runtime.build(settings))
        app = create_app(settings)
        return cls(settings, rt, app, app.test_client())

    @property
    def redis(self) -> Redis:
        return self.rt.redis

    def deliver(self, event: str, payload: dict[str, Any], *, delivery_id: str | None = None) -> TestResponse:
        body = json.dumps(payload).encode()
        return self.client.post(
            "/webhooks/github",
            data=body,
            headers={
                "Content-Type": "application/json",
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
                "X-Hub-Signature-256": sign(body),
            },
        )

    def drain(self) -> None:
        """Pump the intake, then run a real rq worker (in this process, no fork) until the queue is empty."""
        from workers.intake.pump import pump_all

        pump_all(self.rt.redis, self.rt.queue)
        burst(self.rt.queue, with_scheduler=False)
        for queue in all_queues(self.rt.queue):  # the interactive queue and the bulk queues
            failed = queue.failed_job_registry
            if failed.count:
                job = queue.fetch_job(failed.get_job_ids()[0])
                raise AssertionError(f"job failed: {job.exc_info if job else failed.get_job_ids()}")

    def verdict(self, repo: str, number: int) -> dict[str, Any] | None:
        from state.store import load_verdict

        return load_verdict(self.redis, repo, number)


def worker_processes(settings: Settings, count: int, *, burst: bool = True) -> Iterator[subprocess.Popen[bytes]]:
    """`merge-hold worker` subprocesses: real, separate workers racing on one queue."""
    env = service_env(settings)
    for index in range(count):
        yield subprocess.Popen(
            [sys.executable, "-m", "merge_hold.cli", "worker", "--name", f"w{index}-{uuid.uuid4().hex[:6]}",
             *(["--burst"] if burst else [])],
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )


def held_widgets(emu: Any, redis_url: str, *, reason: str = "waiting for DB migration",
                 head5: str = "5" * 40) -> Service:
    """acme/widgets managed through a real installation event; #5 (head branch `feature/login`, head
    ``head5``) held by @alice through a real `/hold` comment, #6 free. ``emu`` is the `GitHubEmulator`."""
    from tests.emulator import APP_ID, PRIVATE_KEY_PEM

    repo = "acme/widgets"
    emu.add_installation(3, "acme")
    emu.add_repo(repo, installation_id=3)
    emu.add_pull(repo, 5, head_sha=head5, head_ref="feature/login", user="octocat")
    emu.add_pull(repo, 6, head_sha="6" * 40, head_ref="free-branch", user="octocat")
    svc = Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = 3
    added["repositories_added"] = [{"full_name": repo, "private": False}]
    svc.deliver("installation_repositories", added)
    comment = fixture("issue_comment", "created.payload.json")
    comment["repository"] = {**comment["repository"], "full_name": repo}
    comment["issue"].update(number=5, pull_request={"url": "x"})
    comment["comment"].update(body=f"/hold {reason}", author_association="OWNER",
                              created_at="2026-01-05T10:00:00Z", id=55)
    comment["comment"]["user"] = {**comment["comment"]["user"], "login": "alice"}
    svc.deliver("issue_comment", comment)
    svc.drain()
    assert (emu.latest_status(repo, head5) or {}).get("state") == "failure"
    return svc
