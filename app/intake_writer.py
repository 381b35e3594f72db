"""Step 2 of a delivery's path (docs/architecture.md): the receiver's one Redis write, a delivery pushed
to the intake list, durably, in one round trip.

Durable means: LPUSH answered, and with ``MERGE_HOLD_MIN_REPLICAS=N`` a ``WAIT N`` answered with at
least N replicas (LPUSH and WAIT pipelined, so still one round trip). Any failure raises; the receiver
answers 503 and GitHub (or the redelivery sweep) brings the delivery back.

Why not ``redis.lpush``: redis-py 8 spends about as much CPU checking a connection out of its pool and
back in (a lock, a ``poll`` for stale data, observability counters) as on the command itself, per
request; at the acknowledgement budget (design §7) that is a quarter of a delivery's cost. Here each
serving thread takes a connection from the app's pool once and keeps it: the writer holds the idle
ones in a list (``append``/``pop`` are atomic, so no lock), as many as requests ran at once. The
connection is redis-py's own, so its timeouts, its retry policy (`foundation.redis_conn`'s ``web``
profile), its idle health check and Sentinel's primary lookup on reconnect all still apply; only the
packing of the command is done here (`resp`), in one buffer.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from redis import Redis
    from redis.retry import Retry

REPLICA_WAIT_MS = 1000
"""How long the receiver waits for MERGE_HOLD_MIN_REPLICAS replicas to confirm (well inside GitHub's 10 s)."""


class TooFewReplicas(RuntimeError):
    """WAIT returned fewer replicas than required: the delivery may not survive a failover."""


class Connection(Protocol):
    """What this module uses of a redis-py connection (whose methods carry no type hints)."""

    retry: Retry

    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...
    def read_response(self) -> Any: ...
    def should_reconnect(self) -> bool: ...
    def disconnect(self) -> None: ...


class IntakeWriter:
    def __init__(self, redis: Redis, key: str, min_replicas: int) -> None:
        self._pool = redis.connection_pool
        self._key = key.encode()
        self._min_replicas = min_replicas
        self._idle: list[Connection] = []
        self._pid = os.getpid()

    def push(self, entry: bytes) -> None:
        """Queue one intake entry durably, or raise (`TooFewReplicas`, or whatever Redis raised)."""
        conn = self._take()
        try:
            replies = conn.retry.call_with_retry(lambda: self._round_trip(conn, entry),
                                                 lambda _error: conn.disconnect())
        finally:
            # Even a failed connection goes back: it is disconnected and reconnects on its next use.
            self._idle.append(conn)
        if self._min_replicas > 0 and int(replies[1]) < self._min_replicas:
            raise TooFewReplicas(
                f"{replies[1]} of {self._min_replicas} replicas confirmed within {REPLICA_WAIT_MS} ms")

    def _take(self) -> Connection:
        if self._pid != os.getpid():
            # A forked child (gunicorn --preload) must not talk on its parent's sockets.
            self._idle, self._pid = [], os.getpid()
        try:
            return self._idle.pop()
        except IndexError:  # every kept connection is busy: take one more (outside this block, so
            pass            # that a failure to connect is not reported as raised while handling it)
        # Connects now, as the pool does for any new connection; raises when Redis is down.
        return cast(Connection, self._pool.get_connection())

    def _round_trip(self, conn: Connection, entry: bytes) -> list[Any]:
        commands: list[tuple[bytes, ...]] = [(b"LPUSH", self._key, entry)]
        if self._min_replicas > 0:
            commands.append((b"WAIT", b"%d" % self._min_replicas, b"%d" % REPLICA_WAIT_MS))
        try:
            conn.send_packed_command([resp(commands)])
            return [conn.read_response() for _ in commands]
        except BaseException:
            # Whatever broke (an error reply to LPUSH leaves WAIT's reply unread), the connection may
            # hold a stray reply: drop it, so that the next request starts on a clean one.
            conn.disconnect()
            raise
        finally:
            if conn.should_reconnect():  # the server announced maintenance (redis-py's own check)
                conn.disconnect()


def resp(commands: list[tuple[bytes, ...]]) -> bytes:
    """``commands`` in the Redis protocol (RESP arrays of bulk strings), as one buffer: the entry is
    copied once. redis-py's ``pack_commands`` gives the same bytes after three passes over the
    arguments (encoding, type checks, re-chunking), a quarter of this writer's CPU per delivery."""
    parts: list[bytes] = []
    for args in commands:
        parts.append(b"*%d\r\n" % len(args))
        for arg in args:
            parts += (b"$%d\r\n" % len(arg), arg, b"\r\n")
    return b"".join(parts)
