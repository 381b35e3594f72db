"""Deploys freeze too, end to end: the `deployment_protection_rule` delivery through the Flask receiver,
a real rq worker, real Redis and the GitHub emulator, which records every answer on the run's callback.

Each row: a repo config, the room holds in force, the environment and ref deployed, and what GitHub then
holds for the run (approved, rejected or still waiting) and the answers merge-hold gave it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from redis import Redis

from core import keys
from core.freeze import active_interval
from core.repo_config import FreezeWindow
from state.room_holds import lift_holds
from tests.deploy_support import REPO, answers, deploy_service, hold, protection_request, unhold
from tests.emulator import GitHubEmulator
from workers.events import deployments
from workers.ops.reconcile import reconcile_job

FREEZE_PRODUCTION = "freeze_deployments: [production]\n"
REJECT = "freeze_deployments: [production]\ndeployments_on_freeze: reject\n"

ROWS = [
    # name, config, hold scopes, environment, ref, GitHub's state after, answers (state, part of the comment)
    ("frozen repo: waits with a status report", FREEZE_PRODUCTION, ["acme/widgets"], "production",
     "refs/heads/main", "waiting", [(None, "`main` is frozen by @alice: incident 4711")]),
    ("frozen org: waits", FREEZE_PRODUCTION, ["acme"], "production", "refs/heads/main", "waiting",
     [(None, "frozen by @alice: incident 4711")]),
    ("frozen branch glob: waits", FREEZE_PRODUCTION, ["acme/widgets@rel*"], "production", "refs/heads/release",
     "waiting", [(None, "`release` is frozen by @alice")]),
    ("reject: rejected at once", REJECT, ["acme/widgets"], "production", "refs/heads/main", "rejected",
     [("rejected", "Rejected by merge-hold: `main` is frozen by @alice: incident 4711")]),
    ("an unfrozen branch: approved at once", FREEZE_PRODUCTION, ["acme/widgets@release/*"], "production",
     "refs/heads/main", "approved", [("approved", "No freeze covers `main`")]),
    ("an environment not listed: approved at once", FREEZE_PRODUCTION, ["acme/widgets"], "staging",
     "refs/heads/main", "approved", [("approved", "does not freeze deployments to staging")]),
    ("no freeze_deployments at all: approved", "", ["acme"], "production", "refs/heads/main", "approved",
     [("approved", "does not freeze deployments to production")]),
    ("a PR-scoped hold does not freeze a deploy", FREEZE_PRODUCTION, ["acme/widgets#5"], "production",
     "refs/heads/main", "approved", [("approved", "No freeze covers `main`")]),
    ("another repo's hold does not freeze this one", FREEZE_PRODUCTION, ["acme/gadgets"], "production",
     "refs/heads/main", "approved", [("approved", "No freeze covers `main`")]),
]


@pytest.mark.parametrize(("config", "scopes", "environment", "ref", "state", "expected"),
                         [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_the_answer_to_a_deployment(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str,
                                    config: str, scopes: list[str], environment: str, ref: str, state: str,
                                    expected: list[tuple[str | None, str]]) -> None:
    svc = deploy_service(github_emulator, redis_url, config)
    for scope in scopes:
        hold(svc, scope)
    svc.drain()
    run, payload = protection_request(github_emulator, environment, ref=ref)
    assert svc.deliver("deployment_protection_rule", payload).status_code == 202
    svc.drain()
    assert github_emulator.gate_state(REPO, run, environment) == state
    given = answers(github_emulator)
    assert [s for s, _ in given] == [s for s, _ in expected]
    assert all(part in comment for (_, comment), (_, part) in zip(given, expected, strict=True))
    assert bool(redis_client.hlen(keys.deployments_waiting(REPO))) is (state == "waiting")


def test_a_waiting_deployment_resumes_when_the_last_room_hold_on_it_is_lifted(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    svc = deploy_service(github_emulator, redis_url, FREEZE_PRODUCTION)
    hold(svc, "acme/widgets")
    hold(svc, "acme", holder="bob", reason="org-wide incident")
    svc.drain()
    run, payload = protection_request(github_emulator, "production")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    assert github_emulator.gate_state(REPO, run, "production") == "waiting"
    unhold(svc, "acme/widgets")  # the org still freezes it: the report says so, it keeps waiting
    svc.drain()
    assert github_emulator.gate_state(REPO, run, "production") == "waiting"
    assert [s for s, _ in answers(github_emulator)] == [None, None]
    assert "frozen by @bob: org-wide incident" in answers(github_emulator)[-1][1]
    unhold(svc, "acme")  # the thaw: approved by itself, without a new delivery
    svc.drain()
    assert github_emulator.gate_state(REPO, run, "production") == "approved"
    assert answers(github_emulator)[-1] == (
        "approved", "The freeze lifted: merge-hold approves the deployment to production.")
    assert not redis_client.hlen(keys.deployments_waiting(REPO))


def test_a_timed_room_hold_thaws_its_deployments_at_its_expiry(github_emulator: GitHubEmulator,
                                                               redis_client: Redis, redis_url: str) -> None:
    svc = deploy_service(github_emulator, redis_url, FREEZE_PRODUCTION)
    hold(svc, "acme/widgets", minutes=30)
    svc.drain()
    run, payload = protection_request(github_emulator, "production")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    expiry = svc.rt.queue.scheduled_job_registry.get_job_ids()
    wakes = [j for j in expiry if j.startswith("wake-deploys-acme_widgets-")]
    assert len(wakes) == 1
    job = svc.rt.queue.fetch_job(wakes[0])
    assert job is not None and job.func_name == deployments.RECHECK_JOB and job.args == (REPO,)
    when = datetime.fromtimestamp(int(wakes[0].rsplit("-", 1)[1]), UTC)
    assert timedelta(minutes=29) < when - datetime.now(UTC) <= timedelta(minutes=30)
    # What that job does when rq's scheduler runs it: a moment before, still frozen; at the expiry, free.
    assert deployments.recheck(svc.rt, REPO, when - timedelta(seconds=1)) == {"waiting": 1}
    assert deployments.recheck(svc.rt, REPO, when) == {"approved": 1}
    assert github_emulator.gate_state(REPO, run, "production") == "approved"


def test_a_freeze_window_thaws_its_deployments_at_its_end(github_emulator: GitHubEmulator, redis_client: Redis,
                                                         redis_url: str) -> None:
    now = datetime.now(UTC)
    start, end = (now - timedelta(hours=1)).strftime("%H:%M"), (now + timedelta(hours=1)).strftime("%H:%M")
    config = (f"freeze_deployments: [production]\nfreeze_windows:\n  - name: deploy-freeze\n"
              f"    from: \"{start}\"\n    to: \"{end}\"\n    branches: [main]\n")
    svc = deploy_service(github_emulator, redis_url, config)  # a repo with no open PR: no PR wakeup to ride on
    run, payload = protection_request(github_emulator, "production")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    assert github_emulator.gate_state(REPO, run, "production") == "waiting"
    assert "`main` is frozen by deploy-freeze: freeze deploy-freeze until" in answers(github_emulator)[0][1]
    interval = active_interval(FreezeWindow("deploy-freeze", ("mon", "tue", "wed", "thu", "fri", "sat", "sun"),
                                            start, end), now)
    assert interval is not None
    wake = f"wake-deploys-acme_widgets-{int(interval[1].timestamp())}"
    assert wake in svc.rt.queue.scheduled_job_registry.get_job_ids()
    assert deployments.recheck(svc.rt, REPO, interval[1]) == {"approved": 1}
    assert github_emulator.gate_state(REPO, run, "production") == "approved"
    # A deploy of a branch the window does not freeze never waited.
    other, payload = protection_request(github_emulator, "production", ref="refs/heads/dev")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    assert github_emulator.gate_state(REPO, other, "production") == "approved"


def test_a_redelivered_request_is_not_answered_twice(github_emulator: GitHubEmulator, redis_client: Redis,
                                                    redis_url: str) -> None:
    svc = deploy_service(github_emulator, redis_url, FREEZE_PRODUCTION)
    free_run, free = protection_request(github_emulator, "production", ref="refs/heads/dev")
    hold(svc, "acme/widgets@main")
    svc.drain()
    run, frozen = protection_request(github_emulator, "production")
    for _ in range(2):  # GitHub's redelivery and our sweep's come with new delivery ids
        svc.deliver("deployment_protection_rule", free)
        svc.deliver("deployment_protection_rule", frozen)
        svc.drain()
    assert [(a["run_id"], a["state"]) for a in github_emulator.deployment_answers()] == [
        (free_run, "approved"), (run, None)]  # one approval, one status report
    unhold(svc, "acme/widgets@main")
    svc.drain()
    svc.deliver("deployment_protection_rule", frozen)  # late: after it was approved at thaw
    svc.drain()
    assert [(a["run_id"], a["state"]) for a in github_emulator.deployment_answers()] == [
        (free_run, "approved"), (run, None), (run, "approved")]
    # Not even asked a second time (GitHub would refuse a second approval, and the emulator records only
    # what it accepted): three calls for three answers.
    assert github_emulator.count("POST", r"/deployment_protection_rule$") == 3


def test_a_deployment_answered_meanwhile_on_github_counts_as_done(github_emulator: GitHubEmulator,
                                                                   redis_client: Redis, redis_url: str) -> None:
    svc = deploy_service(github_emulator, redis_url, FREEZE_PRODUCTION)
    hold(svc, "acme/widgets")
    svc.drain()
    run, payload = protection_request(github_emulator, "production")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    with github_emulator.lock:  # an admin bypassed the rule: GitHub has nothing pending for us any more
        github_emulator.deploys.gates[(REPO, run, "production")].state = "approved"
    unhold(svc, "acme/widgets")
    svc.drain()  # GitHub's 422 to our approval: no failed job, nothing left waiting
    assert [s for s, _ in answers(github_emulator)] == [None]
    assert not redis_client.hlen(keys.deployments_waiting(REPO))


def test_the_reconcile_sweep_thaws_a_deployment_whose_thaw_was_missed(github_emulator: GitHubEmulator,
                                                                       redis_client: Redis, redis_url: str) -> None:
    svc = deploy_service(github_emulator, redis_url, FREEZE_PRODUCTION)
    hold(svc, "acme/widgets")
    svc.drain()
    run, payload = protection_request(github_emulator, "production")
    svc.deliver("deployment_protection_rule", payload)
    svc.drain()
    lift_holds(redis_client, "acme/widgets", actor="alice", origin="slack:acme/#ops")  # no republish followed
    svc.drain()
    assert github_emulator.gate_state(REPO, run, "production") == "waiting"
    reconcile_job()
    assert github_emulator.gate_state(REPO, run, "production") == "approved"
