"""The guard's Redis Sentinel source against real `redis-server --sentinel` processes on ephemeral ports: it
asks the sentinels for the primary, reads from it, skips dead sentinels and stale answers, follows a
failover; and its URL parser agrees with the server's (`core.redis_url`)."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from hook.verdicts.redis_client import RedisError, encode
from hook.verdicts.sentinel import SentinelConnection, SentinelURL, parse_sentinel_url
from merge_hold.redis_server import LocalRedis, free_port, redis_server_binary
from tests.hook_support import hold, payload, record, run_guard, store, write_spec

SERVICE = "mh-primary"
REPO = "acme/widgets"


def wait_for(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except (OSError, redis.RedisError):
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def command(client: redis.Redis, *args: str) -> Any:
    run: Any = client  # redis-py's execute_command is untyped
    return run.execute_command(*args)


class Sentinel:
    """One `redis-server --sentinel` watching ``primary_port`` under `SERVICE`."""

    def __init__(self, directory: Path, primary_port: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        conf = directory / "sentinel.conf"
        conf.write_text(f"port {self.port}\nbind 127.0.0.1\ndir {directory}\n"
                        f"sentinel monitor {SERVICE} 127.0.0.1 {primary_port} 1\n"
                        f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                        f"sentinel failover-timeout {SERVICE} 5000\n")
        self.process = subprocess.Popen([redis_server_binary(), str(conf), "--sentinel", "--loglevel", "warning"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, socket_timeout=2)
        wait_for(lambda: self.client.ping(), f"sentinel on {self.port}")

    def primary(self) -> tuple[str, int] | None:
        found = command(self.client, "SENTINEL", "get-master-addr-by-name", SERVICE)
        return (found[0].decode(), int(found[1])) if found else None

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@pytest.fixture()
def topology(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A real primary, one replica of it, and a sentinel watching the primary."""
    primary = LocalRedis(tmp_path / "primary").start()
    replica = LocalRedis(tmp_path / "replica").start()
    started: list[Any] = [primary, replica]
    try:
        command(redis.Redis(port=replica.port), "REPLICAOF", "127.0.0.1", str(primary.port))
        sentinel = Sentinel(tmp_path / "sentinel", primary.port)
        started.append(sentinel)
        yield {"primary": primary, "replica": replica, "sentinel": sentinel}
    finally:
        for process in reversed(started):
            process.stop()


def held_pr(port: int, number: int = 5) -> None:
    client = redis.Redis(port=port)
    store(client, REPO, number, record(REPO, number, [hold("comment", "alice", "DB migration", number=number)]))
    client.close()


def lookup(url: str, number: int = 5, timeout_s: float = 3.0) -> list[object]:
    conn = SentinelConnection(parse_sentinel_url(url), timeout_s=timeout_s)
    try:
        return conn.pipeline([["MGET", keys.verdict(REPO, number), keys.managed(REPO)]])
    finally:
        conn.close()


def test_the_verdict_is_read_from_the_primary_the_sentinel_names(topology: dict[str, Any]) -> None:
    held_pr(topology["primary"].port)
    port = topology["sentinel"].port
    reply = lookup(f"redis+sentinel://127.0.0.1:{port}/{SERVICE}")
    assert isinstance(reply[0], list) and reply[0][1] == b"1" and b'"h":true' in reply[0][0]


def test_a_dead_sentinel_is_skipped_and_an_unknown_service_is_an_error(topology: dict[str, Any]) -> None:
    held_pr(topology["primary"].port)
    live, dead = topology["sentinel"].port, free_port()
    reply = lookup(f"redis+sentinel://127.0.0.1:{dead},127.0.0.1:{live}/{SERVICE}")
    assert isinstance(reply[0], list) and reply[0][1] == b"1"
    with pytest.raises(RedisError, match="knows no primary named 'other'"):
        lookup(f"redis+sentinel://127.0.0.1:{live}/other")
    with pytest.raises(RedisError, match=f"sentinel 127.0.0.1:{dead}"):
        lookup(f"redis+sentinel://127.0.0.1:{dead}/{SERVICE}")


