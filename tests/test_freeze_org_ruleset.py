"""An org freeze through one organisation ruleset (``organization_administration: write``, a plan with
org rulesets) at the GitHub emulator: created, activated and disabled with one write each, by GitHub's
own reading of rulesets; repo freezes inside the org keep their own rulesets; a ruleset changed
behind our back is repaired (reconcile, and an organisation-level `repository_ruleset` event); without
the permission or the plan (403), the org's freezes go to per-repo rulesets, and every answer says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from core.chat_request import parse_binding
from core.freeze_gate import ALL, FREEZE_CONTEXT, RULESET_NAME
from tests.chat_support import emulated_service, seed_repo
from tests.e2e_support import Service, fixture
from tests.emulator import APP_ID, GitHubEmulator
from tests.test_freeze_ruleset import ADMIN, ORG, PRS, REPOS, request, ruleset_writes, unmergeable
from workers.chat.rooms import execute
from workers.ops.reconcile import reconcile_repo
from workers.publishing.fanout import request_fanout
from workers.publishing.freeze_rulesets import recorded
from workers.publishing.org_rulesets import org_record

ORG_ADMIN = {**ADMIN, "organization_administration": "write"}


def org_writes(emu: GitHubEmulator) -> int:
    return emu.count("POST", r"^/orgs/acme/rulesets$") + emu.count("PUT", r"^/orgs/acme/rulesets/\d+$")


def org_rulesets(emu: GitHubEmulator) -> list[dict[str, Any]]:
    return [r for r in emu.rulesets.values() if r["source_type"] == "Organization"]


@pytest.fixture()
def org(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    """Two repos of mergeable PRs into a main that requires `merge-hold` from this App, ruleset mode, and
    an installation with Organization administration on an org whose plan has org rulesets."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0, freeze_mode="ruleset",
                           slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"))
    for repo in REPOS:
        seed_repo(github_emulator, redis_client, repo, PRS)
        github_emulator.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
    github_emulator.set_installation_permissions(1, ORG_ADMIN)
    request_fanout(svc.rt, ORG)
    svc.drain()
    assert unmergeable(github_emulator) == []
    github_emulator.reset_log()
    return svc


def everything() -> list[str]:
    return [f"{r}#{n}" for r in REPOS for n in range(1, PRS + 1)]


def test_an_org_freeze_is_one_org_ruleset_written_once_each_way(org: Service, github_emulator: GitHubEmulator) -> None:
    before = len(github_emulator.status_posts())
    reply = execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    assert unmergeable(github_emulator) == everything()  # before any per-PR work: GitHub's own rules
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (1, 0)
    assert github_emulator.count("POST", r"^/orgs/acme/rulesets$") == 1  # created
    assert "org ruleset active over 2 repos (one write)" in reply.text
    [ruleset] = org_rulesets(github_emulator)
    assert (ruleset["name"], ruleset["enforcement"], ruleset["bypass_actors"]) == (RULESET_NAME, "active", [])
    assert ruleset["conditions"]["repository_name"]["include"] == ["gadgets", "widgets"]
    assert ruleset["conditions"]["ref_name"]["include"] == [ALL]
    assert ruleset["rules"][0]["parameters"]["required_status_checks"] == [
        {"context": FREEZE_CONTEXT, "integration_id": APP_ID}]
    org.drain()
    assert (org.verdict(REPOS[0], 3) or {})["held"]
    assert len(github_emulator.status_posts()) == before  # not one `merge-hold` write per PR
    assert len(github_emulator.status_posts(FREEZE_CONTEXT)) == len(everything())  # the descriptions
    listing = execute(org.rt, request(), ChatCommand("list", ORG)).text
    assert "incident 4711 — org ruleset; rulesets active 2 of 2; descriptions written" in listing

    github_emulator.reset_log()
    reply = execute(org.rt, request(), ChatCommand("unhold", ORG))
    assert unmergeable(github_emulator) == []  # at once, before any PR is republished
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (1, 0)  # disabled
    assert "org ruleset disabled (one write)" in reply.text
    org.drain()
    assert unmergeable(github_emulator) == [] and not (org.verdict(REPOS[0], 3) or {})["held"]

    github_emulator.reset_log()
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4712"))
    assert unmergeable(github_emulator) == everything()
    assert github_emulator.count("PUT", r"^/orgs/acme/rulesets/\d+$") == 1  # activated, not created again
    assert org_writes(github_emulator) == 1 and len(org_rulesets(github_emulator)) == 1


def test_a_repo_freeze_inside_the_org_keeps_its_own_ruleset(org: Service, github_emulator: GitHubEmulator) -> None:
    execute(org.rt, request(), ChatCommand("hold", REPOS[0], reason="deploying widgets"))
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (0, 1)
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (1, 1)  # the org's: one write
    assert unmergeable(github_emulator) == everything()
    execute(org.rt, request(), ChatCommand("unhold", ORG))
    org.drain()
    assert unmergeable(github_emulator) == [f"{REPOS[0]}#{n}" for n in range(1, PRS + 1)]  # the repo's stays
    assert (recorded(org.rt.redis, REPOS[0]) or {}).get("enforcement") == "active"


