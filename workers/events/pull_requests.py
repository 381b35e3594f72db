"""`pull_request` and `merge_group`: a PR's facts (head, base, draft, labels, open or merged), the merge
judged afterwards, `/hold-for` dependencies closing, and a merge queue group's commit carrying its PR's
verdict."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core import keys
from core.merge_groups import group_number
from core.prstate import PullState, record_facts, record_label
from state import audit
from workers.events import holdfor
from workers.events.changes import apply_change, first_time, pr_meta
from workers.events.incidents import on_closed as judge_merge
from workers.github.pulls import facts_from_pull, repo_name
from workers.publishing import merge_groups
from workers.runtime import Runtime


def on_pull_request(rt: Runtime, payload: dict[str, Any]) -> str:
    """Every action let in (`core.events`) records the facts (a draft goes last on the outbox)."""
    repo = repo_name(payload)
    if repo is None:
        return "ignored"
    pull = payload["pull_request"]
    number = int(pull["number"])
    _, config = pr_meta(rt, repo, payload)
    facts = facts_from_pull(pull)
    # A PR met at its opening has no history to read; any other first sight is synced in `publish`.
    fresh = payload.get("action") == "opened"
    label = str((payload.get("label") or {}).get("name", ""))
    added = payload.get("action") == "labeled"

    def change(state: PullState) -> PullState:
        state = record_facts(replace(state, synced=state.synced or fresh), facts)
        if label == config.hold_label and payload.get("action") in ("labeled", "unlabeled"):
            state = record_label(state, label, facts.at, added)
        return state

    if facts.open:
        rt.redis.sadd(keys.open_prs(repo), number)
    judge_merge(rt, repo, payload, config)  # now: the closing recorded below leads to forgetting its verdict
    changed = apply_change(rt, repo, number, change)
    holdfor.on_dependency_event(rt, repo, number, kind="pull", action=str(payload.get("action")),
                                merged=bool(pull.get("merged")))
    return "applied" if changed else "unchanged"


def on_merge_group(rt: Runtime, payload: dict[str, Any]) -> str:
    """A merge queue group's commit gets its PR's status too (the PR named by the group's branch)."""
    repo = repo_name(payload)
    group = payload.get("merge_group") or {}
    if repo is None or not group.get("head_sha"):  # checks_requested only (`core.events`)
        return "ignored"
    pr_meta(rt, repo, payload)
    queued = group_number(str(group.get("head_ref", "")))
    if queued is not None and first_time(rt, repo, f"queued:{group['head_sha']}") and rt.redis.sismember(
            keys.held_prs(repo), str(queued)):  # news for chat channels, once per group
        audit.record(rt.redis, repo, "pr.queued", number=queued)
    return merge_groups.checks_requested(rt, repo, group)
