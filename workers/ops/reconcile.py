"""Reconcile: republish verdicts, and with `--rebuild` re-read the holds from GitHub.

Republishing is cheap and safe at any time (a status is posted only where it differs). It runs by
itself every ``MERGE_HOLD_RECONCILE_SECONDS`` (one worker enqueues `reconcile_job` per period, see
`workers.ops.watchdog`) and on demand as `merge-hold reconcile`. Every open PR's verdict record is
recomputed in Redis (a verdict older than its state, or one a room hold, freeze edge or expiry left
behind, is caught so) and what differs from the posted status goes through the publishing path's paced outbox.

Rebuilding is for state lost in Redis: it replays every comment and review of every open PR, in their
own time order, through the same rules the webhooks use; holds and lifts made on the dashboard, which
GitHub has no record of, are kept.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from core import jobs, keys
from core.outbox import GLOBAL_BUCKET
from core.prstate import keep_dashboard
from core.repo_config import DEFAULT_CONFIG
from foundation.cliargs import ArgumentParser
from state import audit, branch_freezes, room_holds, store
from state.config_file import repo_config
from state.decoding import as_text
from state.queueing import options
from workers.events import deployments, tamper
from workers.events.repos import load_repo_config
from workers.publishing import bucket_of, drain_outbox, enqueue_drain, history_state, record_locked, sync_freeze_ruleset
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)



Step = Callable[[str, int, int], None]
"""``(phase, done, total)``: PRs of one repo through ``rebuild`` or ``record`` (`workers.ops.reconcile_progress`)."""


def _no_step(_phase: str, _done: int, _total: int) -> None:
    return None


def reconcile_repo(rt: Runtime, repo: str, *, rebuild: bool, step: Step = _no_step) -> dict[str, int]:
    counts = {"prs": 0, "posted": 0}
    if rebuild:
        meta = store.load_repo(rt.redis, repo)
        load_repo_config(rt, repo, previous=meta, default_branch=meta.default_branch if meta else None)
        config = repo_config(store.load_repo(rt.redis, repo))[0] or DEFAULT_CONFIG
        pulls = list(rt.github.list_open_pulls(repo))  # listed first, so that progress has a total
        step("rebuild", 0, len(pulls))
        for done, pull in enumerate(pulls, 1):
            state = history_state(rt, repo, pull, config)
            # GitHub's history replaces the registers, except for commands made on the dashboard: they
            # have no comment to re-read, so the live state's are joined back in.
            store.update_pull(rt.redis, repo, state.number, partial(keep_dashboard, state))
            rt.redis.sadd(keys.open_prs(repo), state.number)
            step("rebuild", done, len(pulls))
    try:
        # A ruleset freeze out of step with the holds (disabled by someone, our record lost) is repaired
        # first, so that the records below read what GitHub really enforces.
        counts["ruleset"] = int(sync_freeze_ruleset(rt, repo, datetime.now(UTC), verify=True) != "unchanged")
    except Exception:
        log.exception("ruleset check of %s failed; its PRs' statuses carry any freeze meanwhile", repo)
    if rt.settings.github_app_id and not rt.settings.dry_run:
        try:
            # The tamper watch's backstop: a webhook about protection or rulesets that never arrived (or
            # a repo watched since before the watch existed) is caught here, and its baseline kept.
            tamper.watch_repo(rt, repo, actor=None, cause="reconcile")
        except Exception:
            log.exception("gate check of %s failed; the next reconcile reads it again", repo)
    counts["expired"] = room_holds.prune_expired(rt.redis, repo, datetime.now(UTC))
    branch_freezes.publish(rt.redis, repo, datetime.now(UTC))  # the hook's freeze record, and its `until` ahead
    counts["pending"] = record_all(rt, repo, step=step)
    deployments.recheck(rt, repo, datetime.now(UTC))  # a deployment left waiting past its thaw goes on
    counts["prs"] = len(store.open_numbers(rt.redis, repo))
    # The operator's run waits for its writes; the scheduled one leaves them to the outbox's drain.
    counts["posted"] = drain_outbox(rt, bucket_of(rt.redis, repo), slice_seconds=None)["posted"]
    audit.record(rt.redis, repo, "repo.reconciled", rebuild=rebuild, **counts)
    return counts


def record_all(rt: Runtime, repo: str, *, step: Step = _no_step) -> int:
    """Recompute every open PR's verdict record (Redis only); returns how many statuses now wait on the
    outbox. A PR whose lock is busy is being recomputed already and is skipped."""
    pending = 0
    numbers = list(store.open_numbers(rt.redis, repo))
    for done, number in enumerate(numbers, 1):
        step("record", done, len(numbers))
        pending += record_locked(rt, repo, number, wait=5, lapse_ok=True) == "pending"
    return pending


def reconcile_job(after: str = "", pending: int = 0) -> str:
    """The scheduled reconcile: every managed repo's verdicts recomputed, differing statuses queued. Bulk
    work in slices: between two repos it hands on to a fresh job (going on after the last repo done, on
    the shared bulk queue) as soon as interactive jobs wait, and asks for the drains of the outboxes it
    filled so far (each on its installation's bulk queue)."""
    rt = current()
    repos = sorted(as_text(r) for r in rt.redis.smembers(keys.MANAGED_REPOS))
    buckets: set[str] = set()
    if not after:
        branch_freezes.publish_all(rt.redis, repos, datetime.now(UTC))  # kept ahead of its `until` (design §6)
    todo = [repo for repo in repos if repo > after]
    for index, repo in enumerate(todo):
        if index and rt.interactive_waiting():
            for bucket in sorted(buckets):
                enqueue_drain(rt, bucket)
            rt.bulk(GLOBAL_BUCKET).enqueue(jobs.RECONCILE.address, todo[index - 1], pending,
                                           **options(jobs.RECONCILE), description="scheduled reconcile (continued)")
            return f"continued after {todo[index - 1]}"
        pending += record_all(rt, repo)
        buckets.add(bucket_of(rt.redis, repo))
    deployments.sweep(rt, datetime.now(UTC))  # the backstop for a waiting deployment whose thaw was missed
    for bucket in sorted(buckets):
        try:
            drain_outbox(rt, bucket)
        except Exception as exc:  # GitHub refusing writes: they stay on the outbox for the next drain
            log.warning("reconcile: writes to %s wait on its outbox (%s)", bucket, exc)
    if pending:
        log.info("reconcile: %d statuses differed from their verdicts", pending)
    return f"{len(repos)} repos, {pending} statuses queued"


def enqueue_reconcile(rt: Runtime) -> None:
    """Bulk work of every installation at once: on the shared bulk queue (`core.outbox.GLOBAL_BUCKET`'s),
    after interactive jobs and in turn with the installations' bulk queues."""
    rt.bulk(GLOBAL_BUCKET).enqueue(jobs.RECONCILE.address, **options(jobs.RECONCILE),
                                   description="scheduled reconcile")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="merge-hold reconcile",
        description="Republish every managed PR's verdict (a status is posted only where it differs). "
        "With --rebuild, first re-read comments, reviews and labels from GitHub (for lost Redis state). "
        "Shows each repository's progress (PRs done of total, redrawn in place on a terminal; one line "
        "per repository otherwise) and a summary.",
    )
    p.add_argument("--repo", action="append", metavar="O/R", help="only this repo (repeatable)")
    p.add_argument("--rebuild", action="store_true", help="re-read holds from GitHub before republishing")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from foundation.settings import SettingsError, from_env
    from workers import runtime

    try:
        rt = runtime.install(runtime.build(from_env()))
    except SettingsError as exc:
        print(f"merge-hold reconcile: {exc}", file=sys.stderr)
        return 78
    managed = sorted(as_text(r) for r in rt.redis.smembers(keys.MANAGED_REPOS))
    unknown = [repo for repo in args.repo or []
               if repo.lower() not in managed or store.load_repo(rt.redis, repo) is None]
    if unknown:
        # Reconciling a repo no installation covers would post nothing and look like success.
        print(f"merge-hold reconcile: not managed (no installation of the App covers it, or it was never "
              f"delivered to this Redis): {', '.join(unknown)}; managed repos: {', '.join(managed) or 'none'}",
              file=sys.stderr)
        return 1
    from workers.ops.reconcile_progress import Progress

    chosen = args.repo or managed
    progress = Progress(sys.stdout, len(chosen), tty=sys.stdout.isatty())
    for repo in chosen:
        progress.start(repo)
        counts = reconcile_repo(rt, repo, rebuild=args.rebuild, step=progress.step)
        progress.finish(repo, counts["prs"], counts["posted"])
    progress.summary(rebuild=args.rebuild)
    return 0
