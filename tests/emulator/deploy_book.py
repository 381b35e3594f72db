"""What the emulated GitHub knows of environments and custom deployment protection rules (plain records).

A workflow job that deploys to an environment with a custom deployment protection rule waits on a
*gate* per (run, environment) until the rule's App approves or rejects it through
``POST /repos/{o}/{r}/actions/runs/{run_id}/deployment_protection_rule``; status reports (the same call
without ``state``) leave it waiting. Every call that GitHub accepted is kept as an answer, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_REPORTS = 10
"""GitHub takes at most ten status reports on one deployment."""


@dataclass
class Environment:
    id: int
    repo: str
    name: str
    created_at: float
    rules: list[dict[str, Any]] = field(default_factory=list)
    """Custom deployment protection rules: ``{"id", "enabled", "app_id", "slug"}``."""


@dataclass
class Gate:
    repo: str
    run_id: int
    environment: str
    state: str = "waiting"  # "waiting" | "approved" | "rejected"
    reports: int = 0


@dataclass(frozen=True)
class GateAnswer:
    repo: str
    run_id: int
    environment: str
    state: str | None  # None: a status report
    comment: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "run_id": self.run_id, "environment": self.environment, "state": self.state,
                "comment": self.comment}


@dataclass
class DeployBook:
    environments: dict[tuple[str, str], Environment] = field(default_factory=dict)  # (lower repo, name)
    gates: dict[tuple[str, int, str], Gate] = field(default_factory=dict)  # (lower repo, run id, environment)
    answers: list[GateAnswer] = field(default_factory=list)
