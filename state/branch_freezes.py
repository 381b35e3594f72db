"""The per-repo freeze record in Redis (`core.branch_freezes`, under `core.keys.branch_freezes`): what the agent
hook reads to stop a push onto a frozen branch and to tell a session what is frozen.

Written from what the verdicts read — the room holds of the repo and its org, the repo config as parsed
once — on the publishing path: `workers.publishing.republish` (every hold placed or lifted on a repo, branch or
org, from chat, the API, the dashboard or the tree closer; a config reload; a rename), the config load of a
bootstrap, and every reconcile (which keeps ``until`` ahead). One ``SET`` per repo: cheap beside the PR
records a fan-out writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from redis import Redis

from core import keys
from core.branch_freezes import build
from state import room_holds, store
from state.config_file import repo_config


def current(redis: Redis, repo: str, now: datetime) -> dict[str, Any]:
    """The record ``repo`` should have at ``now``."""
    meta = store.load_repo(redis, repo)
    config, error = repo_config(meta)
    return build(repo, config=config, config_error=error, scoped_holds=room_holds.scoped_holds(redis, repo),
                 default_branch=meta.default_branch if meta is not None else None, now=now)


def publish(redis: Redis, repo: str, now: datetime) -> dict[str, Any]:
    """Write the repo's record as it should be now; returns it."""
    record = current(redis, repo, now)
    redis.set(keys.branch_freezes(repo), json.dumps(record, separators=(",", ":")))
    return record


def publish_all(redis: Redis, repos: Iterable[str], now: datetime) -> int:
    """`publish` for each managed repo of ``repos`` (a hold on an org reaches every repo of it); how many."""
    count = 0
    for repo in repos:
        if not redis.sismember(keys.MANAGED_REPOS, repo.lower()):
            continue  # a hold on a repo the App does not cover: nothing reads a record of it
        publish(redis, repo, now)
        count += 1
    return count


def load(redis: Redis, repo: str) -> dict[str, Any] | None:
    """The stored record as written (None when there is none, or it is not JSON)."""
    raw = redis.get(keys.branch_freezes(repo))
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
