"""Keys of an org's freeze ruleset (one organisation ruleset, ``merge-hold freeze``) and of the pacer's
thaw reserve. Org-wide keys use the hash tag ``{owner}``."""

from __future__ import annotations

from core.keys.base import PREFIX, repo_prefix


def org_freeze_ruleset(org: str) -> str:
    """JSON: the org ruleset as last written to GitHub (``id``, ``enforcement``, ``repos`` (lower-case
    short names it targets), ``include``, ``at``); what `core.org_freeze.org_binds` reads."""
    return f"{PREFIX}:{{{org.lower()}}}:org-freeze-ruleset"


def org_freeze_fallback(org: str) -> str:
    """JSON ``{"reason", "at"}``: the org ruleset could not be written (no Organization administration
    write, or a plan without org rulesets: GitHub's 403/404). The org's freezes use per-repo rulesets
    until an org write succeeds (tried again after `workers.publishing.org_rulesets.RETRY_SECONDS`)."""
    return f"{PREFIX}:{{{org.lower()}}}:org-freeze-fallback"


def freeze_deferred(repo: str) -> str:
    """JSON ``{"at", "until"}``: the repo's ruleset activation waits for GitHub's hourly write window
    (its thaw's write is kept back); a sync is scheduled for ``until``."""
    return f"{repo_prefix(repo)}:freeze-deferred"


def freeze_owed(bucket: str) -> str:
    """Set: the rulesets of an installation (``owner/repo``, or ``org:owner``) recorded ``active``: each
    owes one write to its thaw, which the pacer keeps back from every other write of the hour."""
    return f"{PREFIX}:pace:{bucket}:owed"


def org_freeze_verified(org: str) -> str:
    """Flag: the org ruleset was read back from GitHub lately (a reconcile of each of the org's repos
    verifies it once, not once per repo)."""
    return f"{PREFIX}:{{{org.lower()}}}:org-freeze-verified"


ORG_FREEZE_RULESETS = f"{PREFIX}:{{*}}:org-freeze-ruleset"
"""SCAN pattern for every org's `org_freeze_ruleset` (what `doctor` lists)."""
ORG_FREEZE_FALLBACKS = f"{PREFIX}:{{*}}:org-freeze-fallback"
"""SCAN pattern for every org's `org_freeze_fallback`."""
FREEZES_DEFERRED = f"{PREFIX}:{{*}}:freeze-deferred"
"""SCAN pattern for every repo's `freeze_deferred`."""
REPO_FREEZE_RULESETS = f"{PREFIX}:{{*/*}}:freeze-ruleset"
"""SCAN pattern for every repo's `freeze_ruleset` record."""
