"""One write of a merge-hold ruleset, a repository's (`freeze_rulesets`) or an organisation's
(`org_rulesets`): PUT it by the id we recorded, or create it; when the id went stale (someone deleted it:
404; or a run that died created it: 422 on the create), find ours by name and write once more.

Paced as a gate: at once within GitHub's windows (a reserve of both is the gates'), since one write decides
for a whole repository or organisation; an activation keeps back its thaw's write of the hour, and beyond
``max_wait`` raises `workers.publishing.pacing.SlotTooFar` (the caller schedules it instead).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workers.publishing.pacing import GATE, Pacer, rate_limit_wait
from workers.runtime import Runtime


def write_ruleset(rt: Runtime, pacer: Pacer, via: str, collection: str, ruleset_id: int | None,
                  body: dict[str, Any], *, activation: bool, max_wait: float,
                  find: Callable[[], int | None]) -> tuple[int, Any]:
    """Write ``body`` to ``collection`` (``/repos/o/r/rulesets`` or ``/orgs/o/rulesets``) through the
    installation of ``via``; returns GitHub's status and answer."""
    if ruleset_id is None:
        ruleset_id = find()
    status, answer = 0, None
    for attempt in range(2):
        method, path = ("PUT", f"{collection}/{ruleset_id}") if ruleset_id else ("POST", collection)
        pacer.acquire(max_wait if activation else None, priority=GATE, binds=activation)
        try:
            status, answer = rt.github.send(via, method, path, body)
        except Exception as exc:
            wait = rate_limit_wait(exc)
            if wait is not None:
                pacer.pause(wait)
            raise
        stale = (status == 404 and ruleset_id) or (status == 422 and not ruleset_id)
        if not stale or attempt:
            return status, answer
        ruleset_id = find()  # deleted by someone (404: created anew), or created by a run that died (422)
    return status, answer
