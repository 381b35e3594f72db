"""The heads of the branches a tree closer watches: a CI result counts only on its branch's head.

Heads come from `push` events, ordered by `core.treecloser.after_push` whatever order the deliveries
arrive in, and are kept only for branches a `close_on_failure` rule covers (`core.keys.branch_heads`).
When the head is unknown, or a result names another commit, GitHub is asked
(`GET /repos/{o}/{r}/branches/{b}`, Contents: read): the head may have moved by a push whose delivery is
still queued behind the result, and a result must not be thrown away on a stale reading. A result that
is still not on the head is *late* — parallel CI finishing on the previous head, a fork's branch that is
also called `main` — and is recorded in the audit log (`tree.late`) and changes nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from core import keys
from core.treecloser import Head, Result, TreeRule, after_push
from state import audit
from state.decoding import as_text
from workers.github.gateway import NotFound
from workers.runtime import Runtime

ZERO_SHA = "0" * 40
LATE_AUDIT_TTL = 3 * 24 * 3600
"""As long as GitHub may redeliver the result's event: a redelivered late result is recorded once."""


def known(rt: Runtime, repo: str, branch: str) -> Head | None:
    raw = rt.redis.hget(keys.branch_heads(repo), branch)
    return Head.from_dict(json.loads(as_text(raw))) if raw is not None else None


def forget(rt: Runtime, repo: str, branch: str) -> None:
    """A deleted branch: its results change nothing until it is pushed again."""
    rt.redis.hdel(keys.branch_heads(repo), branch)


def pushed_at(payload: dict[str, Any]) -> datetime | None:
    """When GitHub took the push: `repository.pushed_at`, epoch seconds in `push` events."""
    value = (payload.get("repository") or {}).get("pushed_at")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return datetime.fromtimestamp(value, UTC)


def on_push(rt: Runtime, repo: str, payload: dict[str, Any], rules: tuple[TreeRule, ...]) -> str:
    """Follow a branch's head from a `push` event, for branches a tree rule covers."""
    ref = str(payload.get("ref", ""))
    branch = ref.removeprefix("refs/heads/")
    if not ref.startswith("refs/heads/") or not any(rule.covers(branch) for rule in rules):
        return "not watched"
    before, after = str(payload.get("before", "")), str(payload.get("after", ""))
    key = keys.branch_heads(repo)
    with rt.redis.lock(keys.branch_heads_lock(repo), timeout=10, blocking_timeout=10):
        if after == ZERO_SHA:
            rt.redis.hdel(key, branch)
            return f"{branch} deleted"
        head = after_push(known(rt, repo, branch), before, after, pushed_at(payload))
        if head is None:
            rt.redis.hdel(key, branch)  # two pushes of one second: the next result asks GitHub
            return f"{branch} head unknown"
        rt.redis.hset(key, branch, json.dumps(head.to_dict()))
        return f"{branch} at {head.sha[:7]}"


def ask(rt: Runtime, repo: str, branch: str) -> Head | None:
    """The head as GitHub has it now, remembered; None when GitHub cannot be asked (a dry run) or the
    branch is gone (then its results change nothing)."""
    try:
        sha = rt.github.branch_head(repo, branch)
    except NotFound:
        rt.redis.hdel(keys.branch_heads(repo), branch)
        return Head("")
    if sha is None:
        return None
    head = Head(sha, datetime.now(UTC))
    rt.redis.hset(keys.branch_heads(repo), branch, json.dumps(head.to_dict()))
    return head


def head_for(rt: Runtime, repo: str, branch: str, result: Result) -> Head | None:
    """The branch's head to judge ``result`` by: the known one when the result is on it, else GitHub's
    (`ask`). None: not known and not askable."""
    head = known(rt, repo, branch)
    if head is not None and head.sha == result.sha:
        return head
    return ask(rt, repo, branch)


def record_late(rt: Runtime, repo: str, branch: str, context: str, result: Result, head: Head | None) -> str:
    """Audit a result that is not on the branch's head, once per (context, commit, outcome, time)."""
    item = f"tree-late:{branch}:{context}:{result.sha}:{int(result.red)}:{result.at.isoformat()}"
    if rt.redis.set(keys.audited(repo, item), "1", nx=True, ex=LATE_AUDIT_TTL):
        audit.record(rt.redis, repo, "tree.late", scope=f"{repo}@{branch}", context=context, sha=result.sha,
                    head=head.sha if head is not None and head.sha else None,
                    result="red" if result.red else "green", at=result.at.isoformat())
    shown = head.sha[:7] if head is not None and head.sha else "unknown"
    return f"late: {result.sha[:7]} is not the head of {branch} ({shown})"
