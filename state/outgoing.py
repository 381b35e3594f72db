"""Outgoing webhooks in Redis: events noted off the audit log, each endpoint's pending messages and delivery log.

`state.audit.record` calls `note` for every event it records. An event the table (`core.outgoing`) does
not read costs nothing; one it reads costs one read of the org's endpoints, and, for each endpoint that
wants it, one pipeline (the message in the endpoint's log, its id on the endpoint's pending list) and at
most one queued job. Nothing here talks to an endpoint or waits for one: the delivery job
(`workers.outgoing.deliver`) sends what is pending, one endpoint at a time, with its retry schedule. `note`
never raises: an outgoing webhook must not fail the write that caused it.

Which rq queue a delivery runs on is decided in one place, `delivery_queue`.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from redis import Redis
from rq import Queue

from core import jobs, keys
from core.holds import to_iso
from core.outgoing import EVENTS_READ, Outgoing, message_body, translate
from state.decoding import as_text
from state.queueing import enqueue_after, options
from state.webhook_endpoints import Endpoint, endpoints

log = logging.getLogger(__name__)

CLOCK_JOB = jobs.FREEZE_CLOCK.address
LOG_MAX = 200
"""Messages kept in an endpoint's delivery log (each with its body, ≤ 20 KB by the specification's advice)."""
PENDING_MAX = 1_000
"""Messages waiting for one endpoint; past it the oldest fails ("dropped") rather than grow without end."""
ARMED_TTL = 2 * 86400
"""Covers the longest pause of the retry schedule (a day) and then some: should the scheduled job be
lost, the next event queues a new one after this."""
ATTEMPTS_KEPT = 10
"""Attempts remembered per message (the page shows them)."""
CLOCK_EVENTS = frozenset({"config.reloaded", "repo.bootstrapped", "repo.dropped"})
"""Audit events after which the freeze clock looks again: a repo's windows may have changed."""


def delivery_queue(redis: Redis, endpoint: Endpoint) -> Queue:
    """The queue the endpoint's deliveries run on: the one call that chooses it (the registering server's
    queue today; a low-priority queue for bulk work is the place for them when there is one)."""
    return Queue(endpoint.queue, connection=redis)


def arm(redis: Redis, endpoint: Endpoint, delay: float = 0.0) -> bool:
    """Queue the endpoint's delivery job unless one is queued or scheduled; whether it queued one."""
    if not redis.set(keys.webhook_armed(endpoint.org, endpoint.id), "1", nx=True, ex=ARMED_TTL):
        return False
    schedule(redis, endpoint, delay)
    return True


def schedule(redis: Redis, endpoint: Endpoint, delay: float) -> None:
    """Queue the delivery job (the caller holds the armed flag), after ``delay`` seconds."""
    enqueue_after(delivery_queue(redis, endpoint), jobs.WEBHOOK_DELIVERY, endpoint.org, endpoint.id, delay=delay,
                  description=f"webhook {endpoint.org} {endpoint.id}")


def note(redis: Redis, event: str, data: dict[str, Any]) -> None:
    """The audit log's hook (see the module). Never raises; a failure is logged."""
    if event not in EVENTS_READ and event not in CLOCK_EVENTS:
        return
    try:
        if event in CLOCK_EVENTS:
            org = str(data.get("repo") or "").split("/", 1)[0].lower()
            if org:
                kick_clock(redis, org)
            return
        found = translate(event, data)
        if found is not None:
            emit(redis, found, datetime.now(UTC))
            _follow_timed(redis, found)
    except Exception:
        log.exception("could not queue the outgoing webhooks for %s", event)


def emit(redis: Redis, found: Outgoing, at: datetime) -> int:
    """One message to every endpoint of the org that wants its type; how many."""
    wanted = [e for e in endpoints(redis, found.org) if e.wants(found.type)]
    if not wanted:
        return 0
    body = message_body(found.type, to_iso(at) or "", found.data)
    for endpoint in wanted:
        record: dict[str, Any] = {"id": f"msg_{uuid.uuid4().hex}", "type": found.type, "created_at": to_iso(at),
                                  "since": at.timestamp(), "body": body, "state": "pending", "attempts": []}
        enqueue(redis, endpoint, record)
    return len(wanted)


def enqueue(redis: Redis, endpoint: Endpoint, record: dict[str, Any]) -> None:
    """Put the message in the endpoint's log and at the end of its pending list, and arm its delivery job."""
    org, ident = endpoint.org, endpoint.id
    with redis.pipeline() as pipe:
        pipe.hset(keys.webhook_log(org, ident), record["id"], json.dumps(record, separators=(",", ":")))
        pipe.zadd(keys.webhook_log_order(org, ident), {record["id"]: time.time()})
        pipe.rpush(keys.webhook_pending(org, ident), record["id"])
        pipe.llen(keys.webhook_pending(org, ident))
        waiting = pipe.execute()[-1]
    if waiting > PENDING_MAX:
        for dropped in redis.lpop(keys.webhook_pending(org, ident), waiting - PENDING_MAX) or []:
            finish(redis, endpoint, as_text(dropped), "failed", note="dropped: more than "
                   f"{PENDING_MAX} messages waited for this endpoint")
    _trim_log(redis, endpoint)
    arm(redis, endpoint)