def _disable(rule: dict[str, Any]) -> None:
    rule["enforcement"] = "disabled"


def _narrow(rule: dict[str, Any]) -> None:
    rule["conditions"]["repository_name"]["include"] = ["gadgets"]


def _bypass(rule: dict[str, Any]) -> None:
    rule["bypass_actors"] = [{"actor_id": 1, "actor_type": "OrganizationAdmin", "bypass_mode": "always"}]


def _org_event(org: Service, ruleset_id: int) -> None:
    event = fixture("repository_ruleset", "edited.payload.json")
    event.pop("repository", None)
    event["repository_ruleset"].update(id=ruleset_id, name=RULESET_NAME, enforcement="disabled",
                                       source_type="Organization", source=ORG)
    event.update(installation={"id": 1}, organization={"login": ORG, "id": 9})
    assert org.deliver("repository_ruleset", event).status_code == 202
    org.drain()


def _reconcile(org: Service, _ruleset_id: int) -> None:
    reconcile_repo(org.rt, REPOS[1], rebuild=False)


@pytest.mark.parametrize("tamper", [_disable, _narrow, _bypass], ids=["disabled", "repos-narrowed", "bypass-added"])
@pytest.mark.parametrize("repair", [_reconcile, _org_event], ids=["reconcile", "org-event"])
def test_an_org_ruleset_changed_behind_our_back_is_repaired(org: Service, github_emulator: GitHubEmulator,
                                                            tamper: Callable[[dict[str, Any]], None],
                                                            repair: Callable[[Service, int], None]) -> None:
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    org.drain()
    ruleset_id = int((org_record(org.rt.redis, ORG) or {})["id"])
    tamper(github_emulator.rulesets[ruleset_id])
    if tamper is not _bypass:
        assert github_emulator.mergeable(REPOS[0], 1)  # the tampering opened the gate
    repair(org, ruleset_id)
    assert unmergeable(github_emulator) == everything()
    repaired = github_emulator.rulesets[ruleset_id]
    assert (repaired["enforcement"], repaired["bypass_actors"]) == ("active", [])
    assert len(org_rulesets(github_emulator)) == 1


def _lose_permission(org: Service, emu: GitHubEmulator) -> None:
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4710"))  # an org ruleset first
    execute(org.rt, request(), ChatCommand("unhold", ORG))
    org.drain()
    emu.set_installation_permissions(1, ADMIN)


def _no_plan(_org: Service, emu: GitHubEmulator) -> None:
    emu.set_org_rulesets(ORG, False)


@pytest.mark.parametrize(("lose", "status"), [(_lose_permission, 403), (_no_plan, 403)],
                         ids=["permission-lost", "no-plan"])
def test_without_org_rulesets_the_org_freeze_uses_per_repo_rulesets(
        org: Service, github_emulator: GitHubEmulator, redis_client: Redis,
        lose: Callable[[Service, GitHubEmulator], None], status: int) -> None:
    lose(org, github_emulator)
    github_emulator.reset_log()
    reply = execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    assert f"per-repo rulesets: org rulesets unavailable (GitHub answered {status}" in reply.text
    assert "rulesets active in 2 of 2 repos" in reply.text
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (1, 2)  # one refused try
    assert unmergeable(github_emulator) == everything()
    assert redis_client.exists(keys.org_freeze_fallback(ORG))
    org.drain()
    listing = execute(org.rt, request(), ChatCommand("list", ORG)).text
    assert "incident 4711 — per-repo rulesets: org rulesets unavailable" in listing
    github_emulator.reset_log()
    reply = execute(org.rt, request(), ChatCommand("unhold", ORG))
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (0, 2)  # not tried again so soon
    org.drain()
    assert unmergeable(github_emulator) == []


def test_a_permission_granted_again_brings_the_org_ruleset_back(org: Service, github_emulator: GitHubEmulator,
                                                                redis_client: Redis) -> None:
    """The org fell back (no Organization administration); once the installation accepts it (GitHub's
    ``installation`` ``new_permissions_accepted``), the next org freeze is one org ruleset again."""
    github_emulator.set_installation_permissions(1, ADMIN)
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4710"))
    execute(org.rt, request(), ChatCommand("unhold", ORG))
    org.drain()
    assert redis_client.exists(keys.org_freeze_fallback(ORG))
    github_emulator.set_installation_permissions(1, ORG_ADMIN)
    event = fixture("installation", "new_permissions_accepted.payload.json")
    event["installation"].update(id=1)
    event["installation"]["account"].update(login=ORG)
    event["repositories"] = [{"full_name": r, "name": r.split("/", 1)[1]} for r in REPOS]
    assert org.deliver("installation", event).status_code == 202
    org.drain()
    assert not redis_client.exists(keys.org_freeze_fallback(ORG))
    github_emulator.reset_log()
    reply = execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    assert "org ruleset active over 2 repos (one write)" in reply.text
    assert (org_writes(github_emulator), ruleset_writes(github_emulator)) == (1, 0)  # repo rulesets stay disabled
    assert unmergeable(github_emulator) == everything()
