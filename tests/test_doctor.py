"""`merge-hold doctor` against the GitHub emulator over HTTP and real Redis servers."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from rq import Queue, Worker
from rq.job import JobStatus
from rq.registry import FailedJobRegistry

from core import keys
from core.readiness import REQUIRED_EVENTS, REQUIRED_PERMISSIONS
from foundation.settings import Settings
from merge_hold import doctor
from merge_hold.doctor_github import Check
from merge_hold.redis_server import LocalRedis
from tests.emulator import GitHubEmulator
from tests.emulator.identity import APP_ID, DEFAULT_SLUG, private_key_pem

REPO = "acme/widgets"
FULL = {name: level for name, (level, _why) in REQUIRED_PERMISSIONS.items()}


@pytest.fixture(scope="module")
def durable_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis configured as production should be: append-only, noeviction (the default policy)."""
    server = LocalRedis(tmp_path_factory.mktemp("doctor-redis"), persist=True).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture()
def healthy(durable_redis: str, github_emulator: GitHubEmulator) -> Iterator[tuple[Settings, GitHubEmulator]]:
    """Everything right: the App asks for what it needs, the repo requires merge-hold from this App, a
    worker listens and merge-hold tracks the repo. Tests break one thing each."""
    conn = redis.Redis.from_url(durable_redis)
    conn.flushdb()
    gh = github_emulator
    gh.set_app(permissions=FULL, events=list(REQUIRED_EVENTS))
    gh.add_installation(7, "acme")
    gh.set_installation_permissions(7, FULL, REQUIRED_EVENTS)
    gh.add_repo(REPO, installation_id=7)
    gh.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID), ("ci/build", None)])
    conn.set(keys.repo_meta(REPO), json.dumps({"installation_id": 7}))
    worker = Worker([Queue("merge-hold", connection=conn)], connection=conn)
    worker.register_birth()  # type: ignore[no-untyped-call]
    settings = Settings(redis_url=durable_redis, github_app_id=APP_ID, github_private_key=private_key_pem(),
                        github_webhook_secret="s3cret", github_api_url=gh.url, app_slug=DEFAULT_SLUG)
    yield settings, gh
    worker.register_death()  # type: ignore[no-untyped-call]
    conn.flushdb()
    conn.close()


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def problems(checks: list[Check]) -> list[str]:
    return [c.name for c in checks if not c.ok]


