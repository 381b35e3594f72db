"""The guard's verdict sources: the raw RESP client and the Redis source against a real Redis (round trips
counted by a transparent relay), the HTTP source against a recording stdlib server and the real app."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from hook.spec import Spec, SpecError
from hook.verdicts.redis_client import Connection, RedisError, ReplyError, connect, parse_redis_url
from hook.verdicts.sources import HttpSource, PrQuery, RedisSource, Unreachable, open_source
from merge_hold.redis_server import free_port
from tests.hook_support import CountingRelay, freezes_record, hold, record, store, store_freezes
from tests.needs import needs

REPO = "Acme/Widgets"


def _db(url: str) -> int:
    return int(url.rsplit("/", 1)[1] or 0)


@pytest.fixture()
def relay(redis_url: str) -> Iterator[CountingRelay]:
    parsed = parse_redis_url(redis_url)
    relay = CountingRelay((parsed.host, parsed.port))
    yield relay
    relay.close()


# -- URL parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://127.0.0.1:6379/0", ("127.0.0.1", 6379, None, None, 0, False)),
        ("redis://h", ("h", 6379, None, None, 0, False)),
        ("redis://mh-hook:p%40ss%3Aw0rd@h:7000/3", ("h", 7000, "mh-hook", "p@ss:w0rd", 3, False)),
        ("redis://:only-pass@h/1", ("h", 6379, None, "only-pass", 1, False)),
        ("redis://user@h", ("h", 6379, "user", None, 0, False)),
        ("rediss://u:p@[::1]:6380/2", ("::1", 6380, "u", "p", 2, True)),
        ("redis://h?db=4", ("h", 6379, None, None, 4, False)),
        ("redis://u:p@w@h/0", ("h", 6379, "u", "p@w", 0, False)),  # the last @ ends the userinfo
    ],
)
def test_redis_url_rows(url: str, expected: tuple[Any, ...]) -> None:
    parsed = parse_redis_url(url)
    assert (parsed.host, parsed.port, parsed.username, parsed.password, parsed.db, parsed.tls) == expected
    assert "p@ss" not in repr(parsed) and "only-pass" not in repr(parsed)


@pytest.mark.parametrize("url", ["http://h", "redis://", "redis://h:port/0", "redis://h/x", "unix:///tmp/s"])
def test_bad_redis_urls_are_refused(url: str) -> None:
    with pytest.raises(RedisError):
        parse_redis_url(url)


# -- the RESP client against a real Redis ----------------------------------------------------------


def test_reply_types_round_trip(redis_client: redis.Redis, redis_url: str) -> None:
    redis_client.rpush("l", "a", "")
    redis_client.xadd("s", {"k": "v"})
    with connect(redis_url, timeout_s=2) as conn:
        replies = conn.pipeline([
            ["SET", "k", "caf\u00e9\r\n$3"],  # payload with protocol bytes inside a bulk string
            ["GET", "k"], ["GET", "missing"], ["INCR", "n"], ["LRANGE", "l", 0, -1],
            ["XRANGE", "s", "-", "+"], ["HGET", "l", "x"], ["PING"],
        ])
    assert replies[0] == b"OK"
    assert replies[1] == "caf\u00e9\r\n$3".encode()
    assert replies[2] is None
    assert replies[3] == 1
    assert replies[4] == [b"a", b""]
    assert isinstance(replies[5], list) and replies[5][0][1] == [b"k", b"v"]
    assert isinstance(replies[6], ReplyError) and "WRONGTYPE" in replies[6].message
    assert replies[7] == b"PONG"


def test_large_values_are_read_across_many_recvs(redis_client: redis.Redis, redis_url: str) -> None:
    big = "x" * 300_000
    redis_client.set("big", big)
    with connect(redis_url, timeout_s=2) as conn:
        assert conn.call("GET", "big") == big.encode()


def test_wrong_password_is_a_redis_error(redis_url: str) -> None:
    parsed = parse_redis_url(redis_url)
    with pytest.raises(RedisError, match="AUTH"), connect(
        f"redis://nobody:wrong@{parsed.host}:{parsed.port}/0", timeout_s=2
    ) as conn:
        conn.call("PING")


def test_silent_server_times_out_within_the_budget() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts at TCP level, never answers
    try:
        conn = Connection(parse_redis_url(f"redis://127.0.0.1:{listener.getsockname()[1]}/0"), timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            conn.call("GET", "x")
        assert 0.25 < time.monotonic() - started < 1.0
        conn.close()
    finally:
        listener.close()


# -- the Redis source ------------------------------------------------------------------------------


def test_pr_lookup_is_one_round_trip_with_auth_and_select(
    redis_client: redis.Redis, redis_url: str, relay: CountingRelay
) -> None:
    rec = record(REPO, 5, [hold("comment", "alice", "wait")])
    store(redis_client, REPO, 5, rec)
    admin: Any = redis_client  # redis-py's execute_command is untyped
    admin.execute_command("ACL", "SETUSER", "mh-src-test", "on", ">pw", "~*", "+@all")
    try:
        source = RedisSource(relay.url("mh-src-test:pw@", _db(redis_url)), timeout_s=2)
        (answer,), () = source.lookup([PrQuery(REPO.lower(), 5)], [])
        source.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "mh-src-test")
    assert relay.turns == 1
    assert answer.managed and answer.number == 5 and answer.record == rec and answer.problem is None


def test_branch_lookup_is_two_round_trips_and_resolves_the_number(
    redis_client: redis.Redis, redis_url: str, relay: CountingRelay
) -> None:
    rec = record(REPO, 9, [])
    store(redis_client, REPO, 9, rec, head="feature/login")
    store(redis_client, "acme/other", 0, None)
    source = RedisSource(relay.url(db=_db(redis_url)), timeout_s=2)
    answers, repos = source.lookup([PrQuery(REPO, None, "feature/login"), PrQuery(REPO, None, "nope")],
                                   [REPO, "acme/other", "acme/unmanaged"])
    source.close()
    assert relay.turns == 2
    assert (answers[0].number, answers[0].record) == (9, rec)
    assert (answers[1].number, answers[1].record, answers[1].managed) == (None, None, True)
    assert [(r.managed, r.held) for r in repos] == [(True, []), (True, []), (False, [])]


@pytest.mark.parametrize(
    ("stored", "managed", "expect"),
    [
        (None, True, (True, None, None)),
        (None, False, (False, None, None)),
        ("{not json", True, (True, None, "not valid JSON")),
        ('{"schema": 1, "held": false}', False, (False, {"schema": 1, "held": False}, None)),
    ],
)
def test_pr_answer_rows(redis_client: redis.Redis, redis_url: str, stored: str | None, managed: bool,
                        expect: tuple[Any, ...]) -> None:
    store(redis_client, REPO, 3, stored, managed=managed)
    source = RedisSource(redis_url, timeout_s=2)
    (answer,), _ = source.lookup([PrQuery(REPO, 3)], [])
    source.close()
    assert answer.managed is expect[0] and answer.record == expect[1]
    assert (answer.problem is None) if expect[2] is None else (expect[2] in (answer.problem or ""))


def test_held_set_and_bad_head_index(redis_client: redis.Redis, redis_url: str) -> None:
    store(redis_client, REPO, 7, record(REPO, 7, [hold("label", "", "label do-not-merge/hold")]))
    store(redis_client, REPO, 2, record(REPO, 2, [hold("review", "bob", "changes requested")]))
    redis_client.sadd(keys.held_prs(REPO), "junk")
    redis_client.set(keys.head_index(REPO, "weird"), "not-a-number")
    source = RedisSource(redis_url, timeout_s=2)
    (answer,), (repo,) = source.lookup([PrQuery(REPO, None, "weird")], [REPO])
    source.close()
    assert repo.held == [2, 7]
    assert answer.number is None and "head index" in (answer.problem or "")


def test_held_heads_come_with_the_repo_answer_in_the_same_round_trip(
    redis_client: redis.Redis, redis_url: str, relay: CountingRelay
) -> None:
    store(redis_client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "wait")], head_sha="a" * 40))
    store(redis_client, REPO, 8, record(REPO, 8, [hold("comment", "bob", "wait")], base="release/1", head_sha="b" * 40))
    redis_client.hset(keys.held_heads(REPO), "junk", "{}")
    redis_client.hset(keys.held_heads(REPO), "9", "{not json")
    redis_client.hset(keys.held_heads(REPO), "10", '{"base": 3, "head_sha": "c"}')
    redis_client.hset(keys.held_heads(REPO), "11", '["main", "c"]')
    redis_client.hset(keys.held_heads(REPO), "12", '[3, "c", "d"]')
    # An earlier release's entry, an object: still read.
    redis_client.hset(keys.held_heads(REPO), "13", '{"base": "main", "head_sha": "d", "description": "x"}')
    frozen = freezes_record(REPO, [hold("room", "carol", "release week", scope=f"{REPO}@release/*")])
    store_freezes(redis_client, REPO, frozen)
    store_freezes(redis_client, "acme/broken", "{not json")
    source = RedisSource(relay.url(db=_db(redis_url)), timeout_s=2)
    (answer,), (repo, other, broken) = source.lookup([PrQuery(REPO, 5)], [REPO, "acme/none", "acme/broken"])
    source.close()
    assert relay.turns == 1 and answer.number == 5
    assert repo.heads == {5: ("main", "a" * 40, "Held"), 8: ("release/1", "b" * 40, "Held"), 13: ("main", "d", "x")}
    assert repo.freezes == frozen and frozen["freezes"][0]["branches"] == "release/*"  # the branch freezes, same trip
    assert (other.managed, other.held, other.heads, other.freezes) == (False, [], {}, None)
    assert broken.freezes == b"{not json"  # passed on as is: `hook.freezes` refuses it (doubt)


def test_refused_reads_and_closed_ports_are_unreachable(redis_client: redis.Redis, redis_url: str) -> None:
    redis_client.set(keys.managed(REPO), "1")
    redis_client.set(keys.held_prs(REPO), "a string where a set belongs")
    source = RedisSource(redis_url, timeout_s=2)
    with pytest.raises(Unreachable, match="WRONGTYPE"):
        source.lookup([], [REPO])
    source.close()
    closed = RedisSource(f"redis://127.0.0.1:{free_port()}/0", timeout_s=2)
    with pytest.raises(Unreachable):
        closed.lookup([PrQuery(REPO, 1)], [])


def test_send_events_appends_to_the_hook_stream(redis_client: redis.Redis, redis_url: str) -> None:
    source = RedisSource(redis_url, timeout_s=2)
    assert source.send_events([{"repo": "a/b", "pr": 1}, {"repo": "a/b", "pr": 2}]) == 2
    source.close()
    entries: list[Any] = redis_client.xrange(keys.HOOK_EVENTS) or []
    assert [e[1][b"event"] for e in entries] == [b"hook.gate.fired"] * 2
    assert json.loads(entries[1][1][b"data"]) == {"pr": 2, "repo": "a/b"}


# -- the HTTP source -------------------------------------------------------------------------------


class Recorder(ThreadingHTTPServer):
    def __init__(self, routes: dict[tuple[str, str], tuple[int, object, float]]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        super().__init__(("127.0.0.1", 0), RecordingHandler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/mh"


class RecordingHandler(BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.seen.append((self.command, self.path, dict(self.headers), body))
        status, reply, delay = self.server.routes.get((self.command, self.path), (500, {"error": "?"}, 0.0))
        time.sleep(delay)
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client gave up first: what the timeout rows want
            self.wfile.write(data)

    do_GET = do_POST = _serve

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def recorder() -> Iterator[Recorder]:
    server = Recorder({})
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_http_source_paths_headers_and_answers(recorder: Recorder) -> None:
    rec = record("acme/widgets", 5, [hold("comment", "alice", "wait")])
    recorder.routes.update({
        ("GET", "/mh/api/v1/verdicts/acme/widgets/5"): (200, rec, 0.0),
        ("GET", "/mh/api/v1/verdicts/acme/widgets/branches/feature%2Flogin%20x"):
            (404, {"error": "no verdict", "managed": True}, 0.0),
        ("GET", "/mh/api/v1/repos/acme/widgets/guard"): (200, {"managed": True, "held": [7, 5],
                                                               "freezes": {"f": 1, "freezes": []}}, 0.0),
        ("POST", "/mh/api/v1/hook-events"): (202, {"stored": 1}, 0.0),
    })
    source = HttpSource(recorder.base, "tok-123", timeout_s=2)
    answers, repos = source.lookup([PrQuery("acme/widgets", 5), PrQuery("acme/widgets", None, "feature/login x")],
                                   ["acme/widgets"])
    assert source.send_events([{"repo": "acme/widgets"}]) == 1
    source.close()
    assert (answers[0].managed, answers[0].number, answers[0].record) == (True, 5, rec)
    assert (answers[1].managed, answers[1].number, answers[1].record) == (True, None, None)
    assert (repos[0].managed, repos[0].held, repos[0].freezes) == (True, [5, 7], {"f": 1, "freezes": []})
    assert all(headers["Authorization"] == "Bearer tok-123" for _, _, headers, _ in recorder.seen)
    assert json.loads(recorder.seen[-1][3]) == {"events": [{"repo": "acme/widgets"}]}


@pytest.mark.parametrize(
    ("status", "body", "delay"),
    [(401, {"error": "a valid bearer token is required"}, 0.0), (500, {"error": "boom"}, 0.0),
     (404, {"error": "no route"}, 0.0), (200, ["not", "an", "object"], 0.0), (200, {}, 1.5)],
)
def test_http_failures_are_unreachable(recorder: Recorder, status: int, body: object, delay: float) -> None:
    recorder.routes[("GET", "/mh/api/v1/verdicts/acme/widgets/5")] = (status, body, delay)
    source = HttpSource(recorder.base, "t", timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(Unreachable):
        source.lookup([PrQuery("acme/widgets", 5)], [])
    assert time.monotonic() - started < 1.2
    source.close()


def test_http_source_against_the_real_app(redis_client: redis.Redis, tmp_path: Path) -> None:
    from tests.webapp_support import make_app, serving

    app, token = make_app(redis_client, tmp_path)
    rec = record(REPO, 5, [hold("comment", "alice", "wait")])
    store(redis_client, REPO, 5, rec, head="feature/a/b")
    with serving(app) as base:
        source = HttpSource(base, token, timeout_s=5)
        answers, repos = source.lookup(
            [PrQuery(REPO, 5), PrQuery(REPO, None, "feature/a/b"), PrQuery(REPO, 6), PrQuery("x/y", 1)],
            [REPO, "x/y"],
        )
        stored = source.send_events([{"repo": REPO, "pr": 5, "decision": "block"}])
        source.close()
    assert [(a.managed, a.number, a.record is not None) for a in answers] == [
        (True, 5, True), (True, 5, True), (True, 6, False), (False, 1, False)]
    assert answers[0].record == rec
    assert [(r.managed, r.held) for r in repos] == [(True, [5]), (False, [])]
    assert repos[0].heads == {5: ("main", rec["head_sha"], "Held")}
    assert stored == 1
    stored_entries: list[Any] = redis_client.xrange(keys.HOOK_EVENTS) or []
    (entry,) = stored_entries
    assert json.loads(entry[1][b"data"])["decision"] == "block"


def test_open_source_rows(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("abc\n")
    assert isinstance(open_source(Spec(path="s", verdict_source="redis://h/0")), RedisSource)
    assert isinstance(open_source(Spec(path="s", verdict_source="https://mh", token_file=str(token))), HttpSource)
    with pytest.raises(SpecError):
        open_source(Spec(path="s", verdict_source="redis://h:x/0"))
    with pytest.raises(SpecError):
        open_source(Spec(path="s", verdict_source="https://mh", token_file=str(tmp_path / "missing")))
    token.write_text("two\nlines\n")
    with pytest.raises(SpecError):
        open_source(Spec(path="s", verdict_source="https://mh", token_file=str(token)))


# -- rediss:// -------------------------------------------------------------------------------------


def _self_signed(directory: Path) -> tuple[Path, Path]:
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "merge-hold test redis")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "redis.crt", directory / "redis.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@needs("redis-server-tls")
def test_rediss_with_a_private_ca(tmp_path: Path) -> None:
    import shutil
    import subprocess

    binary = shutil.which("redis-server")
    assert binary is not None
    cert, key = _self_signed(tmp_path)
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", "0", "--tls-port", str(port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
         "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}"
    try:
        deadline = time.monotonic() + 10
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode()[:200] if process.stderr else ""
                pytest.skip(f"redis-server without TLS: {error}")
            try:
                with connect(url, timeout_s=1) as conn:
                    assert conn.call("SET", keys.managed(REPO), "1") == b"OK"
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        source = RedisSource(url, timeout_s=2)
        (answer,), _ = source.lookup([PrQuery(REPO, 1)], [])
        source.close()
        assert answer.managed and answer.record is None
        untrusted = RedisSource(f"rediss://127.0.0.1:{port}/0", timeout_s=2)  # system CAs: refused
        with pytest.raises(Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
            untrusted.lookup([PrQuery(REPO, 1)], [])
    finally:
        process.terminate()
        process.wait(5)
