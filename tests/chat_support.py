"""Helpers the chat and room-hold tests share: signed Slack bodies, a recording `response_url`
receiver, a managed repo seeded in Redis, and a dry-run worker runtime over the test Redis."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from redis import Redis

from core import keys
from core.prstate import Facts, PullState, record_facts
from foundation.settings import Settings
from state import store
from state.queueing import all_queues
from tests.e2e_support import Service, service_settings
from tests.emulator import APP_ID, GitHubEmulator, private_key_pem
from tests.stub_http import QuietHandler, loopback
from workers import runtime
from workers.ops.tenants import burst
from workers.runtime import Runtime

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
MATTERMOST_TOKEN = "okwexkjpe7ygb8eq1ww58t483w"
TEAM = "T0MERGE1"
BINDING = ((TEAM, ("acme",)),)
"""The test workspace may act on the org ``acme`` (MERGE_HOLD_SLACK_TEAMS=T0MERGE1=acme)."""


def slack_signature(body: bytes, timestamp: str, secret: str = SLACK_SECRET) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def slack_headers(body: bytes, *, timestamp: str | None = None, secret: str = SLACK_SECRET) -> dict[str, str]:
    stamp = timestamp or str(int(time.time()))
    return {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": slack_signature(body, stamp, secret)}


def slack_body(command: str, text: str, response_url: str = "", **fields: str) -> bytes:
    """A slash-command body shaped like Slack's (field order and names of the documented example)."""
    form = {"token": "xyzz0WbapA4vBCDEFasx0q6G", "team_id": TEAM, "team_domain": "acme-eng",
            "channel_id": "C0REL", "channel_name": "releases", "user_id": "U0DANA", "user_name": "dana",
            "command": command, "text": text, "response_url": response_url,
            "trigger_id": "398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"}
    form.update(fields)
    return urlencode(form).encode()


@dataclass
class Catcher:
    """What the chat platform received on its `response_url`."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def wait(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.bodies) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return list(self.bodies)


@contextmanager
def response_catcher() -> Iterator[Catcher]:
    """A loopback HTTP server standing in for Slack's/Mattermost's `response_url`."""
    catcher = Catcher("")

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            catcher.bodies.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

    with loopback(Handler) as base:
        catcher.url = f"{base}/hooks/commands/T0MERGE1/1/x"
        yield catcher


def dry_runtime(redis: Redis, redis_url: str, **overrides: Any) -> Runtime:
    """Workers' runtime without App credentials (dry-run GitHub), installed for in-process jobs."""
    settings = Settings(redis_url=redis_url, queue_name="merge-hold-test", **overrides)
    return runtime.install(runtime.build(settings, redis))


def manage(redis: Redis, repo: str, prs: dict[int, str] | None = None, *, installation_id: int = 1) -> None:
    """A managed repo with default config and open PRs (number -> base branch) known to the store."""
    store.save_repo(redis, repo, store.RepoMeta(installation_id=installation_id, config_loaded=True))
    for number, base in (prs or {}).items():
        facts = Facts(at=datetime(2026, 1, 5, 10, tzinfo=UTC), head_sha=f"{number:040x}",
                      head_ref=f"topic-{number}", head_repo=repo, base=base, author="octocat")
        redis.set(keys.pr_state(repo, number),
                  json.dumps(replace(record_facts(PullState(repo=repo, number=number), facts), synced=True).to_dict()))
        redis.sadd(keys.open_prs(repo), number)


WIDGETS, GADGETS = "acme/widgets", "acme/gadgets"


def acme(emulator: GitHubEmulator, redis: Redis, roles: Mapping[str, str] | None = None) -> GitHubEmulator:
    """The org ``acme`` under installation 1 with `WIDGETS` and `GADGETS`, each managed with open PRs #1 (base
    main) and #2 (base release/1.0); ``roles`` (login -> role) on both repos."""
    emulator.add_installation(1, "acme")
    for repo in (WIDGETS, GADGETS):
        emulator.add_repo(repo, installation_id=1)
        manage(redis, repo, {1: "main", 2: "release/1.0"})
        for login, role in (roles or {}).items():
            emulator.set_permission(repo, login, role)
    return emulator


def drain(rt: Runtime) -> None:
    """Run a real rq worker in this process until the queue is empty; fail on a failed job."""
    burst(rt.queue, with_scheduler=False)
    for queue in all_queues(rt.queue):  # the interactive queue and the bulk queues
        failed = queue.failed_job_registry
        if failed.count:
            job = queue.fetch_job(failed.get_job_ids()[0])
            raise AssertionError(f"job failed: {job.exc_info if job else failed.get_job_ids()}")


# --- the GitHub emulator side ---------------------------------------------------------------------


def head_sha(repo: str, number: int) -> str:
    return hashlib.sha1(f"{repo}#{number}".encode()).hexdigest()


def emulated_service(emulator: GitHubEmulator, redis_url: str, **overrides: Any) -> Service:
    """One deployment (app, runtime, in-process worker) talking to the emulator as a real GitHub App."""
    settings = service_settings(redis_url, emulator.url, APP_ID, private_key_pem(), emulator.app_slug,
                                **overrides)
    return Service.start(settings)


def seed_repo(emulator: GitHubEmulator, redis: Redis, repo: str, count: int, *, installation_id: int = 1,
              base: str = "main", drafts: Iterable[int] = ()) -> list[int]:
    """``count`` open PRs at the emulator, and the repo managed in Redis (default config, loaded)."""
    if installation_id not in emulator.installations:
        emulator.add_installation(installation_id, repo.split("/", 1)[0])
    emulator.add_repo(repo, installation_id=installation_id)
    draft = set(drafts)
    for number in range(1, count + 1):
        emulator.add_pull(repo, number, head_sha=head_sha(repo, number), head_ref=f"topic-{number}", base=base,
                          draft=number in draft, created_at=1_767_000_000 + number)
    store.save_repo(redis, repo, store.RepoMeta(installation_id=installation_id, config_loaded=True))
    return list(range(1, count + 1))


def latest(emulator: GitHubEmulator, repo: str, number: int) -> dict[str, Any] | None:
    return emulator.latest_status(repo, head_sha(repo, number))