def test_healthy_deployment_has_no_problem(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, _gh = healthy
    checks = doctor.run(settings)
    assert problems(checks) == [], doctor.render(checks)
    gate = by_name(checks)[f"{REPO}: gate"]
    assert "from this App (branch protection)" in gate.detail


def _unpinned_protection(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.protect_branch(REPO, "main", checks=[("merge-hold", None)])


def _legacy_context(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.protect_branch(REPO, "main", contexts=["merge-hold"])


def _other_app(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.protect_branch(REPO, "main", checks=[("merge-hold", 15368)])  # GitHub Actions' app id


def _nothing_required(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.protect_branch(REPO, "main", checks=[("ci/build", None)])


def _ruleset_pinned(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.require_check_in_ruleset(REPO, "main", integration_id=APP_ID)


def _ruleset_any_source(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.require_check_in_ruleset(REPO, "main", integration_id=None)


def _ruleset_pinned_beside_unpinned_protection(gh: GitHubEmulator) -> None:
    _unpinned_protection(gh)
    gh.require_check_in_ruleset(REPO, "main", integration_id=APP_ID)


def _other_branch_pinned(gh: GitHubEmulator) -> None:
    gh.protections.clear()
    gh.protect_branch(REPO, "develop", checks=[("merge-hold", APP_ID)])


GATE_ROWS: list[tuple[str, Callable[[GitHubEmulator], None], bool, str]] = [
    ("unpinned check", _unpinned_protection, False, "any source"),
    ("legacy context list", _legacy_context, False, "any source"),
    ("another App's check", _other_app, False, "App 15368"),
    ("only other checks", _nothing_required, False, "nothing on main requires merge-hold"),
    ("ruleset pinned", _ruleset_pinned, True, "from this App (ruleset"),
    ("ruleset any source", _ruleset_any_source, False, "any source"),
    ("ruleset pinned, protection loose", _ruleset_pinned_beside_unpinned_protection, True, "ruleset"),
    ("pinned on another branch only", _other_branch_pinned, False, "nothing on main"),
]


@pytest.mark.parametrize(("name", "arrange", "ok", "said"), GATE_ROWS, ids=[r[0] for r in GATE_ROWS])
def test_gate_requires_merge_hold_from_this_app(healthy: tuple[Settings, GitHubEmulator], name: str,
                                                arrange: Callable[[GitHubEmulator], None], ok: bool,
                                                said: str) -> None:
    settings, gh = healthy
    arrange(gh)
    gate = by_name(doctor.run(settings))[f"{REPO}: gate"]
    assert gate.ok is ok, gate
    assert said in gate.detail
    if not ok:
        assert str(APP_ID) in gate.fix


def test_refused_reads_name_the_permission_that_would_show_them(
        healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.set_installation_permissions(7, {"statuses": "write", "issues": "write"})
    checks = doctor.run(settings)
    gate = by_name(checks)[f"{REPO}: gate"]
    assert not gate.ok
    assert "Contents: read" in gate.detail and "Metadata: read" in gate.detail
    assert "403" in gate.detail
    assert not by_name(checks)["acme: permissions"].ok
    # Least permission: the classic protection endpoint (Administration) is never asked.
    assert gh.count("GET", r"/branches/main/protection$") == 0


def test_rules_refused_but_protection_pinned_is_ok_and_says_what_it_missed(
        healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.inject("GET", r"/rules/branches/", 404, times=None)
    gate = by_name(doctor.run(settings))[f"{REPO}: gate"]
    assert gate.ok
    assert "Metadata: read" in gate.detail


def test_merge_queue_needs_merge_group_events(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.enable_merge_queue(REPO, "main")
    assert by_name(doctor.run(settings))[f"{REPO}: merge queue"].ok
    gh.set_app(events=[e for e in REQUIRED_EVENTS if e != "merge_group"])
    checks = by_name(doctor.run(settings))
    assert not checks[f"{REPO}: merge queue"].ok
    assert not checks["app events"].ok and "merge_group" in checks["app events"].detail


def test_app_settings_slug_secret_and_tracking(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.set_app(permissions={**FULL, "issues": "read"}, events=["pull_request"])
    settings = Settings(**{**settings.__dict__, "app_slug": "merge-hold-prod", "github_webhook_secret": None})
    redis.Redis.from_url(str(settings.redis_url)).delete(keys.repo_meta(REPO))
    checks = by_name(doctor.run(settings))
    assert "Issues: write" in checks["app permissions"].detail
    assert "issue_comment" in checks["app events"].detail
    assert checks["app slug"].fix == f"set MERGE_HOLD_APP_SLUG={DEFAULT_SLUG}"
    assert not checks["webhook secret"].ok
    assert not checks[f"{REPO}: tracked"].ok and "reconcile" in checks[f"{REPO}: tracked"].fix


@pytest.mark.parametrize(("offset", "ok"), [(0.0, True), (20.0, True), (-300.0, False), (300.0, False)])
def test_clock_skew_is_measured_against_githubs_date(healthy: tuple[Settings, GitHubEmulator],
                                                     offset: float, ok: bool) -> None:
    settings, gh = healthy
    real = gh.clock
    gh.clock = lambda: real() + offset
    checks = by_name(doctor.run(settings))
    assert checks["clock"].ok is ok, checks["clock"]
    if offset == -300.0:
        # GitHub, five minutes behind, sees our JWT issued in its future and refuses it.
        assert not checks["app credentials"].ok


def test_wrong_app_id_is_a_credentials_problem(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, _gh = healthy
    checks = by_name(doctor.run(Settings(**{**settings.__dict__, "github_app_id": APP_ID + 1})))
    assert not checks["app credentials"].ok and "401" in checks["app credentials"].detail


def test_no_installation_and_no_credentials(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.installations.clear()
    assert "installed nowhere" in by_name(doctor.run(settings))["installations"].detail
    bare = Settings(**{**settings.__dict__, "github_app_id": None, "github_private_key": None})
    assert not by_name(doctor.run(bare))["app credentials"].ok


def test_redis_without_persistence_failed_jobs_and_no_worker(redis_url: str,
                                                             healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, _gh = healthy
    conn = redis.Redis.from_url(redis_url)
    conn.flushdb()
    queue = Queue("merge-hold", connection=conn)
    job = queue.enqueue("workers.events.dispatch.handle_delivery", "ping", "x", b"{}")
    job.set_status(JobStatus.FAILED)

    FailedJobRegistry(queue=queue).add(job, ttl=60, exc_string="boom")
    checks = by_name(doctor.run(Settings(**{**settings.__dict__, "redis_url": redis_url}))[:6])
    assert not checks["redis persistence"].ok and "appendonly no" in checks["redis persistence"].detail
    assert checks["redis eviction"].ok
    assert not checks["failed jobs"].ok
    assert not checks["workers"].ok
    conn.flushdb()
    unreachable = doctor.run(Settings(**{**settings.__dict__, "redis_url": "redis://127.0.0.1:1/0"}))
    assert not by_name(unreachable)["redis"].ok


def test_cli_json_and_exit_code(healthy: tuple[Settings, GitHubEmulator], monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    settings, gh = healthy
    pem = tmp_path / "app.pem"
    pem.write_text(private_key_pem())
    for name in [n for n in list(os.environ) if n.startswith(("MERGE_HOLD_", "GITHUB_"))]:
        monkeypatch.delenv(name)
    for name, value in {"REDIS_URL": str(settings.redis_url), "GITHUB_APP_ID": str(APP_ID),
                        "GITHUB_PRIVATE_KEY_PATH": str(pem), "GITHUB_WEBHOOK_SECRET": "s3cret",
                        "GITHUB_API_URL": gh.url, "MERGE_HOLD_APP_SLUG": DEFAULT_SLUG}.items():
        monkeypatch.setenv(name, value)
    from merge_hold.cli import main

    assert main(["doctor"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("all good")
    _unpinned_protection(gh)
    assert main(["doctor", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    [gate] = [c for c in report["checks"] if c["check"] == f"{REPO}: gate"]
    assert gate["ok"] is False and "pin" in gate["fix"]


DEPLOY_ROWS = [
    # name, environments seeded (name -> rule: "enabled", "disabled", "other-app" or "none"), findings
    ("enabled", {"production": "enabled"}, {"production": (True, "protection rule is enabled (frozen deploys wait)")}),
    ("disabled", {"production": "disabled"}, {"production": (False, "protection rule is disabled")}),
    ("another App's rule only", {"production": "other-app"}, {"production": (False, "is not enabled")}),
    ("no rule", {"production": "none"}, {"production": (False, "is not enabled")}),
    ("no such environment", {}, {"production": (False, "has no environment production")}),
    ("each listed environment", {"production": "enabled", "eu prod": "none"},
     {"production": (True, "enabled"), "eu prod": (False, "not enabled")}),
]


@pytest.mark.parametrize(("seeded", "expected"), [r[1:] for r in DEPLOY_ROWS], ids=[r[0] for r in DEPLOY_ROWS])
def test_doctor_lists_frozen_environments_and_the_apps_rule_on_them(
        healthy: tuple[Settings, GitHubEmulator], seeded: dict[str, str],
        expected: dict[str, tuple[bool, str]]) -> None:
    settings, gh = healthy
    gh.set_file(REPO, ".github/merge-hold.yml", f"freeze_deployments: {json.dumps(list(expected))}\n")
    for environment, rule in seeded.items():
        app_id = {"enabled": APP_ID, "disabled": APP_ID, "other-app": 99, "none": None}[rule]
        gh.add_environment(REPO, environment, app_id=app_id, enabled=rule != "disabled")
    checks = by_name(doctor.run(settings))
    for environment, (ok, detail) in expected.items():
        check = checks[f"{REPO}: deploys to {environment}"]
        assert check.ok is ok and detail in check.detail, check
        assert ok or check.fix


def test_doctor_says_nothing_of_deployments_a_repo_does_not_freeze(healthy: tuple[Settings, GitHubEmulator]) -> None:
    settings, gh = healthy
    gh.add_environment(REPO, "production", app_id=None)
    assert not [c for c in doctor.run(settings) if "deploy" in c.name]


def test_ruleset_freeze_mode_needs_administration_write_and_shows_the_ruleset(
        healthy: tuple[Settings, GitHubEmulator]) -> None:
    from dataclasses import replace

    from core.readiness import required_permissions

    settings, gh = healthy
    assert "app permissions" not in problems(doctor.run(settings))  # statuses mode: read is enough
    ruled = replace(settings, freeze_mode="ruleset")
    checks = doctor.run(ruled)
    assert "Administration: write" in by_name(checks)["app permissions"].detail or \
        "administration" in by_name(checks)["app permissions"].detail.lower()
    assert not by_name(checks)["app permissions"].ok
    assert by_name(checks)[f"{REPO}: freeze ruleset"].ok  # not created yet: said, not a problem
    assert "not created yet" in by_name(checks)[f"{REPO}: freeze ruleset"].detail

    write = {name: level for name, (level, _why) in required_permissions("ruleset").items()}
    gh.set_app(permissions=write, events=list(REQUIRED_EVENTS))
    gh.set_installation_permissions(7, write, REQUIRED_EVENTS)
    gh.rulesets[1] = {"id": 1, "name": "merge-hold freeze", "target": "branch", "source_type": "Repository",
                      "source": REPO, "enforcement": "disabled", "bypass_actors": [], "conditions": {},
                      "rules": [], "created_at": 0.0, "updated_at": 0.0}
    checks = doctor.run(ruled)
    assert problems(checks) == [], doctor.render(checks)
    assert "'merge-hold freeze' disabled" in by_name(checks)[f"{REPO}: freeze ruleset"].detail
    # A freeze scoped by paths is not the ruleset's: doctor says where it goes.
    ruleset_line = by_name(checks)[f"{REPO}: freeze ruleset"].detail
    assert "scoped by paths goes through each PR's merge-hold status" in ruleset_line
    assert f"{REPO}: freeze ruleset" not in by_name(doctor.run(settings))  # statuses mode: no such line
