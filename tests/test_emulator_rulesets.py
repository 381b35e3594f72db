"""The emulator's rulesets, its reading of mergeability, and GitHub's two secondary write windows."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import github
import pytest
import requests
from github import Auth

from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator

REPO = "acme/widgets"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
FREEZE = {"name": "merge-hold freeze", "target": "branch", "enforcement": "active",
          "conditions": {"ref_name": {"include": ["refs/heads/main"], "exclude": []}},
          "rules": [{"type": "required_status_checks", "parameters": {
              "strict_required_status_checks_policy": False, "do_not_enforce_on_create": False,
              "required_status_checks": [{"context": "merge-hold/freeze", "integration_id": APP_ID}]}}]}


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def emu(clock: Clock) -> Iterator[GitHubEmulator]:
    with GitHubEmulator(clock=clock) as emulator:
        emulator.add_installation(1, "acme")
        emulator.set_installation_permissions(1, {"statuses": "write", "administration": "write",
                                                  "metadata": "read", "pull_requests": "read"})
        emulator.add_repo(REPO, installation_id=1)
        emulator.add_pull(REPO, 7, head_sha=SHA, head_ref="feature", user="alice")
        emulator.add_pull(REPO, 8, head_sha="b" * 40, head_ref="other", base="release/1")
        yield emulator


def token(emu: GitHubEmulator, installation_id: int = 1) -> str:
    integration = github.GithubIntegration(base_url=emu.url, auth=Auth.AppAuth(APP_ID, PRIVATE_KEY_PEM),
                                           retry=None, seconds_between_requests=None, seconds_between_writes=None)
    return integration.get_access_token(installation_id).token


def call(emu: GitHubEmulator, method: str, path: str, body: Any = None, *, auth: str) -> requests.Response:
    return requests.request(method, f"{emu.url}{path}", json=body, timeout=5,
                            headers={"Authorization": f"token {auth}"})


def post_status(emu: GitHubEmulator, auth: str, sha: str, context: str, state: str = "success") -> int:
    return call(emu, "POST", f"/repos/{REPO}/statuses/{sha}", {"state": state, "context": context},
                auth=auth).status_code


def test_a_ruleset_round_trip_and_its_rules_on_the_branches_it_targets(emu: GitHubEmulator) -> None:
    auth = token(emu)
    created = call(emu, "POST", f"/repos/{REPO}/rulesets", FREEZE, auth=auth)
    assert created.status_code == 201, created.text
    rid = created.json()["id"]
    assert created.json()["source_type"] == "Repository" and created.json()["source"] == REPO
    assert call(emu, "POST", f"/repos/{REPO}/rulesets", FREEZE, auth=auth).status_code == 422  # unique name
    listed = call(emu, "GET", f"/repos/{REPO}/rulesets", auth=auth).json()
    assert [r["id"] for r in listed] == [rid] and "rules" not in listed[0]
    on_main = call(emu, "GET", f"/repos/{REPO}/rules/branches/main", auth=auth).json()
    assert [(r["type"], r["ruleset_id"]) for r in on_main] == [("required_status_checks", rid)]
    assert call(emu, "GET", f"/repos/{REPO}/rules/branches/release/1", auth=auth).json() == []
    changed = call(emu, "PUT", f"/repos/{REPO}/rulesets/{rid}", {"enforcement": "disabled"}, auth=auth)
    assert changed.status_code == 200 and changed.json()["enforcement"] == "disabled"
    assert changed.json()["rules"] == FREEZE["rules"]  # a partial update keeps the rest
    assert call(emu, "GET", f"/repos/{REPO}/rules/branches/main", auth=auth).json() == []
    assert call(emu, "PUT", f"/repos/{REPO}/rulesets/{rid}", {"enforcement": "on"}, auth=auth).status_code == 422
    assert call(emu, "DELETE", f"/repos/{REPO}/rulesets/{rid}", auth=auth).status_code == 204
    assert call(emu, "GET", f"/repos/{REPO}/rulesets/{rid}", auth=auth).status_code == 404


def test_rulesets_need_the_administration_permission(emu: GitHubEmulator) -> None:
    emu.set_installation_permissions(1, {"statuses": "write", "metadata": "read"})
    answer = call(emu, "POST", f"/repos/{REPO}/rulesets", FREEZE, auth=token(emu))
    assert answer.status_code == 403 and answer.json()["message"] == "Resource not accessible by integration"
    assert call(emu, "POST", "/orgs/acme/rulesets", FREEZE, auth=token(emu)).status_code == 403


@pytest.mark.parametrize(("pattern", "ref", "matches"), [
    ("refs/heads/main", "refs/heads/main", True),
    ("refs/heads/release/*", "refs/heads/release/1", True),
    ("refs/heads/release/*", "refs/heads/release/1/hotfix", False),  # * stays within a segment
    ("refs/heads/release/**", "refs/heads/release/1/hotfix", True),
    ("~DEFAULT_BRANCH", "refs/heads/main", True),
    ("~DEFAULT_BRANCH", "refs/heads/dev", False),
    ("~ALL", "refs/heads/anything/at/all", True),
    ("refs/heads/ma?n", "refs/heads/main", True),
    ("refs/heads/main", "refs/heads/main2", False),
])
def test_ref_patterns(pattern: str, ref: str, matches: bool) -> None:
    from tests.emulator.rulesets import ref_matches

    assert ref_matches(pattern, ref, "main") is matches


def blockers(emu: GitHubEmulator, number: int) -> list[str]:
    """`merge_blockers`, checked against the bulk reading over many PRs (the benchmark's): they agree."""
    one = emu.merge_blockers(REPO, number)
    assert emu.unmergeable([(REPO, 7), (REPO, 8)]).get((REPO, number), []) == one
    return one


def test_mergeable_reads_protection_and_active_rulesets_with_their_app_pin(emu: GitHubEmulator) -> None:
    auth = token(emu)
    emu.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID)])
    assert blockers(emu, 7) == ["merge-hold: expected"]
    emu.add_status(REPO, SHA, state="success", context="merge-hold")  # not by the App: the pin refuses it
    assert blockers(emu, 7)
    assert post_status(emu, auth, SHA, "merge-hold") == 201
    assert blockers(emu, 7) == []
    rid = call(emu, "POST", f"/repos/{REPO}/rulesets", FREEZE, auth=auth).json()["id"]
    assert blockers(emu, 7) == ["merge-hold/freeze: expected"]  # at once, no per-PR write
    assert blockers(emu, 8) == []  # release/1 is not targeted
    assert post_status(emu, auth, SHA, "merge-hold/freeze", "failure") == 201
    assert blockers(emu, 7) == ["merge-hold/freeze: failure"]
    call(emu, "PUT", f"/repos/{REPO}/rulesets/{rid}", {"enforcement": "disabled"}, auth=auth)
    assert blockers(emu, 7) == []  # a disabled ruleset requires nothing, whatever was posted


