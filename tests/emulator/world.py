"""The emulated GitHub without its HTTP server: records, seeding and inspection in one object."""

from __future__ import annotations

from tests.emulator.inspection import Inspection
from tests.emulator.org_plans import OrgPlanSeeding
from tests.emulator.seeding import Seeding
from tests.emulator.seeding_checks import ChecksSeeding
from tests.emulator.seeding_deploys import DeploymentSeeding
from tests.emulator.seeding_rules import RuleSeeding
from tests.emulator.seeding_watch import WatchSeeding


class World(Seeding, RuleSeeding, WatchSeeding, DeploymentSeeding, OrgPlanSeeding, ChecksSeeding,
            Inspection):
    """What route handlers see and what GitHubEmulator (the server) extends."""
