"""`merge-hold doctor` on the check run's permission (issue 29): an App without Checks: write is told once,
with what it costs (the status alone) and where to grant it; one that has it says nothing of it."""

from __future__ import annotations

from foundation.settings import Settings
from merge_hold import doctor
from tests.emulator import GitHubEmulator
from tests.test_doctor import FULL, durable_redis, healthy, problems  # noqa: F401  (fixtures)

OLD = {**FULL, "checks": "read"}
"""An App registered before the check run: Checks: read (the tree closer's)."""


def test_without_checks_write_doctor_says_so_once(healthy: tuple[Settings, GitHubEmulator]) -> None:  # noqa: F811
    settings, gh = healthy
    gh.set_app(permissions=OLD)
    gh.set_installation_permissions(7, OLD)
    checks = doctor.run(settings)
    text = doctor.render(checks)
    lines = [line for line in text.splitlines() if "Checks: write" in line]
    assert len(lines) == 1, text
    assert "app permissions" in lines[0] and "the status alone" in lines[0]
    assert problems(checks) == ["app permissions"]


def test_with_checks_write_nothing_is_said_of_it(healthy: tuple[Settings, GitHubEmulator]) -> None:  # noqa: F811
    settings, _gh = healthy
    text = doctor.render(doctor.run(settings))
    assert "Checks: write" not in text and "problem" not in text


def test_an_installation_that_has_not_accepted_it_is_told(healthy: tuple[Settings, GitHubEmulator]) -> None:  # noqa: F811
    settings, gh = healthy
    gh.set_installation_permissions(7, OLD)
    checks = doctor.run(settings)
    assert problems(checks) == ["acme: permissions"], doctor.render(checks)
