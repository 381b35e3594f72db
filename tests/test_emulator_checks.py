"""The emulator's check runs answer as GitHub does: Checks: write, the ``actions`` limits (at most 3; label
≤ 20, description ≤ 40, identifier ≤ 20), ``output.summary`` ≤ 65,535 characters, a conclusion on a completed
run, one App's runs, the list by name (latest per name), and the 1,000 runs of one name a suite keeps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import github
import pytest
import requests
from github import Auth

from core.check_run import ACTIONS, MAX_SUMMARY, NAME, check_actions
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator

REPO = "acme/widgets"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
ACTION = {"label": "Lift my hold", "description": "Lift the holds you placed on this PR", "identifier": "lift"}


@pytest.fixture()
def emu() -> Iterator[GitHubEmulator]:
    with GitHubEmulator() as emulator:
        emulator.add_installation(1, "acme")
        emulator.set_installation_permissions(1, {"checks": "write", "metadata": "read", "pull_requests": "read"})
        emulator.add_installation(2, "other")  # Checks: none
        emulator.add_repo(REPO, installation_id=1)
        emulator.add_repo("other/repo", installation_id=2)
        emulator.add_pull(REPO, 7, head_sha=SHA, head_ref="feature", user="alice")
        yield emulator


def token(emu: GitHubEmulator, installation_id: int = 1) -> str:
    integration = github.GithubIntegration(base_url=emu.url, auth=Auth.AppAuth(APP_ID, PRIVATE_KEY_PEM),
                                           retry=None, seconds_between_requests=None, seconds_between_writes=None)
    return integration.get_access_token(installation_id).token


def call(emu: GitHubEmulator, method: str, path: str, body: Any = None, *, auth: str) -> requests.Response:
    return requests.request(method, f"{emu.url}{path}", json=body, timeout=5,
                            headers={"Authorization": f"token {auth}"})


def run(**fields: Any) -> dict[str, Any]:
    return {"name": NAME, "head_sha": SHA, "status": "completed", "conclusion": "action_required",
            "output": {"title": "Held by @alice", "summary": "held"}, "actions": [ACTION], **fields}


@pytest.mark.parametrize(("fields", "status"), [
    ({}, 201),
    ({"actions": [ACTION] * 3}, 201),
    ({"actions": [ACTION] * 4}, 422),  # at most 3
    ({"actions": [{**ACTION, "label": "L" * 20}]}, 201),
    ({"actions": [{**ACTION, "label": "L" * 21}]}, 422),
    ({"actions": [{**ACTION, "description": "D" * 40}]}, 201),
    ({"actions": [{**ACTION, "description": "D" * 41}]}, 422),
    ({"actions": [{**ACTION, "identifier": "i" * 20}]}, 201),
    ({"actions": [{**ACTION, "identifier": "i" * 21}]}, 422),
    ({"actions": [{"label": "x", "description": "y"}]}, 422),  # no identifier
    ({"output": {"title": "t", "summary": "s" * 65_535}}, 201),
    ({"output": {"title": "t", "summary": "s" * 65_536}}, 422),
    ({"output": {"summary": "no title"}}, 422),
    ({"conclusion": None}, 422),  # completed without a conclusion
    ({"conclusion": "blocked"}, 422),
    ({"head_sha": "f" * 39 + "g"}, 422),  # no such commit
    ({"name": None}, 422),
], ids=str)
def test_create_validates_as_github(emu: GitHubEmulator, fields: dict[str, Any], status: int) -> None:
    answer = call(emu, "POST", f"/repos/{REPO}/check-runs", run(**fields), auth=token(emu))
    assert answer.status_code == status, answer.text


def test_checks_write_is_needed(emu: GitHubEmulator) -> None:
    answer = call(emu, "POST", "/repos/other/repo/check-runs", run(), auth=token(emu, 2))
    assert answer.status_code == 403 and answer.json()["message"] == "Resource not accessible by integration"


def test_update_in_place_and_list_by_name(emu: GitHubEmulator) -> None:
    auth = token(emu)
    created = call(emu, "POST", f"/repos/{REPO}/check-runs", run(), auth=auth).json()
    assert created["pull_requests"][0]["number"] == 7 and created["app"]["id"] == APP_ID
    updated = call(emu, "PATCH", f"/repos/{REPO}/check-runs/{created['id']}",
                   {"conclusion": "success", "output": {"title": "No holds", "summary": "free"}, "actions": []},
                   auth=auth)
    assert updated.status_code == 200 and updated.json()["conclusion"] == "success"
    assert call(emu, "PATCH", f"/repos/{REPO}/check-runs/{created['id']}", {"actions": [ACTION] * 4},
                auth=auth).status_code == 422
    assert call(emu, "PATCH", f"/repos/{REPO}/check-runs/999", {"status": "completed"}, auth=auth).status_code == 404
    call(emu, "POST", f"/repos/{REPO}/check-runs", run(name="ci/build"), auth=auth)
    listed = call(emu, "GET", f"/repos/{REPO}/commits/{SHA}/check-runs?check_name={NAME}", auth=auth).json()
    assert listed["total_count"] == 1 and listed["check_runs"][0]["id"] == created["id"]
    assert listed["check_runs"][0]["output"]["title"] == "No holds"


def test_a_suite_keeps_the_newest_1000_runs_of_a_name(emu: GitHubEmulator) -> None:
    auth = token(emu)
    ids = [call(emu, "POST", f"/repos/{REPO}/check-runs", run(), auth=auth).json()["id"] for _ in range(1002)]
    kept = [r.id for r in emu.check_runs(REPO, SHA, NAME)]
    assert len(kept) == 1000 and kept[0] == ids[2] and kept[-1] == ids[-1]


def test_a_click_is_a_requested_action_delivery_with_the_clicker_as_sender(emu: GitHubEmulator) -> None:
    created = call(emu, "POST", f"/repos/{REPO}/check-runs", run(), auth=token(emu)).json()
    payload = emu.click(REPO, created["id"], "lift", "bob")
    assert payload["action"] == "requested_action" and payload["requested_action"] == {"identifier": "lift"}
    assert payload["sender"]["login"] == "bob" and payload["check_run"]["name"] == NAME
    assert payload["check_run"]["pull_requests"][0]["number"] == 7 and payload["installation"]["id"] == 1
    with pytest.raises(ValueError):
        emu.click(REPO, created["id"], "refresh", "bob")  # the run shows no such button


def test_our_buttons_and_summaries_are_within_githubs_limits() -> None:
    """`core.check_run` keeps what the emulator (GitHub) refuses out of its bodies."""
    assert check_actions([a.as_dict() for a in ACTIONS.values()]) is None
    assert check_actions([ACTION] * 4) == "at most 3 actions"
    assert check_actions([{**ACTION, "label": "L" * 21}]) == "label must be 1 to 20 characters"
    from datetime import UTC, datetime

    from core.check_run import body, view

    holds = [{"id": f"comment:u{i}", "source": "comment", "scope": f"{REPO}#7", "holder": f"u{i}",
              "reason": "r" * 500, "created_at": "2026-12-05T10:00:00Z", "expires_at": None, "origin": ""}
             for i in range(400)]
    shown = view({"held": True, "holds": holds}, pr_url="u", rooms_url="r")
    made = body(shown, SHA, datetime(2026, 12, 5, tzinfo=UTC))
    assert len(made["output"]["summary"]) <= MAX_SUMMARY and made["output"]["summary"].endswith("…")
    assert made["output"]["title"] == "Held by @u0 (+399 more)"
