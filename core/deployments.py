"""Deploys freeze too: merge-hold's answer as a custom deployment protection rule (pure).

GitHub asks the App about a deployment to an environment the App's rule is enabled on
(`deployment_protection_rule`, action `requested`) and waits for an answer on the run's callback. A
freeze covers the deployment when an active freeze window of the repo config freezes the deployed
branch, or an active room hold on the repo, a branch glob of it, or its org applies to that branch. A
PR-scoped hold never covers a deploy (a deploy is not a PR), nor does one scoped by ``paths`` (it stops
merges that change those files; what is deployed has been merged), and exemptions do not apply: they let
one PR through, not whatever is deployed from its base.

The answer is one of: approve at once; wait (GitHub shows a status report on the run, and merge-hold
approves when the freeze lifts); reject at once (`deployments_on_freeze: reject`). An environment not in
`freeze_deployments` is approved at once: the App answers for every environment it is enabled on, and
not answering would leave that deploy waiting for 30 days.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from core.freeze import freeze_holds, next_transition
from core.holds import Hold, Source
from core.repo_config import RepoConfig
from core.scopes import scope_applies
from core.status import cut

APPROVE, WAIT, REJECT = "approved", "waiting", "rejected"
MAX_COMMENT = 1024
"""GitHub's limit on a protection rule's comment and status report (Markdown)."""
MAX_REPORTS = 10
"""GitHub takes at most this many status reports on one deployment."""


@dataclass(frozen=True)
class Decision:
    """What to answer: ``action`` is `APPROVE`, `WAIT` (post ``comment`` as a status report, leave the
    request pending) or `REJECT`; ``holds`` are the freezes that cover the deployment."""

    action: str
    comment: str
    holds: tuple[Hold, ...] = ()


def branch_of(ref: str | None) -> str | None:
    """The deployed branch: ``refs/heads/`` stripped. Any other ref (a tag) is kept whole, so that only a
    freeze on every branch (``*``) or on the whole repo covers it. None: the payload named no ref."""
    if not ref:
        return None
    return ref.removeprefix("refs/heads/")


def covering_holds(config: RepoConfig, repo: str, branch: str | None, scoped: Iterable[Hold],
                   now: datetime) -> list[Hold]:
    """The freezes that cover a deployment of ``branch`` (None: unknown, so every freeze of the repo
    covers it: never approve on doubt). Freeze windows first, then room holds, oldest first."""
    found: list[Hold] = []
    if branch is None:
        for window in config.freeze_windows:
            # A glob matches itself (bar character classes): each window is asked with its own globs.
            single = RepoConfig(freeze_windows=(window,))
            found += next((held for glob in window.branches if (held := freeze_holds(single, repo, glob, (), now))), [])
    else:
        found += freeze_holds(config, repo, branch, (), now)
    room = [h for h in scoped if h.active(now) and "#" not in h.scope
            and (branch is None or scope_applies(h.scope, repo, 0, branch))]
    found += sorted(room, key=lambda h: (h.created_at, h.id))
    # A freeze scoped by path stops the merges that change those files; a deploy changes no files.
    return [h for h in found if not h.paths]


def phrase(hold: Hold) -> str:
    """``frozen by @alice: incident 4711`` (a room hold) or ``frozen by sunday-freeze: …`` (a window)."""
    who = f"@{hold.holder}" if hold.source is Source.ROOM else hold.holder or hold.origin
    return f"frozen by {who}: {hold.reason}" if hold.reason else f"frozen by {who}"


def _frozen(holds: list[Hold]) -> str:
    more = len(holds) - 1
    return phrase(holds[0]) + (f" (+{more} more)" if more else "")


def decide(config: RepoConfig | None, environment: str, branch: str | None, scoped: Iterable[Hold],
           now: datetime, *, repo: str, config_error: str | None = None, waited: bool = False) -> Decision:
    """The answer to a deployment of ``branch`` to ``environment`` at ``now``. ``config`` None (not
    readable, ``config_error`` says why): wait, since nobody can tell whether the environment is frozen.
    ``waited``: the request has been waiting, so an approval says the freeze lifted."""
    if config is None:
        return Decision(WAIT, cut(f"merge-hold cannot read this repo's config ({config_error or 'unknown'}); "
                                  "the deployment waits until it can.", MAX_COMMENT))
    if environment not in config.freeze_deployments:
        return Decision(APPROVE, f"merge-hold does not freeze deployments to {environment}.")
    holds = covering_holds(config, repo, branch, scoped, now)
    where = f"`{branch}`" if branch else "this deployment"
    if not holds:
        said = "The freeze lifted" if waited else f"No freeze covers {where}"
        return Decision(APPROVE, f"{said}: merge-hold approves the deployment to {environment}.")
    if config.deployments_on_freeze == "reject":
        return Decision(REJECT, cut(f"Rejected by merge-hold: {where} is {_frozen(holds)}. Deploy again "
                                    "after the freeze lifts.", MAX_COMMENT), tuple(holds))
    return Decision(WAIT, cut(f"Waiting: {where} is {_frozen(holds)}. merge-hold approves the deployment "
                              f"to {environment} when the freeze lifts.", MAX_COMMENT), tuple(holds))


def next_change(config: RepoConfig | None, holds: Iterable[Hold], now: datetime) -> datetime | None:
    """The next moment a waiting deployment's answer may change by the clock alone: a covering hold's
    expiry or a freeze window's edge (a lift by hand is met by the fan-out that follows it)."""
    moments = [h.expires_at for h in holds if h.expires_at is not None and h.expires_at > now]
    turn = next_transition(config, now) if config is not None else None
    if turn is not None:
        moments.append(turn)
    return min(moments, default=None)
