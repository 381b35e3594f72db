"""The emulated GitHub without its HTTP server: records, seeding and inspection in one object."""

from __future__ import annotations

from tests.emulator.inspection import Inspection
from tests.emulator.seeding import Seeding
from tests.emulator.seeding_rules import RuleSeeding


class World(Seeding, RuleSeeding, Inspection):
    """What route handlers see and what GitHubEmulator (the server) extends."""
