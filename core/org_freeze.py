"""An org freeze through one organisation ruleset (``freeze_mode: ruleset`` where GitHub offers it), as
pure rules (design §3 "Freeze modes").

Per repository, a freeze is merge-hold's own repository ruleset (`core.freeze_gate`): one write per repo
each way, so an org of 240 repos needs 240 writes — three of GitHub's minutes — to bind. Where the App
has ``organization_administration: write`` and the plan has organisation rulesets (GitHub Enterprise
Cloud), a room hold on the whole org is instead *one* organisation ruleset, also named `RULESET_NAME`:
it targets the org's managed repositories in ruleset mode by name (``conditions.repository_name``),
every branch (``conditions.ref_name`` ``~ALL``), requires `FREEZE_CONTEXT` from this App, and has no
bypass actors. A freeze activates it and a thaw disables it: one write each, whatever the org's size.
Repo- and branch-scoped freezes and freeze windows keep their per-repo rulesets.

What this module decides: whether an org hold is active (`org_frozen`), the ruleset's body
(`org_ruleset_body`), whether the recorded org ruleset binds a PR (`org_binds`), whether the record is
what the holds ask for (`org_in_step`), and which holds the per-repo ruleset still carries
(`without_org_holds`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from core.freeze_gate import ALL, FREEZE_CONTEXT, RULESET_NAME, is_freeze_hold
from core.holds import Hold

ORG_SOURCE = "Organization"


def org_of(repo: str) -> str:
    return repo.split("/", 1)[0].lower()


def is_org_hold(hold: Hold, org: str) -> bool:
    """A freeze hold on the whole org (not a repo, branch, PR or path)."""
    return is_freeze_hold(hold) and hold.scope.lower() == org.lower()


def org_frozen(org: str, holds: Iterable[Hold], now: datetime) -> bool:
    return any(is_org_hold(h, org) and h.active(now) for h in holds)


def without_org_holds(holds: Iterable[Hold], org: str) -> list[Hold]:
    """The holds a repo's own ruleset carries while the org ruleset carries the org's."""
    return [h for h in holds if not is_org_hold(h, org)]


def short_names(repos: Iterable[str]) -> list[str]:
    """``owner/name`` -> ``name``, lower-cased, sorted (the ruleset's ``repository_name`` include)."""
    return sorted({r.split("/", 1)[1].lower() for r in repos if "/" in r})


def org_ruleset_body(repos: Iterable[str], active: bool, app_id: int) -> dict[str, Any]:
    """The whole org ruleset, as ``POST``/``PUT /orgs/{org}/rulesets`` take it: the named repositories,
    every branch, `FREEZE_CONTEXT` required from this App, no bypass actors. GitHub wants a repository
    target even when disabled: with no repo in ruleset mode left, the include list is empty."""
    return {
        "name": RULESET_NAME,
        "target": "branch",
        "enforcement": "active" if active else "disabled",
        "bypass_actors": [],
        "conditions": {"repository_name": {"include": short_names(repos), "exclude": [], "protected": False},
                       "ref_name": {"include": [ALL], "exclude": []}},
        "rules": [{"type": "required_status_checks", "parameters": {
            "strict_required_status_checks_policy": False,
            "do_not_enforce_on_create": False,
            "required_status_checks": [{"context": FREEZE_CONTEXT, "integration_id": app_id}],
        }}],
    }


def org_binds(record: dict[str, Any] | None, repo: str, base: str | None) -> bool:
    """Whether the recorded org ruleset (`core.keys.org_freeze_ruleset`) blocks a PR of ``repo`` on
    ``base`` without a `FREEZE_CONTEXT` success."""
    if not record or record.get("enforcement") != "active" or base is None:
        return False
    return repo.split("/", 1)[-1].lower() in (record.get("repos") or ())


def org_in_step(record: dict[str, Any] | None, repos: Iterable[str], active: bool) -> bool:
    """The recorded org ruleset already is what the holds ask for (never created counts as disabled;
    a disabled one need not follow the repos)."""
    if not active:
        return record is None or record.get("enforcement") != "active"
    return record is not None and record.get("enforcement") == "active" \
        and list(record.get("repos") or ()) == short_names(repos)


def drifted(found: dict[str, Any], record: dict[str, Any]) -> bool:
    """GitHub's org ruleset (``GET /orgs/{org}/rulesets/{id}``) is not what we recorded: disabled or
    enabled by someone, its repositories or branches changed, a bypass actor added."""
    conditions = found.get("conditions") or {}
    names = sorted(str(n).lower() for n in (conditions.get("repository_name") or {}).get("include", ()))
    refs = list((conditions.get("ref_name") or {}).get("include", ()))
    if found.get("enforcement") != record.get("enforcement"):
        return True
    return record.get("enforcement") == "active" and (
        names != list(record.get("repos") or ()) or refs != [ALL] or bool(found.get("bypass_actors")))
