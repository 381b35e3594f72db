"""`pull_request` and `merge_group`: a PR's facts (head, base, draft, labels, open or merged), exempt labels
and who added them (`core.exempt_labels`), the merge judged afterwards, `/hold-for` dependencies closing,
and a merge queue group's commit carrying its PR's verdict."""

from __future__ import annotations

from functools import partial
from typing import Any

from core import keys
from core.events import repo_name
from core.exempt_labels import LabelGrant, exempting_labels
from core.exemptions import Door, label_refused, refusal
from core.holds import to_iso
from core.merge_groups import group_number
from core.permissions import Permission
from core.prstate import Facts
from core.pull_rules import apply_pull_event
from core.repo_config import RepoConfig
from state import audit
from workers.events import holdfor
from workers.events.handler_support import apply_change, first_time, looked_up_permission
from workers.events.incidents import on_closed as judge_merge
from workers.events.pr_replies import post_once
from workers.events.repos import pr_meta
from workers.github.pulls import facts_from_pull
from workers.publishing import after_delivery, checks_requested
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
    grant = _exempt_label(rt, repo, number, payload, config, label, facts) \
        if payload.get("action") in ("labeled", "unlabeled") else None

    hold_label = (label, added) if label == config.hold_label and payload.get("action") in (
        "labeled", "unlabeled") else None
    # The rule itself (`core.pull_rules`), applied under the state's WATCH: no callback of ours in between.
    change = partial(apply_pull_event, facts=facts, opened=fresh, hold_label=hold_label,
                     grant=(label, grant) if grant is not None else None)

    if facts.open:
        rt.redis.sadd(keys.open_prs(repo), number)
    judge_merge(rt, repo, payload, config)  # now: the closing recorded below leads to forgetting its verdict
    changed = apply_change(rt, repo, number, change)
    holdfor.on_dependency_event(rt, repo, number, kind="pull", action=str(payload.get("action")),
                                merged=bool(pull.get("merged")))
    return "applied" if changed else "unchanged"


def _exempt_label(rt: Runtime, repo: str, number: int, payload: dict[str, Any], config: RepoConfig, label: str,
                  facts: Facts) -> LabelGrant | None:
    """An exempt label added or removed: who did it, and whether it counts (`core.exemptions.refusal`: the
    sender needs maintain or admin) — for the head the PR has now. One added by someone with less is
    recorded as not counting, audited, and answered on the PR once."""
    if label not in exempting_labels(config):
        return None
    sender = str((payload.get("sender") or {}).get("login") or "")
    if payload.get("action") != "labeled":
        return LabelGrant(facts.at, False, by=sender)
    permission = looked_up_permission(rt, repo, sender) if sender else Permission.NONE
    refused = refusal(Door.LABEL, permission)
    if refused is not None and first_time(rt, repo, f"label-refused:{number}:{label}:{to_iso(facts.at)}:{sender}"):
        audit.record(rt.redis, repo, "exemption.refused", number=number, label=label, sender=sender,
                     permission=permission.name.lower(), reason=refused)
        if config.feedback != "off":
            marker = keys.answered(repo, f"label-refused:{number}:{label}:{to_iso(facts.at)}:{sender}")
            after_delivery(rt, lambda: post_once(rt, repo, number, marker, label_refused(label, sender)))
    return LabelGrant(facts.at, True, by=sender, trusted=refused is None, head_sha=facts.head_sha)


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
    return checks_requested(rt, repo, group)
