"""Republish what a change reaches — the one way, whatever changed: a hold placed or lifted on a scope
(chat, API, dashboard, tree closer), the repo config reloaded, the repo renamed.

A PR scope is one recompute. A repo, branch glob or org first rewrites the reached repos' freeze records
(`state.branch_freezes`: what the agent hook reads for a push onto a frozen branch, so it binds at once),
then brings their freeze rulesets in step (`workers.publishing.freeze_sync.sync_scope`: so a ruleset freeze
binds before any per-PR work), then fans out over their open PRs (`workers.publishing.fanout`: listed afresh,
recorded at once, statuses paced most-mergeable first).
"""

from __future__ import annotations

from datetime import UTC, datetime

from core.scopes import scope_repo
from state import branch_freezes
from workers.publishing.fanout import repos_in_scope, request_fanout, request_repo_fanout
from workers.publishing.freeze_sync import sync_scope
from workers.publishing.request import request_recompute
from workers.runtime import Runtime


def republish(rt: Runtime, scope: str, now: datetime | None = None) -> str:
    """Recompute what a change on ``scope`` reaches. Returns what a chat reply says about the freeze
    rulesets ("" when no reached repo freezes through a ruleset)."""
    if "#" in scope:
        repo, _, number = scope.partition("#")
        request_recompute(rt, repo, int(number))
        return ""
    now = now or datetime.now(UTC)
    branch_freezes.publish_all(rt.redis, repos_in_scope(rt.redis, scope), now)
    gate = sync_scope(rt, scope, now)
    if scope_repo(scope) == scope:
        request_repo_fanout(rt, scope)  # as GitHub spells it (a config push, a rename): the statuses' links
    else:
        request_fanout(rt, scope)
    return gate
