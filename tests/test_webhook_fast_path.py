"""The receiver ahead of Flask (`app.webhooks.FastPath`) and its kept Redis connections
(`app.intake_writer`): the same answers as the Flask route, one Redis round trip per delivery, no new
connection per request, and recovery when Redis goes away and comes back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests
from flask import Flask, request_started
from werkzeug.test import EnvironBuilder

from app.intake_writer import resp
from app.webhooks import PATH, FastPath
from core import keys
from core.deliveries import unpack
from merge_hold.redis_server import LocalRedis
from tests.webapp_support import delivery_headers, fixture_body, make_app, serving, sign

QUEUE = "merge-hold-test"
BODY = fixture_body("pull_request/opened.payload.json")
PING = b'{"zen": "Keep it logically awesome.", "hook_id": 1}'

# (name, method, path, body, headers, environ overrides)
Row = tuple[str, str, str, bytes, dict[str, str], dict[str, Any]]
ROWS: list[Row] = [
    ("queued", "POST", PATH, BODY, delivery_headers("pull_request", BODY), {}),
    ("queued over https", "POST", PATH, BODY, delivery_headers("pull_request", BODY),
     {"wsgi.url_scheme": "https"}),
    ("queued without a delivery id", "POST", PATH, BODY,
     {"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(BODY)}, {}),
    ("ping", "POST", PATH, PING, delivery_headers("ping", PING), {}),
    ("ping not JSON", "POST", PATH, b"\xff", delivery_headers("ping", b"\xff"), {}),
    ("unhandled event, not ASCII", "POST", PATH, BODY, delivery_headers("l\u00e9bel", BODY), {}),
    ("no signature", "POST", PATH, BODY, {"X-GitHub-Event": "pull_request"}, {}),
    ("signature of other bytes", "POST", PATH, BODY,
     {"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(BODY + b" ")}, {}),
    ("no event header", "POST", PATH, BODY, {"X-Hub-Signature-256": sign(BODY)}, {}),
    ("delivery id with a slash", "POST", PATH, BODY, delivery_headers("push", BODY, delivery="../x"), {}),
    ("not a JSON object", "POST", PATH, b"[1]", delivery_headers("push", b"[1]"), {}),
    ("over the cap", "POST", PATH, b"{" + b" " * 5000 + b"}", delivery_headers("push", b"{" + b" " * 5000 + b"}"),
     {}),
    ("Content-Length not a number", "POST", PATH, BODY, delivery_headers("push", BODY), {"CONTENT_LENGTH": "x"}),
    ("body cut short", "POST", PATH, BODY, delivery_headers("push", BODY), {"CONTENT_LENGTH": str(len(BODY) + 9)}),
    ("a session cookie is ignored", "POST", PATH, BODY,
     {**delivery_headers("push", BODY), "Cookie": "merge_hold_session=forged"}, {}),
    # Not the fast path's: Flask answers these, with or without it.
    ("GET", "GET", PATH, b"", {}, {}),
    ("trailing slash", "POST", PATH + "/", BODY, delivery_headers("push", BODY), {}),
    ("double slash", "POST", "/webhooks//github", BODY, delivery_headers("push", BODY), {}),
]


def _call(wsgi: Any, row: Row) -> tuple[str, list[tuple[str, str]], bytes]:
    _name, method, path, body, headers, overrides = row
    environ = EnvironBuilder(path=path, method=method, data=body, headers=list(headers.items())).get_environ()
    environ.update(overrides)
    seen: list[tuple[str, list[tuple[str, str]]]] = []
    chunks = wsgi(environ, lambda status, header_list, exc_info=None: seen.append((status, header_list)))
    payload = b"".join(chunks)
    getattr(chunks, "close", lambda: None)()
    return seen[0][0], sorted(seen[0][1]), payload


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_the_fast_path_answers_as_the_flask_route_does(redis_client: redis.Redis, tmp_path: Path, row: Row) -> None:
    app, _ = make_app(redis_client, tmp_path, max_body_bytes=4096, public_url="http://hold.example")
    assert isinstance(app.wsgi_app, FastPath)
    flask_only = app.wsgi_app.app  # Flask's own dispatch: the route, its hooks, its error handlers
    intake = keys.intake(QUEUE)
    fast = _call(app, row)
    queued_fast = redis_client.llen(intake)
    slow = _call(flask_only, row)
    assert fast == slow
    assert redis_client.llen(intake) == 2 * queued_fast  # each path queued the same (0 or 1 entry)
    status, headers, _ = fast
    if status.startswith("202") and row[0].startswith("queued"):
        assert queued_fast == 1
    assert ("X-Frame-Options", "DENY") in headers
    assert (("Strict-Transport-Security", "max-age=31536000; includeSubDomains") in headers) == (
        row[5].get("wsgi.url_scheme") == "https")


def test_the_fast_path_skips_flask_and_only_for_its_route(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path)
    started: list[str] = []

    def count(sender: Flask, **_: Any) -> None:
        started.append("flask")

    request_started.connect(count, app)
    client = app.test_client()
    assert client.post(PATH, data=BODY, headers=delivery_headers("pull_request", BODY)).status_code == 202
    assert started == []
    assert client.get(PATH).status_code == 405
    assert client.get("/healthz").status_code == 200
    assert started == ["flask", "flask"]


# -- Redis: one round trip, kept connections ----------------------------------------------------------------


@pytest.fixture()
def own_redis(tmp_path: Path) -> Iterator[LocalRedis]:
    """A Redis of this test's own: its command and connection counts are the receiver's alone."""
    server = LocalRedis(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


def _command(client: redis.Redis, *args: str) -> Any:
    run: Any = client  # redis-py's execute_command is untyped
    return run.execute_command(*args)


def _stats(client: redis.Redis) -> dict[str, int]:
    commands = client.info("commandstats")
    stats = client.info("stats")
    counts = {name: int(commands.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("lpush", "ping", "wait")}
    counts["connections"] = int(stats["total_connections_received"])
    return counts


def _post(base: str, n: int, tag: str) -> int:
    return requests.post(f"{base}{PATH}", data=BODY, timeout=10,
                         headers=delivery_headers("pull_request", BODY, delivery=f"{tag}-{n}")).status_code


def test_one_lpush_per_delivery_on_kept_connections(own_redis: LocalRedis, tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=own_redis.url)  # the app's own client, as in production
    probe = redis.Redis.from_url(own_redis.url)
    with serving(app) as base:
        assert _post(base, 0, "warm") == 202  # the receiver's first connection
        before = _stats(probe)
        statuses: list[int] = []
        threads = [threading.Thread(target=lambda t=t: statuses.extend(_post(base, n, f"t{t}") for n in range(15)))
                   for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after = _stats(probe)
    assert statuses == [202] * 60
    assert probe.llen(keys.intake(QUEUE)) == 61
    # One LPUSH per delivery and nothing else: no WAIT (MERGE_HOLD_MIN_REPLICAS is 0), at most one new
    # connection per request running at once (never one per request), and a PING only as redis-py's
    # health check of a new connection (then after 30 s idle), never per request.
    new_connections = after["connections"] - before["connections"]
    assert after["lpush"] - before["lpush"] == 60
    assert after["wait"] == before["wait"] == 0
    assert new_connections <= 4
    assert after["ping"] - before["ping"] <= new_connections
    probe.close()


def test_kept_connections_recover_when_redis_comes_back(own_redis: LocalRedis, tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=own_redis.url)
    client = app.test_client()

    def post(delivery: str) -> int:
        return client.post(PATH, data=BODY, headers=delivery_headers("push", BODY, delivery=delivery)).status_code

    assert post("a") == 202
    _command(redis.Redis.from_url(own_redis.url), "CLIENT", "KILL", "TYPE", "normal")
    assert post("b") == 202  # the kept connection was closed under it: reconnected, not a 503
    own_redis.stop()
    started = time.monotonic()
    assert post("c") == 503  # not durably queued: GitHub delivers it again
    assert time.monotonic() - started < 5  # the web profile fails fast, well inside GitHub's 10 s
    own_redis.start()
    assert post("d") == 202
    fresh = redis.Redis.from_url(own_redis.url)  # the restarted server kept nothing (no persistence)
    entries: list[bytes] = fresh.lrange(keys.intake(QUEUE), 0, -1)  # type: ignore[assignment]
    assert [unpack(e).delivery_id for e in entries] == ["d"]
    fresh.close()


def test_min_replicas_met_by_a_real_replica(tmp_path: Path) -> None:
    """LPUSH and WAIT pipelined on the kept connection: acknowledged once the replica has the entry."""
    primary = LocalRedis(tmp_path / "primary").start()
    replica = LocalRedis(tmp_path / "replica").start()
    try:
        replica_client = redis.Redis(port=replica.port)
        _command(replica_client, "REPLICAOF", "127.0.0.1", str(primary.port))
        deadline = time.monotonic() + 20
        while replica_client.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync"
            time.sleep(0.05)
        app, _ = make_app(None, tmp_path, redis_url=primary.url, min_replicas=1)
        client = app.test_client()
        for n in range(3):
            response = client.post(PATH, data=BODY, headers=delivery_headers("push", BODY, delivery=f"r-{n}"))
            assert response.status_code == 202
            # WAIT returned only once the replica had acknowledged the write: it holds the entry now.
            assert replica_client.llen(keys.intake(QUEUE)) == n + 1
        assert _stats(redis.Redis(port=primary.port))["wait"] == 3
        replica_client.close()
    finally:
        replica.stop()
        primary.stop()


@pytest.mark.parametrize("commands", [
    [(b"LPUSH", b"rq:intake:default", b"push\ngh-1\n{}")],
    [(b"LPUSH", b"k", b"")],  # an empty bulk string
    [(b"LPUSH", b"k", b"a\r\nb" * 5000)],  # CRLF inside, past redis-py's 6000-byte chunking
    [(b"LPUSH", b"k", bytes(range(256)) * 40), (b"WAIT", b"2", b"1000")],
])
def test_the_writer_packs_commands_as_redis_py_does(commands: list[tuple[bytes, ...]]) -> None:
    make: Any = redis.Connection  # redis-py's connection is untyped; packing needs no server
    connection = make()
    assert resp(commands) == b"".join(connection.pack_commands(commands))