def _trim_log(redis: Redis, endpoint: Endpoint) -> None:
    order = keys.webhook_log_order(endpoint.org, endpoint.id)
    extra = int(redis.zcard(order)) - LOG_MAX
    if extra <= 0:
        return
    oldest = [as_text(m) for m in redis.zrange(order, 0, extra - 1)]
    with redis.pipeline() as pipe:
        pipe.zrem(order, *oldest)
        pipe.hdel(keys.webhook_log(endpoint.org, endpoint.id), *oldest)
        pipe.execute()


def load(redis: Redis, endpoint: Endpoint, message_id: str) -> dict[str, Any] | None:
    raw = redis.hget(keys.webhook_log(endpoint.org, endpoint.id), message_id)
    return None if raw is None else dict(json.loads(raw))


def save(redis: Redis, endpoint: Endpoint, record: dict[str, Any]) -> None:
    """Store the record back, unless the log dropped it meanwhile (trimmed, endpoint removed)."""
    key = keys.webhook_log(endpoint.org, endpoint.id)
    if redis.hexists(key, record["id"]):
        redis.hset(key, record["id"], json.dumps(record, separators=(",", ":")))


def attempt(record: dict[str, Any], **what: Any) -> None:
    record["attempts"] = [*record.get("attempts", []), what][-ATTEMPTS_KEPT:]
    record["attempt_count"] = int(record.get("attempt_count", 0)) + 1


def finish(redis: Redis, endpoint: Endpoint, message_id: str, state: str, note: str = "") -> None:
    record = load(redis, endpoint, message_id)
    if record is None:
        return
    record["state"] = state
    if note:
        record["note"] = note
    save(redis, endpoint, record)


def deliveries(redis: Redis, endpoint: Endpoint, limit: int = 50) -> list[dict[str, Any]]:
    """The endpoint's delivery log, newest first, without the bodies' signatures (none are stored)."""
    ids = [as_text(m) for m in redis.zrevrange(keys.webhook_log_order(endpoint.org, endpoint.id), 0, limit - 1)]
    if not ids:
        return []
    raws = redis.hmget(keys.webhook_log(endpoint.org, endpoint.id), ids)
    return [dict(json.loads(raw)) for raw in raws if raw is not None]


def redeliver(redis: Redis, endpoint: Endpoint, message_id: str) -> dict[str, Any] | None:
    """Send a logged message again (same ``webhook-id``, a fresh timestamp and signature), after what waits."""
    record = load(redis, endpoint, message_id)
    if record is None:
        return None
    if record.get("state") == "pending":
        return record  # already on its way: once is enough
    record.update(state="pending", since=time.time(), redelivered=to_iso(datetime.now(UTC)))
    record.pop("note", None)
    save(redis, endpoint, record)
    redis.rpush(keys.webhook_pending(endpoint.org, endpoint.id), message_id)
    arm(redis, endpoint)
    return record


# --- the freeze clock's inputs ---------------------------------------------------------------------


CLOCK_TYPES = ("freeze.started", "freeze.ended", "hold.lifted")
"""What the freeze clock may announce: it runs only for orgs with an endpoint that wants one of them."""


def wants_clock(redis: Redis, org: str) -> list[Endpoint]:
    return [e for e in endpoints(redis, org) if any(e.wants(kind) for kind in CLOCK_TYPES)]


def org_repos(redis: Redis, org: str) -> list[str]:
    """The org's managed repos (lower-cased), sorted."""
    return sorted(r for r in (as_text(m) for m in redis.smembers(keys.MANAGED_REPOS)) if r.split("/", 1)[0] == org)


def schedule_clock(redis: Redis, org: str, when: datetime | None = None) -> bool:
    """Run the org's freeze clock at ``when`` (None: now), once per moment; False when nobody listens."""
    listening = wants_clock(redis, org)
    if not listening:
        return False
    queue = delivery_queue(redis, listening[0])
    kwargs = options(jobs.FREEZE_CLOCK)
    if when is None:
        queue.enqueue(CLOCK_JOB, org, **kwargs, description=f"freeze clock {org}")
        return True
    moment = int(when.timestamp())
    ttl = max(int(when.timestamp() - time.time()), 0) + 3600
    if redis.set(keys.webhook_clock(org, moment), "1", nx=True, ex=ttl):
        queue.enqueue_at(when, CLOCK_JOB, org, **kwargs, job_id=f"freeze-clock-{_job_safe(org)}-{moment}",
                         description=f"freeze clock {org} at {to_iso(when)}")
    return True


def kick_clock(redis: Redis, org: str) -> bool:
    return schedule_clock(redis, org)


def _job_safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in text)


def _follow_timed(redis: Redis, found: Outgoing) -> None:
    """A timed room hold announced as placed is remembered (its scope, until its end) so the clock
    announces its end; one lifted by hand is forgotten (its lift was the announcement)."""
    data, key = found.data, keys.webhook_timed(found.org)
    if data.get("source") != "room" or not wants_clock(redis, found.org):
        return
    scope = str(data.get("scope") or "")
    expires = data.get("expires_at")
    if found.type in ("freeze.started", "hold.placed") and isinstance(expires, str):
        when = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        redis.zadd(key, {scope: when.timestamp()})
        schedule_clock(redis, found.org, when)
    elif found.type in ("freeze.ended", "hold.lifted"):
        redis.zrem(key, scope)
