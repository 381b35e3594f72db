"""`foundation.redis_conn`: one factory for every client; through Sentinel, a failover is followed."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import redis

from foundation.redis_conn import Profile, connect
from tests.sentinel_support import sentinel_group


def test_plain_url_profiles(redis_url: str) -> None:
    profiles: tuple[Profile, ...] = ("web", "worker")
    for profile in profiles:
        client = connect(redis_url, profile)
        assert client.ping()
        client.close()


def test_a_command_in_flight_follows_the_failover(tmp_path: Path) -> None:
    """A worker idles in a blocking BLMOVE when the primary dies: the command must be retried against
    the promoted replica (redis-py alone retries the dead address until it gives up)."""
    with sentinel_group(tmp_path) as group:
        waiting = connect(group.url, "worker")
        pusher = connect(group.url, "worker")
        assert waiting.ping()
        got: list[object] = []

        def wait() -> None:
            try:
                got.append(waiting.blmove("mh:test:src", "mh:test:dst", 60, "RIGHT", "LEFT"))
            except redis.RedisError as exc:
                got.append(exc)

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(0.3)
        group.primary.kill()
        deadline = time.monotonic() + 60
        while group.primary_port() != group.replicas[0].port:
            assert time.monotonic() < deadline, "no promotion"
            time.sleep(0.1)
        time.sleep(1.0)  # the waiting client has reconnected by now (or is stuck on the dead address)
        pusher.lpush("mh:test:src", b"after the failover")
        thread.join(30)
        assert not thread.is_alive(), "the blocked command never followed the failover"
        assert got == [b"after the failover"]
        pool: Any = waiting.connection_pool  # a SentinelConnectionPool
        assert pool.get_master_address()[1] == group.replicas[0].port
        waiting.close()
        pusher.close()