def test_org_rulesets_bind_the_repositories_they_name(emu: GitHubEmulator) -> None:
    emu.set_installation_permissions(1, {"statuses": "write", "organization_administration": "write",
                                         "metadata": "read"})
    body = {**FREEZE, "conditions": {"ref_name": {"include": ["~ALL"], "exclude": []},
                                     "repository_name": {"include": ["~ALL"], "exclude": []}}}
    created = call(emu, "POST", "/orgs/acme/rulesets", body, auth=token(emu))
    assert created.status_code == 201 and created.json()["source_type"] == "Organization"
    assert emu.merge_blockers(REPO, 8) == ["merge-hold/freeze: expected"]


ORG_BODY: dict[str, Any] = {**FREEZE, "conditions": {"ref_name": {"include": ["~ALL"], "exclude": []},
                                                   "repository_name": {"include": ["widgets"], "exclude": []}}}
ORG_ADMIN = {"statuses": "write", "organization_administration": "write", "metadata": "read"}


@pytest.mark.parametrize(("setup", "path", "body", "status", "message"), [
    ("no-permission", "/orgs/acme/rulesets", ORG_BODY, 403, "Resource not accessible by integration"),
    ("no-plan", "/orgs/acme/rulesets", ORG_BODY, 403, "Upgrade to GitHub Enterprise to enable this feature."),
    ("granted", "/orgs/globex/rulesets", ORG_BODY, 404, "Not Found"),  # an org this installation is not on
    ("user", "/orgs/dana/rulesets", ORG_BODY, 404, "Not Found"),  # a personal account has no org rulesets
    ("granted", "/orgs/acme/rulesets", FREEZE, 422, None),  # an org ruleset names its repositories
    ("granted", "/orgs/acme/rulesets", ORG_BODY, 201, None),
], ids=["no-permission", "no-plan", "other-org", "user-account", "no-repository-condition", "created"])
def test_where_org_rulesets_answer(emu: GitHubEmulator, setup: str, path: str, body: dict[str, Any], status: int,
                                   message: str | None) -> None:
    emu.set_installation_permissions(1, ORG_ADMIN if setup != "no-permission" else {"statuses": "write"})
    emu.add_installation(2, "globex")
    emu.add_installation(3, "dana", account_type="User")
    if setup == "no-plan":
        emu.set_org_rulesets("acme", False)
    auth = token(emu, 3 if setup == "user" else 1)
    if setup == "user":
        emu.set_installation_permissions(3, ORG_ADMIN)
    answer = call(emu, "POST", path, body, auth=auth)
    assert answer.status_code == status, answer.text
    if message is not None:
        assert answer.json()["message"] == message
    listed = call(emu, "GET", path, auth=auth)
    assert listed.status_code == (200 if status in (201, 422) else status)


