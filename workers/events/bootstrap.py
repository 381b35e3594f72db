"""An installation's repos adopted: a bootstrap job per repo on the installation's bulk queue, each one
asking for a bootstrap pass of the repo's fan-out, which records the open PRs in slices (giving way to
interactive work) and queues their statuses most-recently-active first. Its progress is
`state.bootstrap` (N of M open PRs have a status), shown by `doctor`, /setup and the dashboard."""

from __future__ import annotations

import time
from typing import Any

from core import jobs, keys
from core.outbox import bucket
from state import bootstrap as state_bootstrap
from state import store
from state.queueing import options
from workers.events.repos import load_repo_config
from workers.publishing import request_repo_fanout
from workers.runtime import Runtime, current


def bootstrap(rt: Runtime, installation_id: int, repos: list[dict[str, Any]]) -> int:
    """Adopt repos (``full_name``, ``default_branch``, ``private`` as GitHub's payloads give them): one
    bootstrap job each on the installation's bulk queue (after interactive jobs, in turn with other
    installations' bulk work), counted by the installation's bootstrap record. Returns how many."""
    names = [str(item["full_name"]) for item in repos]
    state_bootstrap.start(rt.redis, installation_id, names, time.time())
    queue = rt.bulk(bucket(installation_id))
    for item in repos:
        repo = str(item["full_name"])
        queue.enqueue(jobs.BOOTSTRAP.address, repo, installation_id, item.get("default_branch"),
                      bool(item.get("private")), **options(jobs.BOOTSTRAP), description=f"bootstrap {repo}")
    return len(names)


def bootstrap_job(repo: str, installation_id: int, default_branch: str | None = None,
                  private: bool = False) -> str:
    """The rq job: read the repo's config, then ask for a bootstrap pass of its fan-out, which lists
    the open PRs (100 a page), records each one's verdict in slices that give way to interactive
    work, and queues their statuses most-recently-active first (`workers.publishing.fanout`)."""
    rt = current()
    if rt.redis.exists(keys.repo_dropped(repo)):
        return "dropped repo"  # the App left the repo while this waited
    load_repo_config(rt, repo, installation_id=installation_id, default_branch=default_branch,
                     private=private, previous=store.load_repo(rt.redis, repo))
    request_repo_fanout(rt, repo, bootstrap=True)
    return "fan-out asked for"
