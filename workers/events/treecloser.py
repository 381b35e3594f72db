"""The tree closer: `status`, `check_run` and `check_suite` results on a base branch's head close and
reopen that branch (repo config `close_on_failure`; the rule is `core/treecloser.py`).

A red named context places one hold of merge-hold's own on ``owner/repo@branch`` (a room hold with the
id ``treecloser:BRANCH``, so an exempt label or `/hold exempt` lets a hotfix through, and a person may
lift it from chat); when every red context is green again merge-hold lifts that hold — only its own,
never a person's hold on the same scope. Each change is audited and fanned out to the branch's PRs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from core import keys
from core.holds import Hold, Source, from_iso
from core.status import CONTEXT
from core.treecloser import Result, TreeRule, classify, reason, red_contexts, replaces
from state import audit, room_holds, store
from state.config_file import repo_config
from state.decoding import as_text
from workers.events import tree_heads
from workers.publishing import republish_scope
from workers.runtime import Runtime

HOLDER = "merge-hold"


def _hold_id(branch: str) -> str:
    return f"treecloser:{branch}"


def _rules(rt: Runtime, repo: str) -> tuple[TreeRule, ...]:
    meta = store.load_repo(rt.redis, repo)
    if meta is None:
        return ()
    config, _error = repo_config(meta)
    return config.close_on_failure if config is not None else ()


def record(rt: Runtime, repo: str, branch: str, context: str, result: Result) -> str:
    """Record one context's result on the branch head; close or reopen the branch as the rule says."""
    rules = [r for r in _rules(rt, repo) if r.watches(branch, context)]
    if not rules or context == CONTEXT:
        return "not watched"
    key = keys.tree_results(repo, branch)
    with rt.redis.lock(keys.tree_lock(repo, branch), timeout=10, blocking_timeout=10):
        head = tree_heads.head_for(rt, repo, branch, result)
        # Only a result on the head counts. A head nobody can tell (a dry run without pushes) lets a red
        # result count and no green one: unknown fails closed.
        if (head.sha != result.sha) if head is not None else not result.red:
            return tree_heads.record_late(rt, repo, branch, context, result, head)
        raw = rt.redis.hget(key, context)
        if not replaces(Result.from_dict(json.loads(raw)) if raw is not None else None, result):
            return "stale"
        rt.redis.hset(key, context, json.dumps(result.to_dict()))
        watched = {c for r in _rules(rt, repo) if r.covers(branch) for c in r.contexts}
        results = {as_text(c): Result.from_dict(json.loads(v))
                   for c, v in rt.redis.hgetall(key).items()}
        red = red_contexts({c: r for c, r in results.items() if c in watched})
        return _close(rt, repo, branch, red) if red else _open(rt, repo, branch)


def _close(rt: Runtime, repo: str, branch: str, red: list[tuple[str, Result]]) -> str:
    scope, text = f"{repo}@{branch}", reason(branch, red)
    current = room_holds.get(rt.redis, scope, _hold_id(branch))
    if current is not None and current.reason == text:
        return "closed already"
    hold = Hold(id=_hold_id(branch), source=Source.ROOM, scope=scope, holder=HOLDER, reason=text,
                created_at=datetime.now(UTC), origin=f"tree closer: {red[0][0]}")
    room_holds.put(rt.redis, hold)
    audit.record(rt.redis, repo, "tree.closed", scope=scope, reason=text)
    republish_scope(rt, scope)
    return f"closed {scope}"


def _open(rt: Runtime, repo: str, branch: str) -> str:
    scope = f"{repo}@{branch}"
    if not room_holds.remove(rt.redis, scope, [_hold_id(branch)]):
        return "open"
    audit.record(rt.redis, repo, "tree.opened", scope=scope)
    republish_scope(rt, scope)
    return f"reopened {scope}"


def _repo(payload: dict[str, Any]) -> str | None:
    name = (payload.get("repository") or {}).get("full_name")
    return str(name) if name else None


def on_status(rt: Runtime, payload: dict[str, Any]) -> str:
    """A commit status: judged for each branch that contains the commit (`branches[]`); it counts on a
    branch only while the commit is that branch's head (`record`), whatever the payload's own reading of
    the heads, which is as old as the event."""
    repo, sha = _repo(payload), str(payload.get("sha", ""))
    red = classify("status", payload.get("state"))
    if repo is None or red is None or payload.get("context") == CONTEXT:
        return "ignored"
    at = from_iso(payload.get("updated_at") or payload.get("created_at")) or datetime.now(UTC)
    branches = sorted({str(b["name"]) for b in payload.get("branches") or [] if isinstance(b, dict) and b.get("name")})
    return "; ".join(record(rt, repo, b, str(payload.get("context")), Result(sha, red, at))
                     for b in branches) or "no branch"


def on_check_run(rt: Runtime, payload: dict[str, Any]) -> str:
    run = payload.get("check_run") or {}
    repo, red = _repo(payload), classify("check", run.get("conclusion"))
    branch = (run.get("check_suite") or {}).get("head_branch")
    if payload.get("action") != "completed" or repo is None or red is None or not branch:
        return "ignored"
    at = from_iso(run.get("completed_at")) or datetime.now(UTC)
    return record(rt, repo, str(branch), str(run.get("name")), Result(str(run.get("head_sha")), red, at))


def on_check_suite(rt: Runtime, payload: dict[str, Any]) -> str:
    """A whole suite, named by its App (slug or name) in `contexts`."""
    suite = payload.get("check_suite") or {}
    repo, red = _repo(payload), classify("check", suite.get("conclusion"))
    branch, app = suite.get("head_branch"), suite.get("app") or {}
    if payload.get("action") != "completed" or repo is None or red is None or not branch:
        return "ignored"
    at = from_iso(suite.get("updated_at")) or datetime.now(UTC)
    outcomes = [record(rt, repo, str(branch), str(name), Result(str(suite.get("head_sha")), red, at))
                for name in {app.get("slug"), app.get("name")} if name]
    return "; ".join(outcomes) or "ignored"
