"""How work reaches the workers: one rq queue, named in the settings, and what rq keeps of each job.

Footprint (design §7, ≤ 2 KB of Redis per tracked PR): a finished job is deleted at once with its result
(``result_ttl=0``) — at 50 deliveries/s, ten minutes of finished delivery jobs with their 20 KB bodies
held hundreds of MB only to remember successes. A failed job is kept a bounded time, for `rq requeue`
and for reading its traceback. Every job this service enqueues uses `JOB_OPTIONS` or
`DELIVERY_JOB_OPTIONS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from redis import Redis
from redis.client import Pipeline
from rq import Queue, Retry

from core.deliveries import Delivery

HANDLE_DELIVERY = "workers.events.handle_delivery"
"""Job that applies one GitHub webhook delivery: ``(event, delivery_id, raw JSON body)``."""

DELIVERY_RETRY = Retry(max=5, interval=[2, 10, 60, 300, 900])
"""Transient failures (GitHub 5xx, a Redis blip) are retried with growing pauses, within the hour."""

FAILURE_TTL = 24 * 3600
"""A failed job (retries exhausted) stays a day in rq's failed registry, then expires."""
DELIVERY_FAILURE_TTL = 3 * 24 * 3600
"""A failed delivery (its body included) stays three days: GitHub's own redelivery window."""

JOB_OPTIONS: dict[str, Any] = {"result_ttl": 0, "failure_ttl": FAILURE_TTL}
"""rq options for every job but deliveries (``queue.enqueue(..., **JOB_OPTIONS)``): recomputes,
fan-outs, expiries, sweeps. Nothing is kept of a success; a failure is kept a day."""
DELIVERY_JOB_OPTIONS: dict[str, Any] = {"result_ttl": 0, "failure_ttl": DELIVERY_FAILURE_TTL,
                                        "retry": DELIVERY_RETRY}


def work_queue(connection: Redis, name: str) -> Queue:
    return Queue(name, connection=connection)


def job_id(delivery_id: str) -> str | None:
    """The rq job id of a delivery (``delivery-GUID``), so a redelivery reuses it; None without a GUID."""
    # rq accepts only [A-Za-z0-9_-] in job ids; GitHub's delivery GUIDs are hex and dashes.
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", delivery_id)
    return f"delivery-{safe}" if safe else None


def enqueue_deliveries(queue: Queue, deliveries: Iterable[Delivery], pipe: Pipeline) -> list[str]:
    """Add one job per delivery to ``pipe`` (a MULTI the caller executes); returns the job ids.

    The raw body is queued as it came, not the parsed payload: pickling one bytes object costs a small
    fraction of pickling a 20 KB dict, and rq's default description (a `repr` of every argument) is
    replaced by a short one. The same delivery twice in one batch is queued once.
    """
    ids: list[str] = []
    seen: set[str] = set()
    for delivery in deliveries:
        wanted = job_id(delivery.delivery_id)
        if wanted is not None and wanted in seen:
            continue
        job = queue.create_job(
            HANDLE_DELIVERY,
            args=(delivery.event, delivery.delivery_id, delivery.body),
            job_id=wanted,
            description=f"github {delivery.event} {delivery.delivery_id}",
            **DELIVERY_JOB_OPTIONS,
        )
        queue.enqueue_job(job, pipeline=pipe)
        seen.add(job.id)
        ids.append(job.id)
    return ids


def enqueue_delivery(queue: Queue, event: str, delivery_id: str, body: bytes) -> str:
    """Queue one delivery as a job at once (one MULTI/EXEC); returns the job id. For callers that bypass
    the intake list, such as tests and tools; the receiver goes through the intake."""
    with queue.connection.pipeline() as pipe:
        (queued,) = enqueue_deliveries(queue, [Delivery(event, delivery_id, body)], pipe)
        pipe.execute()
    return queued
