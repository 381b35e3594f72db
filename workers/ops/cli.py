"""`merge-hold worker`: an rq worker (with our scheduler thread, which runs timed-hold expiries) on the
interactive queue first and the installations' bulk queues round robin after it (`workers.ops.tenants`).

It rides out a Redis restart: when rq's loop gives up on a connection error, the worker waits for
Redis with backoff and starts again under a fresh name (its jobs interrupted meanwhile are rescued by
the watchdogs, `workers.ops.watchdog`). It exits only when asked (SIGTERM/SIGINT) or, with ``--burst``,
once the queue is empty.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
import time

from redis import Redis
from redis.exceptions import RedisError
from rq.exceptions import StopRequested

from foundation.cliargs import ArgumentParser
from foundation.settings import SettingsError, from_env


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="merge-hold worker",
        description="Run an rq worker that applies webhook deliveries, recomputes verdicts and posts the "
        "`merge-hold` status. It serves the interactive queue (MERGE_HOLD_QUEUE: deliveries, chat commands, "
        "page actions, API calls) first on every job, then each installation's bulk queue (bootstraps, "
        "fan-outs, drains) in turn, picking up new installations' queues as they appear. Reads REDIS_URL, "
        "GITHUB_APP_ID, GITHUB_PRIVATE_KEY[_PATH], GITHUB_API_URL "
        "and MERGE_HOLD_* from the environment; without App credentials it runs in dry-run mode.",
    )
    p.add_argument("--burst", action="store_true", help="exit once every queue (interactive and bulk) is empty")
    p.add_argument("--name", help="worker name (default: HOST.RANDOM, new at every start, so a worker killed hard "
                   "comes back at once). A fixed name held by a dead worker is taken over, its jobs put back; "
                   "one a live worker holds is refused")
    p.add_argument("--healthcheck", nargs="?", const="full", choices=("full", "liveness"), metavar="MODE",
                   help="do not run: exit 0 when this container's worker is registered, heartbeating and Redis "
                   "answers (any REDIS_URL form), else 1. MODE `liveness` passes while Redis is unreachable "
                   "(the worker waits it out) and fails only on a worker Redis says is gone or stuck. With "
                   "--name: that worker, wherever it runs")
    p.add_argument("--no-scheduler", action="store_true", help="do not run the scheduler (due jobs) in this worker")
    p.add_argument("--fork", action="store_true",
                   help="run each job in a forked work-horse (rq's default Worker): isolation over speed")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.healthcheck:
        from workers.ops.health import run

        return run(args.healthcheck, args.name)
    try:
        settings = from_env()
        from foundation.logs import configure

        # Before anything may log (the slug check below does when GitHub is unreachable): one log format.
        configure(settings.log_level)  # basicConfig, and no URL-bearing urllib3 lines at DEBUG
        from workers import runtime

        rt = runtime.install(runtime.build(settings))
        from workers.events.forged_status import check_app_slug

        check_app_slug(rt)  # a wrong MERGE_HOLD_APP_SLUG would misread our own statuses: refuse to start
    except SettingsError as exc:
        print(f"merge-hold worker: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG
    # Import the job modules before forking work-horses, so each job starts warm.
    import workers.events.dispatch
    import workers.publishing  # noqa: F401
    from workers.intake.redeliver import schedule
    from workers.ops.tenants import tenant_worker, work
    from workers.ops.watchdog import Watchdog, beat

    log = logging.getLogger(__name__)
    # Jobs run in this process (rq's SimpleWorker, with fewer heartbeat round trips: workers/ops/rqworker.py),
    # so the GitHub connection pool, the installation tokens and the parsed App key live across jobs: a
    # forked work-horse per job started each recompute cold (measured: p50 seconds from delivery to
    # status at 50 deliveries/s). Job timeouts still apply (SIGALRM); a dead worker's jobs are rescued
    # by the others' watchdogs.
    from workers.ops.naming import NameTaken, claim, here, unique_name

    # rq's `host.pid` is the same at every start of a container (pid 1): a fresh name per start instead.
    base = args.name or unique_name()
    while args.name:
        try:
            claim(rt.redis, rt.queue, base)  # a dead worker's name: its jobs back on the queue, rq's record ended
            break
        except NameTaken as exc:
            print(f"merge-hold worker: --name: {exc}", file=sys.stderr)
            return 75  # EX_TEMPFAIL: the same command may succeed once that worker has gone
        except RedisError as exc:
            log.warning("worker %s: Redis unavailable (%s)", base, exc)
            _wait_for_redis(rt.redis, log)
    # The intake pump turns acknowledged webhook deliveries into jobs (workers/intake/pump.py); one per
    # process, under the worker's first name, riding out Redis restarts on its own thread.
    from workers.intake.pump import Pump

    pump = Pump(rt.redis, rt.queue, base)
    if args.burst:
        pump.pump_all()
    else:
        pump.start()
    mode = "dry-run" if not settings.has_app_credentials or settings.dry_run else settings.github_api_url
    watchdog: Watchdog | None = None
    # Our scheduler thread, not rq's forked one: a dead holder's lock lapses in seconds (workers/ops/scheduler.py).
    from workers.ops.scheduler import Scheduler

    scheduler = None if args.no_scheduler else Scheduler(rt)
    if scheduler is not None and args.burst:
        scheduler.tick()  # what is due now, once (rq's burst scheduler did the same)
        scheduler.stop()
    elif scheduler is not None:
        scheduler.start()
    try:
        for life in itertools.count():
            # A fresh name per life: the previous one may still be registered (Redis went away mid-job).
            name = base if life == 0 else f"{base}.{life}"
            try:
                beat(rt.redis, name, here())
                schedule(rt)
                if watchdog is None:
                    watchdog = Watchdog(rt, name, here())
                    watchdog.start()
                watchdog.worker_name = name
                worker = tenant_worker(rt.queue, fork=args.fork, name=name, worker_ttl=WORKER_TTL,
                                       maintenance_interval=MAINTENANCE_SECONDS)
                log.info("worker %s on queue %s first, then its bulk queues round robin (%s)", name,
                         rt.queue.name, mode)
                # rq logs four INFO lines per job by itself; MERGE_HOLD_LOG_LEVEL governs them too. Its own
                # scheduler is off: workers.ops.scheduler runs ours (a short lock, taken over in seconds).
                work(worker, burst=args.burst, with_scheduler=False, logging_level=settings.log_level.upper())
                # Asked to stop (SIGTERM/SIGINT): rq sets one or the other, busy or idle.
                if worker._stop_requested or worker._shutdown_requested_date is not None:
                    return 0
            except RedisError as exc:
                log.warning("worker %s: Redis unavailable (%s)", name, exc)
            if _redis_answers(rt.redis) and args.burst:
                return 0
            # rq quits its loop on a Redis error (or any error outside a job): wait for Redis and go on.
            _wait_for_redis(rt.redis, log)
    except StopRequested:
        return 0  # rq's signal handler, met while waiting for Redis
    finally:
        if scheduler is not None:
            scheduler.stop()
    return 0


WORKER_TTL = 60
"""rq's worker key TTL; also bounds rq's blocking dequeue (TTL - 15 s), so maintenance runs that often."""
MAINTENANCE_SECONDS = 30
"""rq's registry cleanup (the scheduler's take-over is `workers.ops.scheduler`'s, within seconds)."""
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)


def _redis_answers(redis: Redis) -> bool:
    try:
        return bool(redis.ping())
    except RedisError:
        return False


def _wait_for_redis(redis: Redis, log: logging.Logger) -> None:
    for attempt in itertools.count():
        if _redis_answers(redis):
            return
        pause = BACKOFF[min(attempt, len(BACKOFF) - 1)]
        if attempt in (0, 10) or attempt % 60 == 0:
            log.warning("waiting for Redis (retrying every %.1fs)", pause)
        time.sleep(pause)
