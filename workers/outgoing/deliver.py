"""The delivery job: one org endpoint's pending messages sent oldest first, with the endpoint's own backoff.

One job per endpoint at a time (`state.outgoing.arm`). It sends the waiting messages one by one; on the
first failed POST it records the attempt, counts the endpoint's failures in a row and comes back after the
next pause of the retry schedule (`core.outgoing.retry_delay`), or the receiver's ``Retry-After`` when
longer — the other messages wait behind, so a dead endpoint is asked once per pause. A success resets
the count. A message not delivered within `core.outgoing.GIVE_UP_AFTER` of being made (or redelivered)
fails; 410 Gone disables the endpoint, as the specification says. After `BATCH` messages the job gives
way to other work and queues itself again at once.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import UTC, datetime

from redis import Redis

from core import keys
from core.holds import to_iso
from core.outgoing import GIVE_UP_AFTER, retry_delay
from core.outgoing_urls import networks
from foundation.settings import Settings
from state import outgoing, webhook_endpoints
from state.decoding import as_text
from state.webhook_endpoints import Endpoint
from workers.outgoing.post import post
from workers.runtime import current

log = logging.getLogger(__name__)

BATCH = 20
"""Messages sent per run before the job gives way (it queues itself again at once)."""


def deliver_job(org: str, endpoint_id: str) -> str:
    rt = current()
    return deliver(rt.redis, rt.settings, org, endpoint_id)


def _done(redis: Redis, endpoint: Endpoint) -> None:
    """Disarm; an event queued between the last look and now finds the flag set and queued nothing, so
    look once more."""
    redis.delete(keys.webhook_armed(endpoint.org, endpoint.id))
    if redis.llen(keys.webhook_pending(endpoint.org, endpoint.id)):
        outgoing.arm(redis, endpoint)


def deliver(redis: Redis, settings: Settings, org: str, endpoint_id: str) -> str:
    endpoint = webhook_endpoints.get(redis, org, endpoint_id)
    pending = keys.webhook_pending(org, endpoint_id)
    if endpoint is None:
        redis.delete(pending, keys.webhook_armed(org, endpoint_id))
        return "endpoint removed"
    if endpoint.disabled:
        redis.delete(keys.webhook_armed(org, endpoint_id))
        return f"endpoint disabled: {endpoint.disabled}"
    allowed = networks(settings.webhook_allow_networks)
    sent = 0
    for _ in range(BATCH):
        head = redis.lindex(pending, 0)
        if head is None:
            _done(redis, endpoint)
            return f"sent {sent}"
        message_id = as_text(head)
        record = outgoing.load(redis, endpoint, message_id)
        if record is None or record.get("state") != "pending":
            redis.lpop(pending)  # trimmed from the log, or settled meanwhile
            continue
        if time.time() - float(record.get("since", 0)) > GIVE_UP_AFTER.total_seconds():
            record.update(state="failed", note=f"gave up: not delivered within {GIVE_UP_AFTER}")
            outgoing.save(redis, endpoint, record)
            redis.lpop(pending)
            continue
        result = post(endpoint.url, allowed, message_id, str(record["body"]), endpoint.secret)
        now = to_iso(datetime.now(UTC))
        outgoing.attempt(record, at=now, status=result.status, error=result.error, ms=result.ms,
                         response=result.response)
        health = keys.webhook_health(org, endpoint_id)
        if result.ok:
            record.update(state="delivered", delivered_at=now)
            outgoing.save(redis, endpoint, record)
            redis.lpop(pending)
            redis.hset(health, mapping={"streak": 0, "last_at": now or "", "last": f"HTTP {result.status}"})
            sent += 1
            continue
        outgoing.save(redis, endpoint, record)
        if result.gone:
            webhook_endpoints.set_disabled(redis, endpoint, f"the endpoint answered 410 Gone at {now}")
            redis.delete(keys.webhook_armed(org, endpoint_id))
            log.warning("webhook endpoint %s of %s answered 410 Gone: disabled", endpoint_id, org)
            return "endpoint gone: disabled"
        streak = int(redis.hincrby(health, "streak", 1))
        redis.hset(health, mapping={"last_at": now or "", "last": result.error or ""})
        delay = retry_delay(streak, result.retry_after, random.random())
        redis.expire(keys.webhook_armed(org, endpoint_id), outgoing.ARMED_TTL)
        outgoing.schedule(redis, endpoint, delay)
        log.info("webhook %s to %s of %s failed (%s); next try in %.0f s", message_id, endpoint_id, org,
                 result.error, delay)
        return f"sent {sent}; failed ({result.error}); next try in {delay:.0f} s"
    outgoing.schedule(redis, endpoint, 0)
    return f"sent {sent}; more waiting"
