"""`merge-hold worker --healthcheck`: is this container's worker registered, heartbeating, and is Redis there?

A worker container has no HTTP port to probe, so its health is read where the worker proves it: in Redis.

- **Alive**: the watchdog thread refreshes the worker's alive key every second, and its value says where
  the worker runs (`workers.ops.naming.here`): host name and PID namespace. The check, run inside the
  container (``docker exec``, a Kubernetes exec probe), finds the workers of *its* container by it, whatever
  their random names. ``--name`` checks one worker by name instead (several workers on one machine).
- **Registered and heartbeating**: rq's registration of that worker exists and has not ended. rq refreshes
  it from the worker's main loop and lets it expire when the loop stops (two minutes idle; the job's
  timeout plus a minute while one runs, `workers.ops.rqworker`), so a hung loop loses it.
- **Redis reached** through ``REDIS_URL`` in any form (``redis+sentinel://`` too), with the one
  connection factory every process uses (`foundation.redis_conn`), briefly: a probe must answer in seconds.

Two modes. ``full`` (the default) needs all three: the image's ``HEALTHCHECK``, compose, and a Kubernetes
readiness probe. ``liveness`` passes while Redis cannot be reached (the worker rides out a Redis outage by
itself; restarting it would not bring Redis back) and fails only when Redis answers that this container's
worker is not alive, not registered or not heartbeating: a Kubernetes liveness probe, which restarts.
Exit 0 healthy, 1 not (Docker's codes).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry
from rq.utils import utcparse
from rq.worker import Worker

from core import keys
from foundation.redis_conn import connect, describe
from foundation.settings import SettingsError, from_env
from state.decoding import as_text
from workers.ops.naming import here, running_here, same_place

MODES = ("full", "liveness")
CONNECT_SECONDS = 1.5
ANSWER_SECONDS = 2.0
"""Within Docker's and Kubernetes' probe timeouts (3 s in the image and the manifests)."""




def workers_here(redis: Redis, place: str) -> list[str]:
    """Names of the live `merge-hold worker`s whose alive key says they run in ``place``'s container."""
    names = sorted(as_text(raw) for raw in redis.smembers(keys.WATCHED_WORKERS))
    if not names:
        return []
    values = redis.mget([keys.worker_alive(name) for name in names])
    # A dead worker's key outlives it by seconds; a restarted container may even get its PID namespace's
    # number back: its writer must still run (when this process can tell, i.e. in that container).
    return [name for name, value in zip(names, values, strict=True)
            if value is not None and same_place(as_text(value), place) and running_here(as_text(value)) is not False]


def registration(redis: Redis, name: str, now: datetime) -> tuple[bool, str]:
    """(registered and heartbeating, a line saying so) from rq's registration of ``name``."""
    key = Worker.redis_worker_namespace_prefix + name
    data = {as_text(k): as_text(v) for k, v in redis.hgetall(key).items()}
    if not data:
        return False, f"worker {name}: not registered with rq (its main loop stopped heartbeating, or never began)"
    if "death" in data:
        return False, f"worker {name}: its rq registration ended at {data['death']}"
    beat = data.get("last_heartbeat")
    age = f", last heartbeat {(now - utcparse(beat).replace(tzinfo=UTC)).total_seconds():.0f} s ago" if beat else ""
    return True, f"worker {name}: registered, {data.get('state', '?')}{age}"


def check(redis: Redis, place: str, mode: str = "full", name: str | None = None,
          now: datetime | None = None) -> tuple[bool, list[str]]:
    """(healthy, one line per finding) for the workers of ``place`` (or the one named)."""
    clock = now or datetime.now(UTC)
    try:
        redis.ping()
        names = [name] if name else workers_here(redis, place)
        if not names:
            host = place.split(" ")[0]
            return False, [f"no merge-hold worker of this container (host {host}) is alive in Redis"]
        lines: list[str] = []
        healthy = True
        for each in names:
            if name and not redis.exists(keys.worker_alive(each)):
                healthy = False
                lines.append(f"worker {each}: not alive (its watchdog has not beaten for seconds)")
                continue
            registered, line = registration(redis, each, clock)
            healthy = healthy and registered
            lines.append(line)
        return healthy, lines
    except RedisError as exc:
        if mode == "liveness":
            return True, [f"Redis unreachable ({type(exc).__name__}): not this worker's fault, it waits for Redis"]
        return False, [f"Redis unreachable: {type(exc).__name__}: {exc}"]


def run(mode: str, name: str | None) -> int:
    """The command: settings from the environment, one short-lived client, the verdict on stdout."""
    try:
        settings = from_env()
        if not settings.redis_url:
            raise SettingsError("REDIS_URL: required by the workers but not set")
    except SettingsError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    url = str(settings.redis_url)
    redis = connect(url, "web", socket_connect_timeout=CONNECT_SECONDS, socket_timeout=ANSWER_SECONDS,
                    retry=Retry(NoBackoff(), 0), health_check_interval=0)
    try:
        healthy, lines = check(redis, here(), mode, name)
    finally:
        redis.close()
    verdict = "healthy" if healthy else "unhealthy"
    print(f"{verdict} ({mode}; Redis {describe(url)})")
    for line in lines:
        print(f"  {line}")
    return 0 if healthy else 1
