"""`merge-hold doctor` in ruleset freeze mode tells each org's freeze mode — one organisation ruleset, or
per-repo rulesets and why (read from GitHub, and as the workers recorded it) — and the rulesets waiting
for GitHub's hourly write window."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import redis

from core import keys
from core.readiness import REQUIRED_EVENTS, required_permissions
from foundation.settings import Settings
from merge_hold import doctor
from tests.emulator import GitHubEmulator
from tests.test_doctor import REPO, by_name, durable_redis, healthy, problems

__all__ = ["durable_redis", "healthy"]  # the fixtures, shared with tests/test_doctor.py

WRITE = {name: level for name, (level, _why) in required_permissions("ruleset").items()}


@pytest.mark.parametrize(("granted", "plan", "detail"), [
    ({**WRITE, "organization_administration": "write"}, True, "org ruleset: 'merge-hold freeze' not created yet"),
    (WRITE, True, "per-repo rulesets: org rulesets unavailable (GitHub answered 403"),
    ({**WRITE, "organization_administration": "write"}, False, "per-repo rulesets: org rulesets unavailable"),
], ids=["org-ruleset", "no-permission", "no-plan"])
def test_doctor_says_which_freeze_mode_an_org_has(healthy: tuple[Settings, GitHubEmulator], granted: dict[str, str],
                                                  plan: bool, detail: str) -> None:
    settings, gh = healthy
    gh.set_app(permissions=WRITE, events=list(REQUIRED_EVENTS))
    gh.set_installation_permissions(7, granted, REQUIRED_EVENTS)
    gh.set_org_rulesets("acme", plan)
    ruled = replace(settings, freeze_mode="ruleset")
    checks = doctor.run(ruled)
    assert problems(checks) == [], doctor.render(checks)
    assert detail in by_name(checks)["acme: freeze mode"].detail
    assert "acme: freeze mode" not in by_name(doctor.run(settings))  # statuses mode: no such line


def test_doctor_tells_what_the_workers_recorded(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, _gh = healthy
    conn = redis.Redis.from_url(str(settings.redis_url))
    conn.set(keys.org_freeze_fallback("globex"), json.dumps({"reason": "org rulesets unavailable (GitHub answered 404"
                                                                       ")", "at": "2026-12-05T22:00:00+00:00"}))
    conn.set(keys.org_freeze_ruleset("acme"), json.dumps({"id": 5, "enforcement": "active", "repos": ["widgets"]}))
    for name in ("acme/a", "acme/b"):
        conn.set(keys.freeze_deferred(name), json.dumps({"until": "2026-12-05T23:17:00+00:00"}))
    for name, state in (("acme/c", "active"), ("acme/d", "active"), ("acme/e", "disabled")):
        conn.set(keys.freeze_ruleset(name), json.dumps({"id": 1, "enforcement": state, "include": ["~ALL"]}))
    checks = by_name(doctor.run(settings))
    assert "per-repo rulesets: org rulesets unavailable (GitHub answered 404)" in checks["globex: freeze mode"].detail
    assert "org ruleset '5' active over 1 repos" in checks["acme: freeze mode"].detail
    waiting = checks["acme: freeze rulesets waiting"].detail
    assert "2 of 4 ruleset(s) bind now; the other 2 by about 23:17 UTC" in waiting and REPO not in waiting
