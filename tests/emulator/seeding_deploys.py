"""Seeding and inspection for deployments: environments with the App's custom deployment protection rule,
runs waiting on it, and what the App answered (`routes_deployments` serves them)."""

from __future__ import annotations

from typing import Any

from tests.emulator.deploy_book import Environment, Gate
from tests.emulator.identity import APP_ID
from tests.emulator.state import Store


class DeploymentSeeding(Store):
    def add_environment(self, repo: str, name: str, *, app_id: int | None = APP_ID, enabled: bool = True) -> None:
        """An environment; with ``app_id``, that App's custom deployment protection rule on it."""
        with self.lock:
            found = self.require_repo(repo)
            env = Environment(self.next_id(), found.full_name, name, self.clock())
            if app_id is not None:
                slug = self.app_slug if app_id == APP_ID else f"app-{app_id}"
                env.rules.append({"id": self.next_id(), "enabled": enabled, "app_id": app_id, "slug": slug})
            self.deploys.environments[(found.full_name.lower(), name)] = env

    def request_deployment(self, repo: str, environment: str, *, run_id: int | None = None) -> int:
        """A workflow run's job waits on the environment's protection rule (what precedes GitHub's
        `deployment_protection_rule` delivery); returns the run id."""
        with self.lock:
            found = self.require_repo(repo)
            run = run_id if run_id is not None else self.next_id()
            self.deploys.gates[(found.full_name.lower(), run, environment)] = Gate(found.full_name, run, environment)
            return run

    def gate_state(self, repo: str, run_id: int, environment: str) -> str | None:
        """``waiting``, ``approved`` or ``rejected``; None for a gate never requested."""
        with self.lock:
            gate = self.deploys.gates.get((repo.lower(), run_id, environment))
            return gate.state if gate else None

    def deployment_answers(self, repo: str | None = None) -> list[dict[str, Any]]:
        """Every accepted review call, oldest first (``state`` None: a status report)."""
        with self.lock:
            return [a.as_dict() for a in self.deploys.answers if repo is None or a.repo.lower() == repo.lower()]
