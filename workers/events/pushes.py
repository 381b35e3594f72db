"""`push`: a PR's head moved (its pushed commits), a tree closer's branch head followed, and the repo config
reloaded when a push to the default branch touches it."""

from __future__ import annotations

from functools import partial
from typing import Any

from core import keys
from core.events import repo_name
from core.prstate import record_push
from core.repo_config import CONFIG_PATH
from state import audit
from workers.events import deployments, tree_heads
from workers.events.handler_support import apply_change
from workers.events.repos import load_repo_config, pr_meta
from workers.publishing import republish_scope
from workers.runtime import Runtime

ZERO_SHA = "0" * 40
CONFIG_LOCK_TIMEOUT = 30
"""A config reload is one contents read; a lock held longer belongs to a dead worker."""


def on_push(rt: Runtime, payload: dict[str, Any]) -> str:
    repo = repo_name(payload)
    ref = str(payload.get("ref", ""))
    before, after = str(payload.get("before", "")), str(payload.get("after", ""))
    if repo is None or not ref.startswith("refs/heads/") or after == ZERO_SHA:
        if repo is not None and after == ZERO_SHA:
            tree_heads.forget(rt, repo, ref.removeprefix("refs/heads/"))  # a deleted branch has no head
        return "ignored"
    branch = ref.removeprefix("refs/heads/")
    meta, config = pr_meta(rt, repo, payload)
    tree_heads.on_push(rt, repo, payload, config.close_on_failure)  # a tree closer follows the head
    moved = 0
    number = rt.redis.get(keys.head_index(repo, branch))
    taken = tree_heads.pushed_at(payload)
    at = int(taken.timestamp()) if taken else 0
    if number is not None and before != ZERO_SHA and apply_change(
            rt, repo, int(number), partial(record_push, before=before, after=after, at=at)):
        moved = 1
    if branch == meta.default_branch and _touches_config(payload):
        # Read at the branch's current head, never at this push's `after`: pushes handled out of order
        # would otherwise restore an older config. Reloads of one repo are serialised, so the last to
        # write is the last to have read the branch, which already holds every push delivered so far.
        with rt.redis.lock(keys.config_lock(repo), timeout=CONFIG_LOCK_TIMEOUT, sleep=0.05,
                           blocking_timeout=CONFIG_LOCK_TIMEOUT):
            load_repo_config(rt, repo, installation_id=meta.installation_id, default_branch=meta.default_branch,
                             private=meta.private, previous=meta)
        audit.record(rt.redis, repo, "config.reloaded", sha=after, ref=meta.default_branch)
        deployments.request_recheck(rt, repo)  # an environment or a window dropped from the config thaws
        republish_scope(rt, repo)
        return "config-reloaded, republished"
    return f"moved {moved}"


def _touches_config(payload: dict[str, Any]) -> bool:
    for commit in payload.get("commits") or []:
        for field in ("added", "modified", "removed"):
            if CONFIG_PATH in (commit.get(field) or []):
                return True
    head = payload.get("head_commit") or {}
    return any(CONFIG_PATH in (head.get(f) or []) for f in ("added", "modified", "removed"))
