"""Incidents and the tamper watch (design §3, "judged afterwards"): merges judged, answers given, gate
readings."""

from __future__ import annotations

from core.keys.base import PREFIX, repo_prefix


def merge_judged(repo: str, number: int) -> str:
    """Set NX once a merged PR was judged (``incident`` or ``clean``): a redelivered `closed` event, after
    the PR is forgotten, is not judged again."""
    return f"{repo_prefix(repo)}:pr:{number}:merge-judged"


def incident_answered(repo: str, number: int) -> str:
    """Claimed (SET NX) before the one incident comment on a merged PR is posted."""
    return f"{repo_prefix(repo)}:pr:{number}:incident-answered"


def tamper_answered(repo: str, number: int, episode: str) -> str:
    """Claimed before a held PR is told that its base stopped requiring merge-hold: once per episode."""
    return f"{repo_prefix(repo)}:pr:{number}:tamper:{episode}"


def gate_lock(repo: str) -> str:
    """Serialises the tamper watch of one repo: one reading, one comparison, one episode at a time."""
    return f"{repo_prefix(repo)}:gate:lock"


INCIDENTS = f"{PREFIX}:incidents"
"""Hash: ``repo#number`` (lower-cased repo) -> JSON incident (`core.incidents.record`). Global, not under
the repo's hash tag: a record outlives the App leaving the repo, like the audit stream."""


INCIDENT_TIMES = f"{PREFIX}:incidents:by-time"
"""Sorted set of incident ids by the time they were recorded (newest last): the listing's order."""


INCIDENT_COUNTS = f"{PREFIX}:incidents:counts"
"""Hash: incident kind -> how many were recorded (the metric; never decremented)."""


GATES = f"{PREFIX}:gates"
"""Hash: lower-cased repo -> JSON ``{"repo", "branches": {branch: reading}, "suspended"}``: each managed
branch's last gate reading (`core.gate`) and whether the App is suspended there. Global, so a suspension's
banner outlives the repo's dropped keys."""


TAMPER_COUNTS = f"{PREFIX}:tamper:counts"
"""Hash: tamper episode kind (`core.tamper.KINDS`, and ``restored``) -> how many were recorded."""
