"""What a push ends (design §3 "Exceptions"): an exemption bound to the head it was granted on, and an
exempt label a maintainer added for an earlier head.

The recompute that first sees the PR on a new head finds it (under the PR's lock, so once): the
exemption is removed from Redis — only if it is still the one that ended, not a grant made meanwhile —
and ``exemption.ended`` is audited (the PR page's history, the API's events, subscribed channels). Then
the grantor is told, by a job of its own (`core.jobs.EXEMPTION_NEWS`, never from the verdict path): in
the chat room the exemption was granted from, or on the PR for an exempt label. A base that moves ends
nothing: the head is what was reviewed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core import jobs, keys
from core.exempt_labels import ended_by_push, exempting_labels
from core.holds import Exemption
from core.prstate import PullState
from core.repo_config import RepoConfig
from state import audit, room_holds
from state.queueing import options
from workers.runtime import Runtime

NEWS_JOB = jobs.EXEMPTION_NEWS.address
MARK_SECONDS = 8 * 24 * 3600
"""An exempt label's end is told once per head; the mark outlives any redelivery or reconcile."""


def _tell(rt: Runtime, repo: str, number: int, news: dict[str, Any]) -> None:
    rt.queue.enqueue(NEWS_JOB, repo, number, news, **options(jobs.EXEMPTION_NEWS),
                     description=f"exemption of {repo}#{number} ended by a push")


def note(rt: Runtime, state: PullState, exemption: Exemption | None, config: RepoConfig | None,
         now: datetime) -> None:
    """End and tell what the PR's new head ends (call under the PR's lock, from its recompute)."""
    repo, number, head = state.repo, state.number, state.head_sha
    if head is None:
        return
    if exemption is not None and exemption.ended_by_push(head, now) and room_holds.end_exemption(
            rt.redis, repo, number, exemption, cause="push", head_sha=head):
        _tell(rt, repo, number, {"kind": "exemption", "by": exemption.by, "reason": exemption.reason,
                                 "granted_head": exemption.head_sha, "head": head, "channel": exemption.channel,
                                 "origin": exemption.origin})
    if config is None or state.facts is None:
        return
    labels = exempting_labels(config)
    for label in ended_by_push(state.grants, state.facts.sure_labels, head):
        if label not in labels or not rt.redis.set(keys.audited(repo, f"label-ended:{number}:{label}:{head}"), "1",
                                                   nx=True, ex=MARK_SECONDS):
            continue
        grant = state.grants[label]
        audit.record(rt.redis, repo, "exemption.ended", number=number, by=grant.by, label=label,
                     reason=f"label {label}", granted_head=grant.head_sha, head_sha=head, cause="push")
        _tell(rt, repo, number, {"kind": "label", "label": label, "by": grant.by, "reason": f"label {label}",
                                 "granted_head": grant.head_sha, "head": head})
