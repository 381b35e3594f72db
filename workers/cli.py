"""`merge-hold worker`: an rq worker (with rq's scheduler, which runs timed-hold expiries) on our queue."""

from __future__ import annotations

import argparse
import logging
import sys

from merge_hold.cliargs import ArgumentParser
from merge_hold.settings import SettingsError, from_env


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="merge-hold worker",
        description="Run an rq worker that applies webhook deliveries, recomputes verdicts and posts the "
        "`merge-hold` status. Reads REDIS_URL, GITHUB_APP_ID, GITHUB_PRIVATE_KEY[_PATH], GITHUB_API_URL "
        "and MERGE_HOLD_* from the environment; without App credentials it runs in dry-run mode.",
    )
    p.add_argument("--burst", action="store_true", help="exit once the queue is empty")
    p.add_argument("--name", help="worker name (default: rq's host.pid)")
    p.add_argument("--no-scheduler", action="store_true", help="do not run rq's scheduler in this worker")
    p.add_argument("--fork", action="store_true",
                   help="run each job in a forked work-horse (rq's default Worker): isolation over speed")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        settings = from_env()
        from workers import runtime

        rt = runtime.install(runtime.build(settings))
        from workers.own_status import check_app_slug

        check_app_slug(rt)  # a wrong MERGE_HOLD_APP_SLUG would misread our own statuses: refuse to start
    except SettingsError as exc:
        print(f"merge-hold worker: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG
    from merge_hold.logs import configure

    configure(settings.log_level)  # basicConfig, and no URL-bearing urllib3 lines at DEBUG
    from rq import SimpleWorker, Worker

    # Import the job modules before forking work-horses, so each job starts warm.
    import workers.events
    import workers.publish  # noqa: F401
    from workers.redeliver import schedule

    schedule(rt)
    # SimpleWorker runs jobs in this process, so the GitHub connection pool, the installation tokens and
    # the parsed App key live across jobs: a forked work-horse per job started each recompute cold
    # (measured: p50 seconds instead of ~15 ms from delivery to status at 50 deliveries/s). Job
    # timeouts still apply (SIGALRM), and a dead worker's jobs are re-queued by rq's maintenance.
    worker_class = Worker if args.fork else SimpleWorker
    worker = worker_class([rt.queue], connection=rt.redis, name=args.name)
    # The intake pump turns acknowledged webhook deliveries into jobs (workers/intake.py).
    from workers.intake import Pump

    pump = Pump(rt.redis, rt.queue, worker.name)
    if args.burst:
        pump.drain()
    else:
        pump.start()
    mode = "dry-run" if not settings.has_app_credentials or settings.dry_run else settings.github_api_url
    logging.getLogger(__name__).info("worker on queue %s (%s)", rt.queue.name, mode)
    worker.work(burst=args.burst, with_scheduler=not args.no_scheduler)
    return 0
