"""Organisation rulesets by plan and account: where ``/orgs/{org}/rulesets`` answers at all.

GitHub offers organisation rulesets to organisations on plans that have them (GitHub Enterprise
Cloud; an org without them is refused with 403 and an upgrade message), never to a personal account
(``/orgs/{user}/…`` is 404, as is an org the calling installation is not installed on), and only to
an installation with Organization administration (403 otherwise, `tests.emulator.routes_rulesets`).
An org ruleset must name the repositories it targets (``repository_name``, ``repository_id`` or
``repository_property``): 422 otherwise.
"""

from __future__ import annotations

from typing import Any

from tests.emulator.state import Store
from tests.emulator.wire import Request, Response, error, not_found, validation_failed

UPGRADE = "Upgrade to GitHub Enterprise to enable this feature."
DOCS = "https://docs.github.com/rest/orgs/rules#create-an-organization-repository-ruleset"
TARGETS = ("repository_name", "repository_id", "repository_property")


class OrgPlanSeeding(Store):
    def set_org_rulesets(self, org: str, available: bool) -> None:
        """Whether ``org``'s plan has organisation rulesets (default: it has)."""
        with self.lock:
            without: set[str] = getattr(self, "orgs_without_rulesets", set())
            (without.discard if available else without.add)(org.lower())
            self.orgs_without_rulesets = without


def org_refusal(world: Store, req: Request) -> Response | None:
    """GitHub's answer when the calling installation cannot reach ``req``'s org rulesets at all."""
    org = req.params["org"].lower()
    inst = world.installations.get(req.principal.installation_id or -1)
    if inst is None or inst.account_login.lower() != org or inst.account_type != "Organization":
        return not_found()
    if org in getattr(world, "orgs_without_rulesets", set()):
        return error(403, UPGRADE, DOCS)
    return None


def org_targets_invalid(body: Any) -> Response | None:
    """An org ruleset created without naming its repositories."""
    conditions = body.get("conditions") if isinstance(body, dict) else None
    if not isinstance(conditions, dict) or not any(isinstance(conditions.get(t), dict) for t in TARGETS):
        return validation_failed("Ruleset", "conditions", "Invalid target patterns: repository conditions required",
                                 DOCS)
    return None
