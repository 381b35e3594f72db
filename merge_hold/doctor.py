"""`merge-hold doctor [--json]`: is this deployment's gate real? One line per check, `ok` or `problem`
with the fix; exit 1 on any problem.

Checks, in order: Redis (reachable, append-only persistence, `noeviction`), the queues (the interactive
queue's depth, the bulk queues', failed jobs, a worker listening, the intake's dead letters), each
installation's bootstrap (`merge_hold.doctor_bootstrap`: N of M PRs have a status, and a warning
against requiring `merge-hold` while it is far from done), then GitHub (`merge_hold.doctor_github`:
credentials and clock, slug, webhook secret, the App's permissions and events, installations, and per
repo whether the default branch requires `merge-hold` from this App, and whether a merge queue is
answered). Between them, what
the tamper watch recorded (`merge_hold.doctor_watch`): each branch that stopped requiring `merge-hold`
(a problem, as the dashboard's banner says) and the incidents recorded. Then the agents' configuration
seen from the current directory (`merge_hold.doctor_agents`: a Codex project install in a project Codex
does not trust).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from foundation.settings import Settings, SettingsError, from_env
from merge_hold.doctor_github import Api, Check, github_checks
from state.decoding import as_text

if TYPE_CHECKING:
    from redis import Redis

QUEUE_BACKLOG = 500
"""Jobs waiting beyond this mean the workers are behind (a delivery waits minutes for its status)."""


def redis_checks(settings: Settings) -> tuple[list[Check], Callable[[str], bool] | None]:
    """Redis and queue findings, and a predicate "does merge-hold track this repo" (None: no Redis)."""
    if not settings.redis_url:
        return [Check("redis", False, "REDIS_URL is not set", "set REDIS_URL to the Redis the service uses")], None
    from redis import Redis
    from redis.exceptions import RedisError, ResponseError
    from rq import Queue, Worker
    from rq.registry import FailedJobRegistry

    from core import keys

    conn = Redis.from_url(settings.redis_url, socket_connect_timeout=3, socket_timeout=5)
    try:
        conn.ping()
    except RedisError as exc:
        return [Check("redis", False, f"cannot reach {_safe(settings.redis_url)}: {exc}",
                      "start Redis or fix REDIS_URL")], None
    checks = [Check("redis", True, f"reachable at {_safe(settings.redis_url)}")]
    try:
        config = {**conn.config_get("appendonly"), **conn.config_get("maxmemory-policy")}
    except ResponseError as exc:
        # Managed Redis often renames or disables CONFIG; say so rather than guess.
        checks.append(Check("redis persistence", False, f"CONFIG GET refused ({exc})",
                            "confirm by hand: appendonly yes, maxmemory-policy noeviction"))
        config = None
    if config is not None:
        aof, policy = as_text(config.get("appendonly")), as_text(config.get("maxmemory-policy"))
        checks.append(Check("redis persistence", aof == "yes", f"appendonly {aof}",
                            "" if aof == "yes" else "set `appendonly yes`: holds must survive a restart"))
        checks.append(Check("redis eviction", policy == "noeviction", f"maxmemory-policy {policy}",
                            "" if policy == "noeviction" else
                            "set `maxmemory-policy noeviction`: an evicted hold is a lost hold"))
    queue = Queue(settings.queue_name, connection=conn)
    from state.queueing import all_queues

    bulk = all_queues(queue)[1:]
    depth = queue.count
    failed = sum(FailedJobRegistry(queue=q).count for q in [queue, *bulk])
    # The interactive queue's depth is the scaling signal (README: sizing); bulk work waits by design.
    checks.append(Check("queue", depth <= QUEUE_BACKLOG,
                        f"{depth} interactive job(s) waiting in {settings.queue_name!r}; "
                        f"{sum(q.count for q in bulk)} bulk job(s) in {len(bulk)} installation queue(s)",
                        "" if depth <= QUEUE_BACKLOG else "add workers (`merge-hold worker`)"))
    checks.append(Check("failed jobs", failed == 0, f"{failed} failed job(s)", "" if failed == 0 else
                        f"inspect with `rq info -u REDIS_URL {settings.queue_name}`; requeue with "
                        f"`rq requeue -u REDIS_URL --queue {settings.queue_name} --all`"))
    workers = Worker.count(queue=queue)
    checks.append(Check("workers", workers > 0, f"{workers} worker(s) listening", "" if workers else
                        "start `merge-hold worker`: deliveries are queued but nothing applies them"))
    checks.append(_dead_letters(conn, settings.queue_name))

    from merge_hold.doctor_bootstrap import bootstrap_checks
    from merge_hold.doctor_watch import watch_checks

    checks += watch_checks(conn)  # the tamper watch's banners and the incidents, as the workers recorded them
    from merge_hold.doctor_freeze import freeze_checks

    checks += freeze_checks(conn)  # each org's freeze mode, and rulesets waiting for GitHub's hour
    checks += bootstrap_checks(conn, settings)  # installs under way: N of M PRs have a status

    def known(repo: str) -> bool:
        return bool(conn.exists(keys.repo_meta(repo)))

    return checks, known


def _dead_letters(conn: Redis, queue: str) -> Check:
    """The intake's dead letters (`state.dead_letters`): deliveries the pump set aside, each one a
    webhook that did not apply."""
    from core import keys
    from state import dead_letters

    waiting, newest = dead_letters.newest(conn, queue)
    if not waiting:
        return Check("intake dead letters", True, "none: every delivery the intake took became a job")
    last = newest[0] if newest else {}
    return Check("intake dead letters", False,
                 f"{waiting} deliver{'y' if waiting == 1 else 'ies'} set aside; the newest, "
                 f"{last.get('event') or '?'} {last.get('delivery_id') or '-'} at {last.get('at')}: "
                 f"{last.get('reason')}",
                 f"read them with `redis-cli LRANGE {keys.intake_dead(queue)} 0 -1`, redeliver what should "
                 f"apply from the App's Recent Deliveries, then `redis-cli DEL {keys.intake_dead(queue)}`")


def _safe(url: str) -> str:
    """The URL without its password (doctor output ends up in tickets)."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return f"{scheme}{sep}{rest}"


def run(settings: Settings, api: Api | None = None) -> list[Check]:
    from pathlib import Path

    from merge_hold.doctor_agents import agent_checks

    checks, known = redis_checks(settings)
    return (checks + github_checks(settings, api or Api(settings.github_api_url), known_repo=known)
            + agent_checks(Path.cwd()))  # a guard installed where its agent never loads it


def render(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        line = f"{'ok' if check.ok else 'problem':<8} {check.name}: {check.detail}"
        if not check.ok and check.fix:
            line += f"\n         fix: {check.fix}"
        lines.append(line)
    problems = sum(1 for c in checks if not c.ok)
    lines.append(f"{problems} problem(s)" if problems else "all good")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="merge-hold doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    args = parser.parse_args(argv)
    try:
        settings = from_env()
    except SettingsError as exc:
        print(f"problem  settings: {exc}", file=sys.stderr)
        return 1
    checks = run(settings)
    if args.json:
        sys.stdout.write(json.dumps({"ok": all(c.ok for c in checks),
                                     "checks": [c.as_dict() for c in checks]}, indent=2) + "\n")
    else:
        sys.stdout.write(render(checks))
    return 0 if all(c.ok for c in checks) else 1
