"""The redelivery sweep: deliveries GitHub could not hand us (we answered 5xx, or were down) come back.

GitHub does not retry failed webhook deliveries by itself; it keeps them three days and lets the App
ask for another attempt (`POST /app/hook/deliveries/{id}/attempts`). The sweep runs every few
minutes under rq's scheduler and asks once per failed delivery.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from core import jobs, keys
from state.queueing import enqueue_after
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

SWEEP_JOB = jobs.REDELIVERY_SWEEP.address
SWEEP_EVERY = timedelta(minutes=10)
WINDOW = timedelta(days=3)
"""GitHub keeps deliveries for three days; older ones cannot be redelivered."""


def sweep(rt: Runtime, now: datetime) -> int:
    asked = 0
    for delivery in rt.github.failed_deliveries(now - WINDOW + timedelta(minutes=5)):
        if not rt.redis.set(keys.redelivery_asked(delivery["guid"]), "1", nx=True, ex=int(WINDOW.total_seconds())):
            continue
        rt.github.redeliver(int(delivery["id"]))
        asked += 1
    if asked:
        log.info("asked GitHub to redeliver %d failed deliveries", asked)
    return asked


def sweep_job() -> int:
    rt = current()
    try:
        return sweep(rt, datetime.now(UTC))
    finally:
        schedule(rt)


def schedule(rt: Runtime) -> None:
    """Keep exactly one future sweep scheduled (a fixed job id makes repeated calls harmless)."""
    if not rt.settings.has_app_credentials or rt.settings.dry_run:
        return
    slot = int(datetime.now(UTC).timestamp() // SWEEP_EVERY.total_seconds()) + 1
    if rt.redis.set(keys.sweep_slot(slot), "1", nx=True, ex=int(SWEEP_EVERY.total_seconds()) * 3):
        enqueue_after(rt.queue, jobs.REDELIVERY_SWEEP, delay=SWEEP_EVERY.total_seconds(), job_id=f"sweep-{slot}")