def test_an_org_ruleset_round_trip(emu: GitHubEmulator) -> None:
    emu.set_installation_permissions(1, ORG_ADMIN)
    auth = token(emu)
    rid = call(emu, "POST", "/orgs/acme/rulesets", ORG_BODY, auth=auth).json()["id"]
    assert emu.merge_blockers(REPO, 8) == ["merge-hold/freeze: expected"]  # every branch of a named repo
    assert call(emu, "GET", f"/repos/{REPO}/rulesets/{rid}", auth=auth).status_code == 404  # not the repo's
    shown = call(emu, "GET", f"/orgs/acme/rulesets/{rid}", auth=auth).json()
    assert shown["source_type"] == "Organization" and shown["conditions"]["repository_name"]["include"] == ["widgets"]
    assert call(emu, "PUT", f"/orgs/acme/rulesets/{rid}", {"enforcement": "disabled"}, auth=auth).status_code == 200
    assert emu.merge_blockers(REPO, 8) == []
    conditions: dict[str, Any] = {**ORG_BODY["conditions"], "repository_name": {"include": ["gizmos"]}}
    other = {**ORG_BODY, "conditions": conditions}
    assert call(emu, "PUT", f"/orgs/acme/rulesets/{rid}", {**other, "enforcement": "active"},
                auth=auth).status_code == 200
    assert emu.merge_blockers(REPO, 8) == []  # names another repository
    assert call(emu, "DELETE", f"/orgs/acme/rulesets/{rid}", auth=auth).status_code == 204
    assert call(emu, "GET", f"/orgs/acme/rulesets/{rid}", auth=auth).status_code == 404


def test_both_write_windows_per_installation_with_retry_after(emu: GitHubEmulator, clock: Clock) -> None:
    emu.add_installation(2, "globex")
    emu.add_repo("globex/gadgets", installation_id=2)
    emu.secondary_limit(3, 5)
    auth, other = token(emu), token(emu, 2)
    assert [post_status(emu, auth, SHA, "a") for _ in range(3)] == [201] * 3
    refused = call(emu, "POST", f"/repos/{REPO}/statuses/{SHA}", {"state": "success"}, auth=auth)
    assert refused.status_code == 403 and refused.headers["retry-after"] == "60"
    assert call(emu, "POST", f"/repos/globex/gadgets/statuses/{'c' * 40}", {"state": "success"},
                auth=other).status_code != 403  # another installation's budget
    clock.now += 61
    assert [post_status(emu, auth, SHA, "a") for _ in range(2)] == [201] * 2
    hourly = call(emu, "POST", f"/repos/{REPO}/statuses/{SHA}", {"state": "success"}, auth=auth)
    assert hourly.status_code == 403 and 3500 < int(hourly.headers["retry-after"]) <= 3600 - 61
    assert emu.refused_writes == 2
