"""The one place a Redis client is made from ``REDIS_URL``: web app, workers, the intake pump, reconcile.

A ``redis+sentinel://`` URL gives a client whose connection pool asks the sentinels for the current
primary on every new connection (redis-py's `SentinelConnectionPool`), so after a failover the next
command that reconnects lands on the promoted replica. Two profiles:

- ``web``: fail fast. A webhook must get its 503 well inside GitHub's 10 s timeout; a blip gets three
  quick retries, then GitHub (or our redelivery sweep) delivers again.
- ``worker``: ride it out. Each command is retried 30 times with backoff up to 2 s apart (and, on a plain
  URL, each reconnect too), which covers a Sentinel failover (down-after-milliseconds plus the
  election) and a Redis restart.

rq needs raw bytes, so responses are never decoded.
"""

from __future__ import annotations

from typing import Any, Literal

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError
from redis.retry import Retry

from core.redis_url import is_sentinel, parse_sentinel

Profile = Literal["web", "worker"]

_PROFILES: dict[str, dict[str, Any]] = {
    "web": {"socket_connect_timeout": 2.0, "socket_timeout": 5.0,
            "retry": lambda: Retry(ExponentialBackoff(cap=0.2, base=0.02), 3)},
    # 30 retries, 0.05 s doubling to 2 s: about 50 s of attempts before a command gives up.
    "worker": {"socket_connect_timeout": 2.0, "socket_timeout": 30.0,
               "retry": lambda: Retry(ExponentialBackoff(cap=2.0, base=0.05), 30)},
}


def _options(profile: Profile) -> dict[str, Any]:
    options = dict(_PROFILES[profile])
    options["retry"] = options["retry"]()
    # Retry on these too (redis-py retries only a timeout by default): a refused or reset connection
    # during a failover is exactly what the retry is for.
    options["retry_on_error"] = [ConnectionError, TimeoutError, OSError]
    options["health_check_interval"] = 30
    return options


def connect(url: str, profile: Profile = "worker", **overrides: Any) -> Redis:
    """A client for ``url`` (any form `core.redis_url` accepts). ``overrides`` win over the profile."""
    options = {**_options(profile), **overrides}
    if not is_sentinel(url):
        return Redis.from_url(url, **options)
    from redis.sentinel import Sentinel

    target = parse_sentinel(url)
    tls = {"ssl": True} if target.tls else {}
    options["connection_class"] = _following_connection(target.tls)
    sentinel_options = {"socket_connect_timeout": options["socket_connect_timeout"],
                        "socket_timeout": options["socket_connect_timeout"], **tls}
    # redis-py's Sentinel is untyped; the client it returns is a plain `Redis` on a sentinel-aware pool.
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        list(target.sentinels), sentinel_kwargs=sentinel_options,
        db=target.db, username=target.username, password=target.password, **tls, **options)
    client: Redis = sentinel.master_for(target.service, redis_class=Redis)  # type: ignore[no-untyped-call]
    return client


def _following_connection(tls: bool) -> type:
    """A Sentinel-managed connection that asks the sentinels for the primary on *every* reconnect.

    redis-py 8.1 re-queries Sentinel only when a connection is taken from the pool; a command retried
    after its connection dropped reconnects to the cached address — the dead primary — and the retry
    backs off there until it gives up (seen in tests/test_sentinel_failover.py: an idle worker stuck in
    BLMOVE for minutes after a failover). Here each reconnect asks again, and a failed connect is left
    to the command's own retry (which asks again) instead of retrying the same address.
    """
    from redis.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection

    base: Any = SentinelManagedSSLConnection if tls else SentinelManagedConnection

    class FollowingConnection(base):  # type: ignore[misc]
        def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
            if self._sock:
                return
            if self.connection_pool.is_master:
                self.host, self.port = self.connection_pool.get_master_address()
            super().connect_check_health(check_health=check_health, retry_socket_connect=False)

    return FollowingConnection


def describe(url: str) -> str:
    """The URL without its password, for logs and error messages."""
    if is_sentinel(url):
        target = parse_sentinel(url)
        hosts = ",".join(f"{h}:{p}" for h, p in target.sentinels)
        return f"sentinel {hosts} service {target.service} db {target.db}"
    scheme, _, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    return f"{scheme}://{netloc}{slash}{path}"
