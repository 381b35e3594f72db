"""Helpers the web app's tests share: an app over the real test Redis, a token, signed deliveries."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from redis import Redis
from werkzeug.serving import make_server
from werkzeug.test import TestResponse

from app import create_app
from core import keys, verdict_format
from core.holds import Hold, Source, from_iso
from core.status import build_status
from core.verdict import Verdict, verdict_record
from foundation.settings import Settings
from merge_hold.redis_server import free_port
from merge_hold.tokens import create as create_token

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WEBHOOKS = FIXTURES / "github" / "webhooks"
SECRET = "It's a Secret to Everybody"


def settings(redis_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    base = Settings(
        redis_url=redis_url,
        github_webhook_secret=SECRET,
        api_tokens_file=str(tmp_path / "tokens"),
        secret_key="test-secret-key",
        queue_name="merge-hold-test",
        data_dir=str(tmp_path / "data"),  # /setup's token and credentials, never the checkout's
    )
    return dataclasses.replace(base, **overrides)


def make_app(redis: Redis | None, tmp_path: Path, redis_url: str = "redis://127.0.0.1:1/0",
             **overrides: Any) -> tuple[Flask, str]:
    """An app over ``redis`` and a valid API token for it."""
    config = settings(redis_url, tmp_path, **overrides)
    token = create_token(Path(config.api_tokens_file or tmp_path / "tokens"), "tester", "admin")
    return create_app(config, redis=redis), token


def closed_port_url() -> str:
    """A Redis URL nothing listens on: every command fails with a connection error."""
    return f"redis://127.0.0.1:{free_port()}/0"


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def fixture_body(name: str, **patch: Any) -> bytes:
    """A GitHub example payload (``event/file``), optionally with top-level keys replaced."""
    payload = json.loads((WEBHOOKS / name).read_text())
    payload.update(patch)
    return json.dumps(payload).encode()


def delivery_headers(event: str | None, body: bytes, delivery: str = "d-1", **extra: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body),
               "X-GitHub-Delivery": delivery}
    if event is not None:
        headers["X-GitHub-Event"] = event
    headers.update(extra)
    return headers


@contextmanager
def serving(app: Flask) -> Iterator[str]:
    """The app behind a real threaded HTTP server on loopback; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def hold(holder: str, reason: str, *, source: str = "comment", created: str = "2026-01-05T10:00:00Z",
         expires: str | None = None, scope: str = "") -> Hold:
    return Hold(id=f"{source}:{holder}", source=Source(source), scope=scope, holder=holder, reason=reason,
                created_at=from_iso(created) or datetime.now(UTC), expires_at=from_iso(expires),
                origin=f"https://github.com/x/y/pull/1#issuecomment-{len(holder)}")


def store_verdict(r: Redis, repo: str, number: int, holds: tuple[Hold, ...] = (), *, error: str | None = None,
                  head_ref: str = "feature/x") -> dict[str, Any]:
    """What the workers store: a real `verdict_record`, and the held-set membership that goes with it."""
    verdict = Verdict(repo, number, holds, head_sha="ec26c3e57ca3a959ca5aad62de7213c562f8c821", base="main",
                      head_ref=head_ref, error=error)
    record = verdict_record(verdict, version=3, computed_at=datetime(2026, 1, 5, 11, 0, tzinfo=UTC),
                            status=build_status(verdict, target_url=f"http://dash/{repo}/pull/{number}"))
    r.set(keys.verdict(repo, number), verdict_format.encode_verdict(record))
    r.sadd(keys.MANAGED_REPOS, repo.lower())
    r.set(keys.managed(repo), "1")
    if holds or error:
        r.sadd(keys.held_prs(repo), number)
        r.hset(keys.held_heads(repo), str(number),
               verdict_format.encode_held_head("main", verdict.head_sha, record["description"]))
    return record


def csrf_of(client: FlaskClient) -> str:
    """The session's CSRF token, as a browser gets it: from the login form (which also starts the session)."""
    client.get("/login")
    with client.session_transaction() as state:
        return str(state["csrf_token"])


def post_form(client: FlaskClient, path: str, data: dict[str, str]) -> TestResponse:
    """A form POST the way the page sends it: with the session's CSRF token."""
    return client.post(path, data={**data, "csrf_token": csrf_of(client)})
