"""How work reaches the workers: the rq queues, and each job's rq options.

Interactive work (webhook deliveries, chat commands, page actions, API calls, a PR's recompute) goes to
the queue named in the settings (``MERGE_HOLD_QUEUE``, the one queue of earlier releases, so jobs queued
before an upgrade run on). Bulk work — bootstraps, fan-outs, reconciles, outbox drains (statuses and
freeze marks) and check runs — goes to its installation's own bulk queue (`bulk_queue`, one per outbox
bucket), listed in a Redis set so the workers find queues of installations that appear later. A worker listens to the
interactive queue first, then to the bulk queues round robin (`workers.ops.tenants`).

What rq keeps of each job (its timeout, retries, result and failure TTLs) is its row in `core.jobs`;
`options` turns a row into rq's keyword arguments, so no enqueue site spells them by hand, and
`enqueue_after` queues a row's job now or after a delay (the one spelling of that choice).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from redis import Redis
from redis.client import Pipeline
from rq import Queue, Retry
from rq.job import Job as RqJob

from core import jobs, keys
from core.deliveries import Delivery
from state.decoding import as_text

HANDLE_DELIVERY = jobs.DELIVERY.address
"""Job that applies one GitHub webhook delivery: ``(event, delivery_id, raw JSON body)``."""
DELIVERY_FAILURE_TTL = jobs.DELIVERY.failure_ttl


def retry(job: jobs.Job) -> Retry | None:
    """rq's retry of a row: one retry per pause."""
    return Retry(max=len(job.retry), interval=list(job.retry)) if job.retry else None


def options(job: jobs.Job) -> dict[str, Any]:
    """``queue.enqueue(job.address, *args, **options(job))`` (also `enqueue_in`, `enqueue_at`). A
    ``None`` of the row is left out, so rq's own default applies as it always did."""
    found: dict[str, Any] = {"job_timeout": job.timeout, "result_ttl": job.result_ttl,
                             "failure_ttl": job.failure_ttl, "retry": retry(job)}
    return {name: value for name, value in found.items() if value is not None}


def create_job(queue: Queue, job: jobs.Job, args: tuple[Any, ...], **extra: Any) -> RqJob:
    """`Queue.create_job` for a row (to queue in a caller's pipeline, or schedule); ``extra``: a job id,
    a description. `create_job` calls the timeout ``timeout``, where `enqueue` says ``job_timeout``."""
    found = options(job)
    if "job_timeout" in found:
        found["timeout"] = found.pop("job_timeout")
    return queue.create_job(job.address, args=args, **found, **extra)


def enqueue_after(queue: Queue, job: jobs.Job, *args: Any, delay: float = 0.0, **extra: Any) -> RqJob:
    """Queue a row's job now, or ``delay`` seconds from now (rq's scheduler moves it onto the queue then):
    the one spelling of "now or later". ``extra``: rq's keywords beyond the row (a description, a job id)."""
    if delay > 0:
        return queue.enqueue_in(timedelta(seconds=delay), job.address, *args, **options(job), **extra)
    return queue.enqueue(job.address, *args, **options(job), **extra)


def work_queue(connection: Redis, name: str) -> Queue:
    return Queue(name, connection=connection)


BULK_INFIX = "-bulk-"


def bulk_name(interactive: str, bucket: str) -> str:
    """The bulk queue of one outbox bucket (``inst-42``, ``global``) beside ``interactive``."""
    return f"{interactive}{BULK_INFIX}{bucket}"


def bulk_queue(interactive: Queue, bucket: str, pipeline: Pipeline | None = None) -> Queue:
    """The bucket's bulk queue, recorded among the queues the workers listen to (in ``pipeline`` when
    given, so the record lands with the caller's job)."""
    name = bulk_name(interactive.name, bucket)
    (pipeline or interactive.connection).sadd(keys.bulk_queues(interactive.name), name)
    return Queue(name, connection=interactive.connection, serializer=interactive.serializer)


def bulk_names(connection: Redis, interactive: str) -> list[str]:
    """Every bulk queue recorded beside ``interactive``, sorted."""
    return sorted(as_text(n)
                  for n in connection.smembers(keys.bulk_queues(interactive)))


def all_queues(interactive: Queue) -> list[Queue]:
    """The interactive queue, then every bulk queue beside it: what a worker listens to, and what the
    watchdog, the scheduler and a name's take-over look through."""
    return [interactive] + [Queue(name, connection=interactive.connection, serializer=interactive.serializer)
                            for name in bulk_names(interactive.connection, interactive.name)]


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
        job = create_job(queue, jobs.DELIVERY, (delivery.event, delivery.delivery_id, delivery.body),
                         job_id=wanted, description=f"github {delivery.event} {delivery.delivery_id}")
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


def request_deploy_recheck(redis: Redis, queue: Queue, repo: str) -> bool:
    """Queue a re-check of ``repo``'s waiting deployments when it has any (one HLEN otherwise): a hold on
    it changed (`workers.events.deployments.recheck_job`)."""
    if not redis.hlen(keys.deployments_waiting(repo)):
        return False
    queue.enqueue(jobs.RECHECK_DEPLOYS.address, repo, **options(jobs.RECHECK_DEPLOYS))
    return True
