"""The emulator's check runs as records (served by `tests.emulator.routes_checks`), a person clicking a
button of one (`ChecksSeeding.click`: the ``check_run`` ``requested_action`` delivery GitHub would send), and
what the Checks tab shows (`ChecksSeeding.check_run_shown`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.emulator import shapes
from tests.emulator.state import Store


@dataclass
class CheckRun:
    id: int
    repo: str
    head_sha: str
    name: str
    suite_id: int
    app_slug: str
    started_at: float
    status: str = "queued"
    conclusion: str | None = None
    completed_at: float | None = None
    output: dict[str, Any] = field(default_factory=dict)
    actions: list[dict[str, str]] = field(default_factory=list)
    details_url: str | None = None
    external_id: str | None = None


class ChecksBook:
    """The runs, and each (repo, sha) pair's suite id."""

    def __init__(self) -> None:
        self.runs: dict[int, CheckRun] = {}
        self.suites: dict[tuple[str, str], int] = {}
        self.deleted = 0


def book(world: Store) -> ChecksBook:
    found = getattr(world, "_checks_book", None)
    if found is None:
        found = ChecksBook()
        world._checks_book = found  # type: ignore[attr-defined]
    return found


class ChecksSeeding(Store):
    """Clicks on requested actions, and what the Checks tab shows."""

    def check_runs(self, repo: str, sha: str, name: str | None = None) -> list[CheckRun]:
        """Every run on ``sha`` (of ``name``), oldest first."""
        with self.lock:
            runs = [r for r in book(self).runs.values() if r.repo.lower() == repo.lower() and r.head_sha == sha]
            return sorted((r for r in runs if name is None or r.name == name), key=lambda r: r.id)

    def check_run_shown(self, repo: str, sha: str, name: str) -> dict[str, Any] | None:
        """What the PR's Checks tab shows for ``name`` on ``sha``: its newest run."""
        runs = self.check_runs(repo, sha, name)
        if not runs:
            return None
        run = runs[-1]
        return {"id": run.id, "status": run.status, "conclusion": run.conclusion, "title": run.output.get("title"),
                "summary": run.output.get("summary"), "buttons": [a["label"] for a in run.actions],
                "identifiers": [a["identifier"] for a in run.actions], "details_url": run.details_url}

    def click(self, repo: str, run_id: int, identifier: str, sender: str, *,
              base: str = "https://api.github.com") -> dict[str, Any]:
        """``sender`` clicks the button ``identifier`` of run ``run_id``: the ``check_run`` ``requested_action``
        delivery GitHub sends the App that owns the run (deliver it with ``X-GitHub-Event: check_run``)."""
        with self.lock:
            run = book(self).runs.get(run_id)
            if run is None or run.repo.lower() != repo.lower():
                raise KeyError(f"no check run {run_id} in {repo}")
            if identifier not in [a["identifier"] for a in run.actions]:
                raise ValueError(f"run {run_id} shows no button {identifier!r}: GitHub has nothing to click")
            from tests.emulator.routes_checks import run_object  # the routes import these records
            from tests.emulator.shapes_pulls import repo_object

            found = self.require_repo(repo)
            world: Any = self
            return {
                "action": "requested_action",
                "check_run": run_object(world, base, run),
                "requested_action": {"identifier": identifier},
                "repository": repo_object(world, base, found.full_name),
                "sender": shapes.user(base, sender),
                "installation": {"id": found.installation_id,
                                 "node_id": shapes.node_id("Installation", found.installation_id)},
            }
