"""A real Redis Sentinel deployment for tests: a primary, replicas and sentinels (`redis-server --sentinel`),
each a child process on an ephemeral loopback port with its own temp dir; stopped on exit."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from merge_hold.redis_server import free_port, redis_server_binary

SERVICE = "mh-primary"


@dataclass
class Node:
    port: int
    process: subprocess.Popen[bytes]

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2, socket_connect_timeout=2)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


@dataclass
class SentinelGroup:
    primary: Node
    replicas: list[Node]
    sentinels: list[Node]
    workdir: Path
    extra: list[Node] = field(default_factory=list)

    def restart_primary(self) -> None:
        """Start a fresh, empty redis-server on the old primary's port (the killed one's data is gone);
        Sentinel notices it and turns it into a replica of the current primary."""
        folder = self.workdir / f"primary-again-{time.monotonic_ns()}"
        folder.mkdir()
        self.primary = _start(_server_args(self.primary.port, folder), self.primary.port)
        self.extra.append(self.primary)

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def primary_port(self) -> int | None:
        """The port the sentinels currently name as primary (None while none answers)."""
        for sentinel in self.sentinels:
            try:
                host_port: Any = sentinel.client().sentinel_get_master_addr_by_name(SERVICE)
            except redis.RedisError:
                continue
            if host_port:
                return int(host_port[1])
        return None


def _start(args: list[str], port: int) -> Node:
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    node = Node(port, process)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, f"{args[0]} on port {port} exited"
        try:
            if node.client().ping():
                return node
        except redis.RedisError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered on port {port}")


def _server_args(port: int, folder: Path, *extra: str) -> list[str]:
    return [redis_server_binary(), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder),
            "--save", "", "--appendonly", "no", "--loglevel", "warning", *extra]


def _server(workdir: Path, name: str, *extra: str) -> Node:
    port = free_port()
    folder = workdir / name
    folder.mkdir()
    return _start(_server_args(port, folder, *extra), port)


def _sentinel(workdir: Path, name: str, primary_port: int, quorum: int) -> Node:
    port = free_port()
    folder = workdir / name
    folder.mkdir()
    config = folder / "sentinel.conf"  # Sentinel rewrites its config file: it must be its own
    config.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
        f"sentinel monitor {SERVICE} 127.0.0.1 {primary_port} {quorum}\n"
        f"sentinel down-after-milliseconds {SERVICE} 1000\n"
        f"sentinel failover-timeout {SERVICE} 10000\n"
        f"sentinel parallel-syncs {SERVICE} 1\n"
    )
    return _start([redis_server_binary(), str(config), "--sentinel", "--loglevel", "warning"], port)


@contextmanager
def sentinel_group(workdir: Path, *, replicas: int = 1, sentinels: int = 3) -> Iterator[SentinelGroup]:
    nodes: list[Node] = []
    group: SentinelGroup | None = None
    try:
        primary = _server(workdir, "primary")
        nodes.append(primary)
        copies = [_server(workdir, f"replica{i}", "--replicaof", "127.0.0.1", str(primary.port))
                  for i in range(replicas)]
        nodes += copies
        watchers = [_sentinel(workdir, f"sentinel{i}", primary.port, sentinels // 2 + 1) for i in range(sentinels)]
        nodes += watchers
        group = SentinelGroup(primary, copies, watchers, workdir)
        _wait_ready(group)
        yield group
    finally:
        for node in reversed([*nodes, *(group.extra if group else [])]):
            if node.process.poll() is None:
                node.process.terminate()
                try:
                    node.process.wait(5)
                except subprocess.TimeoutExpired:
                    node.kill()


def _wait_ready(group: SentinelGroup, timeout: float = 30.0) -> None:
    """Until the replicas are in sync and every sentinel knows them and its peers (a failover needs both)."""
    deadline = time.monotonic() + timeout
    want_replicas, want_peers = len(group.replicas), len(group.sentinels) - 1
    while time.monotonic() < deadline:
        info = group.primary.client().info("replication")
        synced = info.get("connected_slaves", 0) == want_replicas
        known = True
        for sentinel in group.sentinels:
            # redis-py parses SENTINEL MASTER into a dict of typed fields.
            state: Any = sentinel.client().sentinel_master(SERVICE)
            known = known and int(state["num-slaves"]) >= want_replicas \
                and int(state["num-other-sentinels"]) >= want_peers
            # A replica is listed before the sentinel's own link to it is up ("disconnected" in its flags).
            replicas: Any = sentinel.client().sentinel_slaves(SERVICE)
            known = known and all("disconnected" not in str(r.get("flags", "")) for r in replicas)
        if synced and known:
            return
        time.sleep(0.1)
    raise RuntimeError("the sentinel group did not settle")
