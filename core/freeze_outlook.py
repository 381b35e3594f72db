"""A branch's freeze outlook, pure: frozen now or not, by what, and when that next changes.

What a deploy script or release tool asks (`GET /api/v1/freeze/{owner}/{repo}?branch=B`). It is read off
the one rule that decides whether a branch is frozen, `core.deployments.covering_holds` (freeze windows
of the repo config, and room holds on the repo, a branch glob of it or its org): the rule is asked at
``now`` and again at each later moment it could answer differently — a window's start or end
(`core.freeze.next_transition`, time zones and DST as the windows define them) and a timed hold's
expiry. No second copy of the rules lives here: only the walk through time.

Holds lifted by hand cannot be foreseen: a freeze without an end (an open-ended room hold) has no
``next_thaw_at``. Exemptions let one PR through and never a branch, so they play no part (as for
deployments).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from core.deployments import APPROVE, covering_holds, decide
from core.freeze import next_transition
from core.holds import Hold
from core.repo_config import RepoConfig

LOOKAHEAD = timedelta(days=92)
"""How far ahead the next freeze and thaw are looked for: past the longest timed hold (90 days), and
every window recurs within a week. Nothing found within it: null."""
MAX_STEPS = 4000
"""A bound on the moments visited (a window every minute of the week has ~20,000 edges a quarter; real
configs have a few dozen): the walk stops there and answers null rather than run on."""


@dataclass(frozen=True)
class Outlook:
    frozen: bool
    holds: tuple[Hold, ...]
    """What freezes the branch now (windows first, then room holds, oldest first)."""
    next_freeze_at: datetime | None
    """The next moment after now at which the branch goes from free to frozen."""
    next_thaw_at: datetime | None
    """The next moment after now at which the branch goes from frozen to free (while frozen: when the
    current freeze ends, all its holds counted; else the end of the next freeze)."""


def _moments(config: RepoConfig, holds: list[Hold], now: datetime) -> Iterable[datetime]:
    """Every later moment at which the rule's answer may change, in order, up to `LOOKAHEAD` (a superset
    is harmless: the rule is asked at each)."""
    expiries = sorted({h.expires_at for h in holds if h.expires_at is not None and h.expires_at > now})
    moment, until = now, now + LOOKAHEAD
    for _step in range(MAX_STEPS):
        turn = next_transition(config, moment)
        later = [m for m in (turn, next((e for e in expiries if e > moment), None)) if m is not None]
        if not later or min(later) > until:
            return
        moment = min(later)
        yield moment


def outlook(config: RepoConfig, repo: str, branch: str, scoped: Iterable[Hold], now: datetime) -> Outlook:
    """The branch's outlook at ``now``; ``scoped`` are the room holds of the repo and its org."""
    holds = [h for h in scoped if h.active(now)]
    current = covering_holds(config, repo, branch, holds, now)
    frozen = bool(current)
    next_freeze = next_thaw = None
    state = frozen
    # Only windows on this branch can change its answer: their edges are the moments worth asking at
    # (the rule itself is always asked with the whole config).
    mine = replace(config, freeze_windows=tuple(w for w in config.freeze_windows
                                                if any(fnmatchcase(branch, glob) for glob in w.branches)))
    for moment in _moments(mine, holds, now):
        covered = bool(covering_holds(config, repo, branch, holds, moment))
        if covered == state:
            continue
        state = covered
        if covered and next_freeze is None:
            next_freeze = moment
        elif not covered and next_thaw is None and (frozen or next_freeze is not None):
            next_thaw = moment
        if next_freeze is not None and next_thaw is not None:
            break
    return Outlook(frozen, tuple(current), next_freeze, next_thaw)


def deployments_allowed(config: RepoConfig, repo: str, branch: str, scoped: Iterable[Hold], now: datetime,
                        environment: str | None = None) -> bool:
    """Whether merge-hold would approve a deployment of ``branch`` now (`core.deployments.decide`, the
    protection rule's own answer): to ``environment``, or else to every environment the repo freezes
    (`freeze_deployments`; none listed: merge-hold gates no deployment, so yes)."""
    holds = list(scoped)
    environments = [environment] if environment is not None else list(config.freeze_deployments)
    return all(decide(config, env, branch, holds, now, repo=repo).action == APPROVE for env in environments)