class StaleSentinel:
    """A stand-in sentinel that still names an old primary (``address``), as a real one can mid-failover."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.address = address
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with client:
                client.recv(4096)
                client.sendall(encode([self.address[0], str(self.address[1])]))  # an array of two bulks

    def close(self) -> None:
        self.listener.close()


def test_a_stale_answer_naming_a_replica_is_skipped_for_the_next_sentinel(topology: dict[str, Any]) -> None:
    held_pr(topology["primary"].port)
    wait_for(lambda: redis.Redis(port=topology["replica"].port).get(keys.managed(REPO)), "replication")
    stale = StaleSentinel(("127.0.0.1", topology["replica"].port))
    try:
        reply = lookup(f"redis+sentinel://127.0.0.1:{stale.port},127.0.0.1:{topology['sentinel'].port}/{SERVICE}")
        assert isinstance(reply[0], list) and reply[0][1] == b"1"
        with pytest.raises(RedisError, match="is a slave, not the primary"):
            lookup(f"redis+sentinel://127.0.0.1:{stale.port}/{SERVICE}")
    finally:
        stale.close()


def test_after_a_failover_the_guard_reads_the_promoted_replica(topology: dict[str, Any], tmp_path: Path) -> None:
    sentinel, primary, replica = topology["sentinel"], topology["primary"], topology["replica"]
    wait_for(lambda: command(sentinel.client, "SENTINEL", "replicas", SERVICE), "sentinel to see the replica")
    wait_for(lambda: redis.Redis(port=replica.port).info("replication").get("master_link_status") == "up",
             "the replica to sync")
    command(sentinel.client, "SENTINEL", "failover", SERVICE)
    wait_for(lambda: sentinel.primary() == ("127.0.0.1", replica.port), "the failover")
    wait_for(lambda: redis.Redis(port=replica.port).info("replication")["role"] == "master", "promotion")
    held_pr(replica.port, 6)  # only the new primary has it
    source = f"redis+sentinel://127.0.0.1:{sentinel.port}/{SERVICE}"
    spec = write_spec(tmp_path, source, on_unknown="allow")
    done = run_guard(spec, payload(f"gh pr merge 6 -R {REPO}", cwd=str(tmp_path)))
    assert done.returncode == 2, done.stderr
    assert f"{REPO}#6 is on hold" in done.stderr and "DB migration" in done.stderr
    del primary


def test_the_guard_blocks_through_sentinel_with_auth_and_a_database(tmp_path: Path) -> None:
    primary = LocalRedis(tmp_path / "primary").start()
    sentinel = None
    try:
        admin = redis.Redis(port=primary.port)
        command(admin, "ACL", "SETUSER", "mh-hook", "on", ">s3cr:t@", "~*", "+@all")
        admin.select(3)
        held_pr_db = redis.Redis(port=primary.port, db=3)
        store(held_pr_db, REPO, 5, record(REPO, 5, [hold("comment", "alice", "DB migration")]))
        sentinel = Sentinel(tmp_path / "sentinel", primary.port)
        source = f"redis+sentinel://mh-hook:s3cr%3At%40@127.0.0.1:{sentinel.port}/{SERVICE}/3"
        done = run_guard(write_spec(tmp_path, source), payload(f"gh pr merge 5 -R {REPO}", cwd=str(tmp_path)))
        assert done.returncode == 2 and f"{REPO}#5 is on hold" in done.stderr, done.stderr
        wrong = source.replace("s3cr%3At%40", "nope")
        done = run_guard(write_spec(tmp_path, wrong, on_unknown="block"),
                         payload(f"gh pr merge 5 -R {REPO}", cwd=str(tmp_path)))
        assert done.returncode == 2 and "cannot establish" in done.stderr, done.stderr
    finally:
        if sentinel is not None:
            sentinel.stop()
        primary.stop()


# -- the URL, the same as the server reads it ------------------------------------------------------------

URL_ROWS = [
    "redis+sentinel://127.0.0.1:26379/mymaster",
    "redis+sentinel://a:1,b:2,[::1]:3/svc/4",
    "rediss+sentinel://user:p%40ss@h1:5000,h2/svc",
    "redis+sentinel://secret@h/svc/",
    "REDIS+SENTINEL://h:1/svc",
    "redis+sentinel://h:1/svc/x",
    "redis+sentinel://h:0/svc",
    "redis+sentinel://h:99999/svc",
    "redis+sentinel:///svc",
    "redis+sentinel://h:1/",
    "redis+sentinel://h:1/svc/1/2",
    "redis+sentinel://h:1/svc?db=1",
    "redis+sentinel://h:1/sv c",
    "redis+sentinel://h:x/svc",
    "redis+sentinel://h h:1/svc",
    "redis+sentinel://[zz]:1/svc",
    "redis://h:1/0",
]


def _fields(target: Any) -> tuple[Any, ...]:
    return (tuple(target.sentinels), target.service, target.db, target.tls, target.username, target.password)


@pytest.mark.parametrize("url", URL_ROWS)
def test_the_hook_reads_sentinel_urls_as_the_server_does(url: str) -> None:
    server = pytest.importorskip("core.redis_url")
    try:
        expected: tuple[Any, ...] | None = _fields(server.parse_sentinel(url))
    except ValueError:
        expected = None
    try:
        got: tuple[Any, ...] | None = _fields(parse_sentinel_url(url))
    except RedisError:
        got = None
    assert got == expected


@pytest.mark.parametrize(("url", "fields"), [
    ("redis+sentinel://127.0.0.1:26379/mymaster", ((("127.0.0.1", 26379),), "mymaster", 0, False, None, None)),
    ("rediss+sentinel://u:p%40ss@h1:5000,h2,[::1]:7/svc/2",
     ((("h1", 5000), ("h2", 26379), ("::1", 7)), "svc", 2, True, "u", "p@ss")),
    ("redis+sentinel://secret@h:1/svc", ((("h", 1),), "svc", 0, False, None, "secret")),
])
def test_sentinel_url_rows(url: str, fields: tuple[Any, ...]) -> None:
    parsed = parse_sentinel_url(url)
    assert _fields(parsed) == fields and "p@ss" not in repr(parsed) and isinstance(parsed, SentinelURL)


@pytest.mark.parametrize("url", URL_ROWS[5:])
def test_bad_sentinel_urls_are_refused(url: str) -> None:
    with pytest.raises(RedisError):
        parse_sentinel_url(url)
