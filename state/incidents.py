"""Incidents in Redis: stored once per merged PR, listed newest first, counted by kind.

Written by the workers (`workers.events.incidents`), read by the dashboard and the API (`app.incidents`) and
by `/metrics`. An incident is kept in a global hash (`core.keys.INCIDENTS`), not under the repo's hash
tag, so it outlives the App leaving the repo; the newest `MAX_KEPT` are kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from redis import Redis, WatchError

from core import keys
from core.incidents import about_pr
from state.decoding import as_text

MAX_KEPT = 10_000
"""Incidents kept (a few KB each): far more than any team reviews; older ones live in the log."""
JUDGED_TTL = 4 * 24 * 3600
"""A merged PR's "already judged" mark outlives GitHub's three-day redelivery window."""
HOOK_SCAN = 5_000
"""Hook records examined (newest first) for an incident's evidence, so a long stream costs a bounded read."""
FORGERY_SCAN = 2_000
"""Repo history entries examined for the PR's forged statuses (the history keeps about this many)."""
PAGE = 500


def _json(raw: Any) -> dict[str, Any] | None:
    try:
        found = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def was_judged(redis: Redis, repo: str, number: int) -> bool:
    return bool(redis.exists(keys.merge_judged(repo, number)))


def mark_judged(redis: Redis, repo: str, number: int, outcome: str) -> None:
    redis.set(keys.merge_judged(repo, number), outcome, nx=True, ex=JUDGED_TTL)


def save(redis: Redis, incident: dict[str, Any], score: float) -> bool:
    """Store ``incident`` unless its PR already has one; True when this call stored it."""
    ident = str(incident["id"])
    if not redis.hsetnx(keys.INCIDENTS, ident, json.dumps(incident, separators=(",", ":"), default=str)):
        return False
    with redis.pipeline() as pipe:
        pipe.zadd(keys.INCIDENT_TIMES, {ident: score})
        for kind in incident.get("kinds") or []:
            pipe.hincrby(keys.INCIDENT_COUNTS, str(kind), 1)
        pipe.execute()
    _trim(redis)
    return True


def _trim(redis: Redis) -> None:
    extra = int(redis.zcard(keys.INCIDENT_TIMES)) - MAX_KEPT
    if extra <= 0:
        return
    oldest = [as_text(i) for i in redis.zrange(keys.INCIDENT_TIMES, 0, extra - 1)]
    with redis.pipeline() as pipe:
        pipe.zrem(keys.INCIDENT_TIMES, *oldest)
        pipe.hdel(keys.INCIDENTS, *oldest)
        pipe.execute()


def load(redis: Redis, ident: str) -> dict[str, Any] | None:
    return _json(redis.hget(keys.INCIDENTS, ident))


def note_comment(redis: Redis, ident: str, outcome: str) -> None:
    """Record what became of the incident's PR comment (``posted``, ``off``, ``failed: …``)."""
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(keys.INCIDENTS)  # type: ignore[no-untyped-call]
                found = _json(pipe.hget(keys.INCIDENTS, ident))
                if found is None:
                    pipe.unwatch()
                    return
                found["comment"] = outcome
                pipe.multi()
                pipe.hset(keys.INCIDENTS, ident, json.dumps(found, separators=(",", ":"), default=str))
                pipe.execute()
                return
            except WatchError:  # another writer: retry on the new value
                continue


def listing(redis: Redis, *, visible: Callable[[str], bool], repo: str | None = None,
            limit: int = 100) -> list[dict[str, Any]]:
    """Incidents newest first, of repos ``visible`` says the reader may see (and of ``repo`` if given)."""
    found: list[dict[str, Any]] = []
    start = 0
    while len(found) < limit:
        ids = [as_text(i) for i in redis.zrevrange(keys.INCIDENT_TIMES, start, start + PAGE - 1)]
        if not ids:
            break
        start += len(ids)
        wanted = [i for i in ids if (repo is None or i.rpartition("#")[0] == repo.lower())
                  and visible(i.rpartition("#")[0])]
        if not wanted:
            continue
        for raw in redis.hmget(keys.INCIDENTS, wanted):
            incident = _json(raw)
            if incident is not None:
                found.append(incident)
    return found[:limit]


def total(redis: Redis) -> int:
    return int(redis.zcard(keys.INCIDENT_TIMES))


def counts(redis: Redis) -> dict[str, int]:
    return {as_text(k): int(v) for k, v in redis.hgetall(keys.INCIDENT_COUNTS).items()}


def hook_records(redis: Redis, repo: str, number: int) -> list[dict[str, Any]]:
    """The guard's ``hook.gate.fired`` records about ``repo#number``, newest first (a bounded scan)."""
    found: list[dict[str, Any]] = []
    cursor, scanned = "+", 0
    while scanned < HOOK_SCAN:
        batch = redis.xrevrange(keys.HOOK_EVENTS, max=cursor, min="-", count=PAGE) or []
        for raw_id, fields in batch:
            data = _json({as_text(k): v for k, v in (fields or {}).items()}.get("data"))
            if data is not None and about_pr(data, repo, number):
                found.append({"id": as_text(raw_id), **{k: data.get(k) for k in (
                    "time", "session", "tool_use_id", "decision", "code", "reason", "tool_name", "command")
                    if k in data}})
        scanned += len(batch)
        if len(batch) < PAGE:
            break
        cursor = f"({as_text(batch[-1][0])}"
    return found


def forgeries(redis: Redis, repo: str, number: int) -> list[dict[str, Any]]:
    """The PR's ``status.forged`` audit entries (who posted what), newest first."""
    found: list[dict[str, Any]] = []
    batch = redis.xrevrange(keys.history(repo), max="+", min="-", count=FORGERY_SCAN) or []
    for _raw_id, fields in batch:
        decoded = {as_text(k): as_text(v) for k, v in (fields or {}).items()}
        if decoded.get("event") != "status.forged":
            continue
        data = _json(decoded.get("data"))
        if data is not None and str(data.get("number")) == str(number):
            found.append({k: data.get(k) for k in ("sender", "state", "description", "sha", "overwritten", "at")})
    return found
