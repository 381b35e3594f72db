"""A freeze through a ruleset (``freeze_mode: ruleset``, design §3 "Freeze modes"), as pure rules.

In ``statuses`` mode a room hold on a repo, a branch or an org, or a freeze window, is carried by every
PR's ``merge-hold`` status: one write per PR, paced, so an org of thousands of PRs stays mergeable for
hours. In ``ruleset`` mode merge-hold keeps one ruleset of its own per repository, `RULESET_NAME`,
targeting the frozen branches and requiring the status `FREEZE_CONTEXT` from this App. A freeze sets it
``active``, a thaw ``disabled``: one write per repository, and every PR on a frozen branch is blocked
at once because it carries no `FREEZE_CONTEXT` status. What this module decides:

- the ruleset a repo needs (`wanted_include`, `ruleset_body`): the include list of ``refs/heads/…``
  patterns, from the same holds and windows the verdict reads, ignoring labels and exemptions (those
  are per PR, and reach GitHub as a `FREEZE_CONTEXT` success on the PR's head) and holds scoped by
  ``paths`` (a ruleset cannot tell which PRs change which files: those stay on the per-PR status);
- whether a recorded ruleset binds a PR's base (`binds`); only then does the PR's ``merge-hold`` status
  leave the freeze holds out (`per_pr_verdict`) — never before the ruleset is known to be active, so a
  ruleset write that failed or has not happened yet leaves the freeze on the statuses;
- the `FREEZE_CONTEXT` status a bound PR should show (`freeze_mark`): ``success`` when it is exempt
  (it must pass the ruleset), else ``failure`` with the freeze's reason for people to read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from core.freeze import active_interval
from core.holds import Hold, Source
from core.repo_config import RepoConfig
from core.status import cut, hold_phrase
from core.verdict import Verdict

RULESET_NAME = "merge-hold freeze"
PATHS_NOTE = ("a freeze scoped by paths goes through each PR's merge-hold status: a ruleset cannot require "
              "a status of the PRs that change some files")
"""Said wherever ruleset mode is reported (`merge-hold doctor`, the chat reply to a path-scoped hold)."""
FREEZE_CONTEXT = "merge-hold/freeze"
ALL = "~ALL"
"""GitHub's pattern for every branch."""


def is_freeze_hold(hold: Hold) -> bool:
    """A hold the ruleset can carry: a freeze window, or a room hold on a repo, a branch glob or an org
    (the tree closer's holds are branch room holds too). A PR-scoped room hold stays on the PR, and so
    does a hold scoped by path: a ruleset cannot require a status of the PRs that change some files, so
    such a freeze is carried by each PR's ``merge-hold`` status in every mode."""
    if hold.paths:
        return False
    return hold.source == Source.FREEZE or (hold.source == Source.ROOM and "#" not in hold.scope)


def is_freeze_record_hold(hold: dict[str, Any]) -> bool:
    """`is_freeze_hold` for a hold as a verdict record stores it."""
    scope = str(hold.get("scope") or "")
    if hold.get("paths"):
        return False
    return hold.get("source") == Source.FREEZE.value or (hold.get("source") == Source.ROOM.value and "#" not in scope)


def branch_pattern(glob: str) -> str:
    """merge-hold's branch glob as a GitHub ref pattern. Our ``*`` matches across ``/`` (fnmatch) and
    GitHub's does not, so ``*`` becomes ``**``: the ruleset may bind more branches, never fewer."""
    if glob in ("*", "**"):
        return ALL
    return "refs/heads/" + re.sub(r"\*+", "**", glob)


def ref_pattern_matches(pattern: str, branch: str) -> bool:
    """GitHub's reading of one include pattern, for the patterns `branch_pattern` makes."""
    if pattern == ALL:
        return True
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else "[^/]" if part == "?"
                    else re.escape(part) for part in re.split(r"(\*\*|\*|\?)", pattern))
    return re.fullmatch(regex, f"refs/heads/{branch}") is not None


def wanted_include(repo: str, config: RepoConfig | None, scoped_holds: Iterable[Hold],
                   now: datetime) -> tuple[str, ...]:
    """The ref patterns the repo's ruleset must target now; empty: no freeze, the ruleset disabled."""
    patterns: list[str] = []
    owner = repo.split("/", 1)[0].lower()
    for hold in scoped_holds:
        if not is_freeze_hold(hold) or not hold.active(now):
            continue
        scope = hold.scope.lower()
        if scope in (repo.lower(), owner):
            patterns.append(ALL)
        elif "@" in hold.scope and scope.partition("@")[0] == repo.lower():
            patterns.append(branch_pattern(hold.scope.partition("@")[2]))
    for window in config.freeze_windows if config is not None else ():
        if not window.paths and active_interval(window, now) is not None:
            patterns += [branch_pattern(g) for g in window.branches]
    if ALL in patterns:
        return (ALL,)
    return tuple(sorted(set(patterns)))


def binds(record: dict[str, Any] | None, base: str | None) -> bool:
    """Whether the recorded state of the repo's ruleset (`core.keys.freeze_ruleset`) blocks a PR on
    ``base`` without a `FREEZE_CONTEXT` success."""
    if not record or record.get("enforcement") != "active" or base is None:
        return False
    return any(ref_pattern_matches(p, base) for p in record.get("include", ()))


def per_pr_verdict(verdict: Verdict, bound: bool) -> Verdict:
    """The verdict the ``merge-hold`` status carries: without the freeze holds when the ruleset binds
    the PR (the ruleset blocks it, and a thaw then needs no per-PR write)."""
    if not bound or verdict.error is not None:
        return verdict
    return replace(verdict, holds=tuple(h for h in verdict.holds if not is_freeze_hold(h)))


def freeze_mark(verdict: Verdict, bound: bool, exempt_reason: str | None) -> dict[str, str] | None:
    """The `FREEZE_CONTEXT` status a PR bound by the ruleset should show; None when not bound."""
    if not bound or verdict.error is not None or verdict.head_sha is None:
        return None
    frozen = [h for h in verdict.holds if is_freeze_hold(h)]
    if frozen:
        more = len(frozen) - 1
        return {"state": "failure", "context": FREEZE_CONTEXT,
                "description": cut(hold_phrase(frozen[0]), suffix=f" (+{more} more)" if more else "")}
    # Bound but not frozen: exempt, or on a branch the ruleset reaches and the hold does not (our `*`
    # became `**`), or thawed while the ruleset could not be disabled (a lost permission): let it through.
    return {"state": "success", "context": FREEZE_CONTEXT,
            "description": cut(f"Exempt from the freeze: {exempt_reason}" if exempt_reason
                               else "No freeze holds this PR")}


def ruleset_body(include: tuple[str, ...], app_id: int) -> dict[str, Any]:
    """The whole ruleset, as ``POST``/``PUT …/rulesets`` take it. No bypass actors: an admin merging
    through a freeze is an incident, not a feature. Disabled when nothing is frozen (the include list
    then keeps the default branch, since GitHub wants a target)."""
    return {
        "name": RULESET_NAME,
        "target": "branch",
        "enforcement": "active" if include else "disabled",
        "bypass_actors": [],
        "conditions": {"ref_name": {"include": list(include) or ["~DEFAULT_BRANCH"], "exclude": []}},
        "rules": [{"type": "required_status_checks", "parameters": {
            "strict_required_status_checks_policy": False,
            "do_not_enforce_on_create": False,
            "required_status_checks": [{"context": FREEZE_CONTEXT, "integration_id": app_id}],
        }}],
    }
