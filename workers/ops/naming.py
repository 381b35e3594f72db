"""A `merge-hold worker`'s name, and where it runs.

rq names a worker ``hostname.pid`` and refuses to start while a live-looking registration holds that
name. In a container the pid is always 1, so a worker killed hard (OOM, ``docker kill``) could not come
back until rq's old registration expired, one to two minutes later. Here the default name is the host
name plus a random part, new at every start (`unique_name`), so a restarted worker never meets its
predecessor's name. A name given with ``--name`` may meet one: `claim` tells a dead worker's registration
from a live one by the watchdog's alive key (refreshed every second), puts the dead one's jobs back and
ends its registration, and refuses a name a live worker holds.

`here` says where this process runs (host name and PID namespace): the watchdog stores it as the value of
the alive key, and `merge-hold worker --healthcheck` finds *this host's* workers by it.
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
import time
from pathlib import Path

from redis import Redis
from rq import Queue
from rq.worker import Worker

from core import keys
from state.queueing import all_queues
from workers.ops.watchdog import ALIVE_TTL, rescue_jobs_of
from workers.publishing import break_locks_of


class NameTaken(Exception):
    """A live worker holds the name: two workers must never share one (their jobs would mix)."""


def unique_name(host: str | None = None) -> str:
    """``HOST.RANDOM``: readable in `rq info` and the logs, and never the same twice."""
    return f"{host or socket.gethostname()}.{secrets.token_hex(4)}"


def _started(pid: int) -> str:
    """When process ``pid`` of this PID namespace started (clock ticks since boot), "" if unknown: with the
    pid it tells a live process from a dead one whose pid (1, in a container) was given again."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""  # field 22 of proc(5); fields[0] is field 3


@functools.cache
def here() -> str:
    """``HOST PIDNS PID START``: processes in one container share host name and PID namespace, and a
    healthcheck run inside it (``docker exec``, a Kubernetes exec probe) shares both. Two containers on
    one host network share the host name only; outside Linux the namespace and start are ``-``. A
    restarted container may get its dead predecessor's namespace number back: PID and start time say
    whether the process that wrote a value still runs."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = "-"
    pid = os.getpid()
    return f"{socket.gethostname()} {namespace} {pid} {_started(pid) or '-'}"


def same_place(alive_value: str, place: str) -> bool:
    """Whether an alive key's value (`here` of the worker that wrote it) names this container."""
    return alive_value.split(" ")[:2] == place.split(" ")[:2]


def running_here(alive_value: str) -> bool | None:
    """Whether the process that wrote an alive key of this container still runs (None: cannot tell)."""
    parts = alive_value.split(" ")
    if len(parts) != 4 or not same_place(alive_value, here()) or not parts[2].isdigit() or parts[3] == "-":
        return None
    return _started(int(parts[2])) == parts[3]


def claim(redis: Redis, queue: Queue, name: str, wait: float = ALIVE_TTL + 1.0, poll: float = 0.2) -> list[str]:
    """Make ``name`` this worker's. Free: nothing to do. Held by a worker that stopped beating (it died;
    at most `ALIVE_TTL` seconds after its last beat, at once when it was a process of this container):
    its jobs are put back, its PR locks broken and rq's registration ended, so rq lets us register.
    Returns the ids of the jobs put back. Raises `NameTaken` when the holder keeps beating."""
    alive = keys.worker_alive(name)
    deadline = time.monotonic() + wait
    while (value := redis.get(alive)) is not None:
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        if running_here(text) is False:  # a process of this container that has gone
            redis.delete(alive)
            break
        if time.monotonic() >= deadline:
            raise NameTaken(f"a live worker is named {name!r} (it beats from {text}); choose another --name, "
                            "or leave it out for a unique one")
        time.sleep(poll)
    registration = Worker.find_by_key(Worker.redis_worker_namespace_prefix + name, connection=redis)
    rescued = [job for each in all_queues(queue) for job in rescue_jobs_of(each, name)]
    break_locks_of(redis, [name])
    if registration is not None and registration.death_date is None:
        registration.register_death()  # type: ignore[no-untyped-call]
    return rescued
