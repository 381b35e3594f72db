"""`merge-hold reconcile`: republish verdicts, and with `--rebuild` re-read the holds from GitHub.

Republishing is cheap and safe at any time (a status is posted only where it differs). Rebuilding
is for state lost in Redis: it replays every comment and review of every open PR, in their own time
order, through the same rules the webhooks use; holds and lifts made on the dashboard, which GitHub has
no record of, are kept.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from core import keys
from core.prstate import keep_dashboard
from core.repo_config import DEFAULT_CONFIG
from merge_hold.cliargs import ArgumentParser
from workers import store
from workers.publish import publish, repo_config
from workers.repos import load_repo_config
from workers.runtime import Runtime
from workers.sync import history_state


def reconcile_repo(rt: Runtime, repo: str, *, rebuild: bool) -> dict[str, int]:
    counts = {"prs": 0, "posted": 0}
    if rebuild:
        meta = store.load_repo(rt.redis, repo)
        load_repo_config(rt, repo, previous=meta, default_branch=meta.default_branch if meta else None)
        config = repo_config(store.load_repo(rt.redis, repo))[0] or DEFAULT_CONFIG
        for pull in rt.github.list_open_pulls(repo):
            state = history_state(rt, repo, pull, config)
            # GitHub's history replaces the registers, except for commands made on the dashboard: they
            # have no comment to re-read, so the live state's are joined back in.
            store.update_pull(rt.redis, repo, state.number,
                              lambda old, new=state: keep_dashboard(new, old))  # type: ignore[misc]
            rt.redis.sadd(keys.open_prs(repo), state.number)
    now = datetime.now(UTC)
    for number in store.open_numbers(rt.redis, repo):
        counts["prs"] += 1
        if publish(rt, repo, number, now) == "posted":
            counts["posted"] += 1
    store.audit(rt.redis, repo, "repo.reconciled", rebuild=rebuild, **counts)
    return counts


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="merge-hold reconcile",
        description="Republish every managed PR's verdict (a status is posted only where it differs). "
        "With --rebuild, first re-read comments, reviews and labels from GitHub (for lost Redis state).",
    )
    p.add_argument("--repo", action="append", metavar="O/R", help="only this repo (repeatable)")
    p.add_argument("--rebuild", action="store_true", help="re-read holds from GitHub before republishing")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from merge_hold.settings import SettingsError, from_env
    from workers import runtime

    try:
        rt = runtime.install(runtime.build(from_env()))
    except SettingsError as exc:
        print(f"merge-hold reconcile: {exc}", file=sys.stderr)
        return 78
    managed = rt.redis.smembers(keys.MANAGED_REPOS)
    repos = args.repo or sorted(r.decode() if isinstance(r, bytes) else r for r in managed)
    for repo in repos:
        counts = reconcile_repo(rt, repo, rebuild=args.rebuild)
        print(f"{repo}: {counts['prs']} open PRs, {counts['posted']} statuses posted")
    return 0
