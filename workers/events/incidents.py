"""Incidents: a merged PR judged against what merge-hold said when the merge was reported (`core.incidents`).

Called by the `pull_request` handler for ``closed`` with ``merged: true`` *before* it records the
closing, since the closed PR's verdict record and last posted status are forgotten by the recompute
that follows (history is kept). Judged once per PR: a redelivered `closed` event finds the PR judged
(`core.keys.merge_judged`) and only finishes what a failed first run left (the comment). When our last
post is not on the merged head (a push just before the merge, state lost), the head's statuses are read
from GitHub; if they cannot be read, the merge is an incident of kind ``undetermined``, never clean.

An incident is stored (`state.incidents`), audited as ``incident.recorded`` (subscribed chat channels
hear it, `core.notices`), answered with one comment on the PR naming the holders (not with repo config
``feedback: off``), listed at ``/incidents`` and ``/api/v1/incidents``, and counted in ``/metrics``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from core import keys
from core.incidents import (
    Merge,
    comment,
    last_status_from_github,
    last_status_from_posted,
    merge_of,
    reasons,
    record,
)
from core.repo_config import RepoConfig
from core.status import CONTEXT
from state import audit, incidents, posted_status, store
from workers.events.pr_replies import post_once
from workers.publishing import after_delivery
from workers.runtime import Runtime


def _last_status(rt: Runtime, merge: Merge) -> tuple[dict[str, Any] | None, str | None]:
    """The last `merge-hold` status on the merged head, and why it could not be read (None if it could)."""
    bot = rt.bot_login
    found = last_status_from_posted(posted_status.on_pr(rt.redis, merge.repo, merge.number), merge.head_sha, bot)
    if found is not None:
        return found, None
    if not merge.head_sha:
        return None, "the event names no head commit"
    status, body = rt.github.get_answer(merge.repo, f"/repos/{merge.repo}/commits/{merge.head_sha}/statuses",
                                        {"per_page": 100})
    if status != 200 or not isinstance(body, list):
        message = body.get("message") if isinstance(body, dict) else ""
        return None, f"GitHub answered {status}{': ' + str(message) if message else ''}"
    return last_status_from_github(body, merge.head_sha, CONTEXT, bot), None


def on_closed(rt: Runtime, repo: str, payload: dict[str, Any], config: RepoConfig) -> str | None:
    """Judge a merge (None when the delivery reports none). Call before the closing is recorded."""
    merge = merge_of(repo, payload)
    if merge is None:
        return None
    ident = f"{repo.lower()}#{merge.number}"
    if incidents.was_judged(rt.redis, repo, merge.number):
        existing = incidents.load(rt.redis, ident)
        if existing is not None and existing.get("comment") == "pending":
            after_delivery(rt, lambda: answer(rt, existing, config))  # a failed first run's comment
        return "judged already"
    verdict = store.load_verdict(rt.redis, repo, merge.number)
    last, unreadable = _last_status(rt, merge)
    found = reasons(verdict, last, status_unreadable=unreadable)
    if not found:
        incidents.mark_judged(rt.redis, repo, merge.number, "clean")
        return "merged clean"
    incident = record(merge, verdict, last, found,
                      recorded_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                      forgeries=incidents.forgeries(rt.redis, repo, merge.number),
                      hook_records=incidents.hook_records(rt.redis, repo, merge.number))
    if incidents.save(rt.redis, incident, time.time()):
        audit.record(rt.redis, repo, "incident.recorded", number=merge.number, merged_by=merge.merged_by,
                    kinds=incident["kinds"], reason=found[0][1])
    incidents.mark_judged(rt.redis, repo, merge.number, "incident")
    stored = incidents.load(rt.redis, ident) or incident
    if stored.get("comment") == "pending":
        after_delivery(rt, lambda: answer(rt, stored, config))
    return f"incident ({', '.join(incident['kinds'])})"


def answer(rt: Runtime, incident: dict[str, Any], config: RepoConfig) -> str:
    """The one comment on the merged PR (none with ``feedback: off``); its outcome is kept on the record."""
    repo, number, ident = str(incident["repo"]), int(incident["number"]), str(incident["id"])
    if config.feedback == "off":
        incidents.note_comment(rt.redis, ident, "off")
        return "off"
    outcome = post_once(rt, repo, number, keys.incident_answered(repo, number),
                        comment(incident, rt.settings.public_url))
    if outcome != "answered already":
        incidents.note_comment(rt.redis, ident, outcome)
    return outcome
