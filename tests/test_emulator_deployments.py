"""The emulator's deployment protection endpoints as GitHub answers them, through the workers' own client
(`AppGateway.review_deployment`, PyGithub underneath): 204 for an answer or a report, 422 for a bad state
or a run with nothing pending, 404 for an unknown run, 403 without Deployments: write; and the two
environment reads doctor makes."""

from __future__ import annotations

from typing import Any

import pytest
import requests
from github import GithubException
from redis import Redis

from tests.deploy_support import REPO, deploy_service
from tests.emulator import APP_ID, GitHubEmulator
from tests.emulator.seeding import DEFAULT_PERMISSIONS
from workers.github.gateway import AppGateway

ENV = "production"


def _gateway(emu: GitHubEmulator, redis_url: str) -> AppGateway:
    gateway = deploy_service(emu, redis_url, None).rt.github
    assert isinstance(gateway, AppGateway)
    return gateway


@pytest.mark.parametrize(("body", "message"), [
    ({"environment_name": ENV, "state": "approve"}, "is not one of [\"approved\", \"rejected\"]"),
    ({"state": "approved"}, "\"environment_name\" wasn't supplied"),
    ({"environment_name": ENV, "state": "approved", "comment": "x" * 1025}, "at most 1024"),
])
def test_a_malformed_review_is_refused_with_422(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str,
                                                 body: dict[str, Any], message: str) -> None:
    gateway = _gateway(github_emulator, redis_url)
    run = github_emulator.request_deployment(REPO, ENV)
    with pytest.raises(GithubException) as refused:
        gateway._request(REPO, "POST", f"/repos/{REPO}/actions/runs/{run}/deployment_protection_rule", input=body)
    assert refused.value.status == 422 and message in refused.value.data["message"]
    assert github_emulator.gate_state(REPO, run, ENV) == "waiting" and github_emulator.deployment_answers() == []


def test_reports_then_one_answer_then_nothing_pending(github_emulator: GitHubEmulator, redis_client: Redis,
                                                     redis_url: str) -> None:
    gateway = _gateway(github_emulator, redis_url)
    run = github_emulator.request_deployment(REPO, ENV)
    assert all(gateway.review_deployment(REPO, run, {"environment_name": ENV, "comment": f"report {n}"})
               for n in range(10))
    assert not gateway.review_deployment(REPO, run, {"environment_name": ENV, "comment": "the eleventh"})
    assert github_emulator.gate_state(REPO, run, ENV) == "waiting"
    assert gateway.review_deployment(REPO, run, {"environment_name": ENV, "state": "approved", "comment": "ok"})
    assert not gateway.review_deployment(REPO, run, {"environment_name": ENV, "state": "approved"})  # reviewed
    assert not gateway.review_deployment(REPO, run, {"environment_name": "staging", "state": "approved"})
    assert not gateway.review_deployment(REPO, run + 1, {"environment_name": ENV, "state": "approved"})  # 404
    answers = github_emulator.deployment_answers(REPO)
    assert [a["state"] for a in answers] == [None] * 10 + ["approved"]
    assert github_emulator.gate_state(REPO, run, ENV) == "approved"


def test_answering_needs_deployments_write(github_emulator: GitHubEmulator, redis_client: Redis,
                                          redis_url: str) -> None:
    gateway = _gateway(github_emulator, redis_url)
    github_emulator.set_installation_permissions(1, DEFAULT_PERMISSIONS)
    run = github_emulator.request_deployment(REPO, ENV)
    with pytest.raises(GithubException) as refused:
        gateway.review_deployment(REPO, run, {"environment_name": ENV, "state": "approved"})
    assert refused.value.status == 403


def test_environments_and_their_custom_rules_in_githubs_shapes(github_emulator: GitHubEmulator,
                                                                redis_client: Redis, redis_url: str) -> None:
    gateway = _gateway(github_emulator, redis_url)
    github_emulator.add_environment(REPO, ENV)
    github_emulator.add_environment(REPO, "staging", app_id=None)
    headers = {"Authorization": f"Bearer {gateway._token(1)}"}
    body = requests.get(f"{github_emulator.url}/repos/{REPO}/environments", headers=headers, timeout=5).json()
    assert body["total_count"] == 2 and sorted(e["name"] for e in body["environments"]) == ["production", "staging"]
    rules = requests.get(f"{github_emulator.url}/repos/{REPO}/environments/{ENV}/deployment_protection_rules",
                         headers=headers, timeout=5).json()
    assert rules["total_count"] == 1
    rule = rules["custom_deployment_protection_rules"][0]
    assert rule["enabled"] is True and rule["app"]["id"] == APP_ID and rule["app"]["slug"] == github_emulator.app_slug
