"""Deployments end to end: a repo whose config freezes deploys, a run waiting on merge-hold's protection
rule at the emulator, the `deployment_protection_rule` delivery GitHub sends for it, and room holds
placed and lifted the way the API and the dashboard do (record, then queue the republish job).

The payload follows GitHub's documented `deployment_protection_rule` webhook (action, environment,
event, ref, sha, deployment_callback_url, deployment, pull_requests, repository, organization,
installation, sender); octokit/webhooks carries its schema but no example payload to copy.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.chat_request import REPUBLISH_JOB
from state.room_holds import lift_holds, place_hold
from tests.chat_support import emulated_service
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from tests.emulator.seeding import DEFAULT_PERMISSIONS

REPO = "acme/widgets"
INSTALLATION = 1
SHA = "a" * 40


def deploy_service(emu: GitHubEmulator, redis_url: str, config: str | None) -> Service:
    """acme/widgets with ``config`` as its repo config, its App installation granted what a custom
    deployment protection rule needs (Deployments: write, Actions: read)."""
    svc = emulated_service(emu, redis_url)
    emu.add_installation(INSTALLATION, "acme")
    emu.set_installation_permissions(INSTALLATION, {**DEFAULT_PERMISSIONS, "deployments": "write", "actions": "read"})
    emu.add_repo(REPO, installation_id=INSTALLATION)
    if config is not None:
        emu.set_file(REPO, ".github/merge-hold.yml", config)
    return svc


def protection_request(emu: GitHubEmulator, environment: str, *, ref: str = "refs/heads/main",
                       run_id: int | None = None) -> tuple[int, dict[str, Any]]:
    """A run waiting on the environment's rule at the emulator, and the delivery GitHub sends for it."""
    run = emu.request_deployment(REPO, environment, run_id=run_id)
    owner, name = REPO.split("/")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    sender = {"login": "octocat", "id": 1, "type": "User"}
    payload = {
        "action": "requested", "environment": environment, "event": "push", "ref": ref, "sha": SHA,
        "deployment_callback_url": f"{emu.url}/repos/{REPO}/actions/runs/{run}/deployment_protection_rule",
        "deployment": {
            "url": f"{emu.url}/repos/{REPO}/deployments/{run + 7}", "id": run + 7, "node_id": "DE_kwDOtest",
            "task": "deploy", "original_environment": environment, "environment": environment,
            "description": None, "created_at": now, "updated_at": now, "sha": SHA,
            "ref": ref.removeprefix("refs/heads/"), "payload": {}, "creator": sender,
            "statuses_url": f"{emu.url}/repos/{REPO}/deployments/{run + 7}/statuses",
            "repository_url": f"{emu.url}/repos/{REPO}", "transient_environment": False,
            "production_environment": environment == "production", "performed_via_github_app": None,
        },
        "pull_requests": [],
        "repository": {"id": 99, "name": name, "full_name": REPO, "owner": {"login": owner, "type": "Organization"},
                       "private": False, "default_branch": "main"},
        "organization": {"login": owner, "id": 5},
        "installation": {"id": INSTALLATION, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="},
        "sender": sender,
    }
    return run, payload


def hold(svc: Service, scope: str, *, reason: str = "incident 4711", holder: str = "alice",
         minutes: int | None = None) -> None:
    """A room hold on ``scope``, recorded and republished as the API does."""
    place_hold(svc.redis, scope, holder=holder, holder_id=f"slack:T1:{holder}", reason=reason,
               origin="slack:acme/#ops", now=datetime.now(UTC),
               duration=timedelta(minutes=minutes) if minutes else None)
    svc.rt.queue.enqueue(REPUBLISH_JOB, scope)


def unhold(svc: Service, scope: str) -> None:
    lift_holds(svc.redis, scope, actor="alice", origin="slack:acme/#ops")
    svc.rt.queue.enqueue(REPUBLISH_JOB, scope)


def answers(emu: GitHubEmulator) -> list[tuple[str | None, str]]:
    """(state, comment) of every answer merge-hold gave, in order (state None: a status report)."""
    return [(a["state"], a["comment"] or "") for a in emu.deployment_answers(REPO)]
