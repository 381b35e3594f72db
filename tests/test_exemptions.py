"""Exemptions bound to what was reviewed (issue 30 item 1) end to end: a room hold on acme/widgets, an
exemption from chat, the API or the page, `pull_request` deliveries through the real receiver, a real rq
worker, Redis and the GitHub emulator (statuses read back there), Slack on loopback.

A push ends an exemption (status and verdict record held again, the grantor told in the room it came
from, the PR page saying why); a base move does not; a sticky one follows pushes; an exempt label counts
only from a maintainer and for the head it was added on; an exemption stored before heads were recorded
keeps working, as sticky."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from merge_hold.tokens import create as create_token
from state import store
from tests.chat_support import head_sha
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.emulator.state import RequestRecord
from tests.semantics_support import REPO, chat, pull_event, serve, status
from tests.slack_standin import SlackStandIn
from tests.test_github_login import PUBLIC, sign_in
from tests.webapp_support import post_form
from workers.chat.rooms import execute

H1, H2 = head_sha(REPO, 1), "2" * 40
FROZEN = "Held by @dana in slack:acme-eng/#releases: incident 4711"


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, slack: SlackStandIn,
        tmp_path: Path) -> Service:
    service = serve(github_emulator, redis_client, redis_url, slack, api_tokens_file=str(tmp_path / "tokens"))
    for login, role in (("mia", "maintain"), ("tom", "triage"), ("ada", "admin")):
        github_emulator.set_permission(REPO, login, role)
    github_emulator.set_installation_permissions(1, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                                     "issues": "write", "statuses": "write"})
    assert svc_run(service, ChatCommand("hold", REPO, reason="incident 4711")).startswith("@dana held acme/widgets")
    assert status(github_emulator, H1) == ("failure", FROZEN)
    return service


def svc_run(svc: Service, command: ChatCommand) -> str:
    reply = execute(svc.rt, chat(), command).text
    svc.drain()
    return reply


def push(svc: Service, emulator: GitHubEmulator, sha: str, number: int = 1) -> None:
    """A push to the PR's branch: its `synchronize` event carries the new head and the PR's labels."""
    emulator.update_pull(REPO, number, head_sha=sha)
    labels = tuple(emulator.require_pull(REPO, number).labels)
    assert svc.deliver("pull_request", pull_event(number, "synchronize", sha=sha, labels=labels)).status_code == 202
    svc.drain()


def events(svc: Service, name: str) -> list[dict[str, Any]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(keys.history(REPO))  # type: ignore[assignment]
    return [json.loads(fields[b"data"]) for _, fields in entries if fields[b"event"].decode() == name]


def test_a_push_after_an_exemption_holds_the_pr_again_and_the_room_hears_it(
        svc: Service, github_emulator: GitHubEmulator, slack: SlackStandIn) -> None:
    reply = svc_run(svc, ChatCommand("exempt", f"{REPO}#1", reason="the fix"))
    assert f"on its head {H1[:7]} (a new push ends it)" in reply
    assert status(github_emulator, H1) == ("success", "No holds")
    assert (svc.verdict(REPO, 1) or {})["held"] is False

    push(svc, github_emulator, H2)

    assert status(github_emulator, H2) == ("failure", FROZEN)
    record = svc.verdict(REPO, 1) or {}
    assert (record["held"], record["head_sha"]) == (True, H2)
    assert store.exemption(svc.redis, REPO, 1) is None
    [ended] = events(svc, "exemption.ended")
    assert (ended["number"], ended["by"], ended["granted_head"], ended["head_sha"], ended["cause"]) == (
        1, "dana", H1, H2, "push")
    # The grantor hears it in the room the exemption came from (#releases, through the bot).
    [told] = slack.wait(1)
    assert told["channel"] == "C0REL"
    assert f"covered {H1[:7]}" in told["text"] and f"to {H2[:7]}" in told["text"]
    # The PR page says why (its history, in words).
    token = create_token(Path(svc.settings.api_tokens_file or ""), "ops", "admin")
    client = svc.app.test_client()
    assert post_form(client, "/login", {"token": token}).status_code == 302
    page = html.unescape(client.get(f"/{REPO}/pull/1").get_data(as_text=True))
    assert f"a push moved this PR to <code>{H2[:7]}</code>" in page
    assert f"A push moved this PR to {H2[:7]}: the exemption @dana granted (the fix) covered {H1[:7]} only" in page


def test_a_base_move_does_not_end_it(svc: Service, github_emulator: GitHubEmulator, slack: SlackStandIn) -> None:
    svc_run(svc, ChatCommand("exempt", f"{REPO}#1", reason="the fix"))
    github_emulator.update_pull(REPO, 1, base="release/2")
    retarget = pull_event(1, "edited", sha=H1, base="release/2",
                          extra={"changes": {"base": {"ref": {"from": "main"}, "sha": {"from": "0" * 40}}}})
    assert svc.deliver("pull_request", retarget).status_code == 202
    svc.drain()
    assert (svc.verdict(REPO, 1) or {})["base"] == "release/2"
    assert status(github_emulator, H1) == ("success", "No holds")
    found = store.exemption(svc.redis, REPO, 1)
    assert found is not None and found.head_sha == H1 and events(svc, "exemption.ended") == []
    assert slack.posted == []


def test_a_sticky_exemption_follows_pushes(svc: Service, github_emulator: GitHubEmulator) -> None:
    reply = svc_run(svc, ChatCommand("exempt", f"{REPO}#1", reason="release train", sticky=True))
    assert "on every head (sticky: new pushes too)" in reply
    push(svc, github_emulator, H2)
    assert status(github_emulator, H2) == ("success", "No holds")
    push(svc, github_emulator, "3" * 40)
    assert status(github_emulator, "3" * 40) == ("success", "No holds")
    assert events(svc, "exemption.ended") == []
    found = store.exemption(svc.redis, REPO, 1)
    assert found is not None and found.sticky


def test_an_exemption_stored_before_heads_were_recorded_keeps_working_as_sticky(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    # Exactly what the release before this one wrote (`Exemption.to_dict` had no head and no sticky)...
    old = {"pr_scope": f"{REPO}#1", "by": "dana", "reason": "security fix", "created_at": "2026-03-01T10:00:00Z",
           "expires_at": None, "origin": "slack:acme-eng/#releases"}
    svc.redis.hset(keys.exemptions(REPO), "1", json.dumps(old))
    # ...beside one of this release, bound to PR 2's head.
    new = {**old, "pr_scope": f"{REPO}#2", "head_sha": head_sha(REPO, 2), "sticky": False}
    svc.redis.hset(keys.exemptions(REPO), "2", json.dumps(new))
    for number, sha in ((1, H2), (2, "4" * 40)):
        push(svc, github_emulator, sha, number)
    assert status(github_emulator, H2) == ("success", "No holds")  # the old form follows every push
    assert status(github_emulator, "4" * 40) == ("failure", FROZEN)  # the new form covered its head only
    push(svc, github_emulator, "3" * 40)
    assert status(github_emulator, "3" * 40) == ("success", "No holds")
    assert json.loads(svc.redis.hget(keys.exemptions(REPO), "1") or "{}") == old  # left as it was
    listed = svc.client.get("/api/v1/exemptions", headers=api(svc, "read")).get_json()["exemptions"]
    assert [(e["pr_scope"], e["sticky"], e["in_force"]) for e in listed] == [(f"{REPO}#1", True, True)]


def replies_on_1(emulator: GitHubEmulator) -> list[RequestRecord]:
    return [r for r in emulator.requests if r.method == "POST" and r.path.endswith("/issues/1/comments")
            and r.status == 201]


def label(svc: Service, github_emulator: GitHubEmulator, name: str, sender: str, *, added: bool = True,
          sha: str = H1) -> dict[str, object]:
    labels = (name,) if added else ()
    github_emulator.update_pull(REPO, 1, labels=list(labels))
    event = pull_event(1, "labeled" if added else "unlabeled", sha=sha, labels=labels, label=name, sender=sender)
    assert svc.deliver("pull_request", event).status_code == 202
    svc.drain()
    return event


@pytest.fixture()
def hotfix(svc: Service, github_emulator: GitHubEmulator) -> Service:
    github_emulator.set_file(REPO, ".github/merge-hold.yml", "exempt_labels: [hotfix]\nfeedback: reactions\n")
    store.save_repo(svc.redis, REPO, store.RepoMeta(installation_id=1, config_loaded=True,
                                                    config_text="exempt_labels: [hotfix]\n"))
    return svc


def test_an_exempt_label_from_a_triager_is_ignored_audited_and_answered(
        hotfix: Service, github_emulator: GitHubEmulator) -> None:
    event = label(hotfix, github_emulator, "hotfix", "tom")
    assert status(github_emulator, H1) == ("failure", FROZEN)
    [refused] = events(hotfix, "exemption.refused")
    assert (refused["sender"], refused["label"], refused["permission"]) == ("tom", "hotfix", "triage")
    replies = replies_on_1(github_emulator)
    assert len(replies) == 1
    assert "@tom: the label `hotfix` does not let this PR through" in replies[0].body["body"]
    assert "maintain or admin" in replies[0].body["body"]
    # Redelivered (GitHub's redelivery: a new delivery id), it is audited and answered no more.
    assert hotfix.deliver("pull_request", event).status_code == 202
    hotfix.drain()
    assert len(replies_on_1(github_emulator)) == 1 and len(events(hotfix, "exemption.refused")) == 1
    assert status(github_emulator, H1) == ("failure", FROZEN)


def test_an_exempt_label_from_a_maintainer_covers_its_head_until_a_push(
        hotfix: Service, github_emulator: GitHubEmulator) -> None:
    label(hotfix, github_emulator, "hotfix", "mia")
    assert status(github_emulator, H1) == ("success", "No holds")
    push(hotfix, github_emulator, H2)
    assert status(github_emulator, H2) == ("failure", FROZEN)  # the label stays; it covered H1 only
    replies = [c.body["body"] for c in replies_on_1(github_emulator)]
    assert len(replies) == 1 and re.search(rf"covered {H1[:7]}; a push moved this PR to {H2[:7]}", replies[0])
    label(hotfix, github_emulator, "hotfix", "mia", added=False, sha=H2)
    label(hotfix, github_emulator, "hotfix", "mia", sha=H2)  # added again on the new head
    assert status(github_emulator, H2) == ("success", "No holds")


def test_never_from_what_the_author_controls(hotfix: Service, github_emulator: GitHubEmulator) -> None:
    """A branch named like the label, a title and body asking for it, the author's own label: held."""
    github_emulator.update_pull(REPO, 1, title="hotfix: exempt me", body="/hold exempt please\nhotfix")
    event = pull_event(1, "edited", labels=("hotfix",), sender="octocat",
                       extra={"changes": {"title": {"from": "x"}}})
    event["pull_request"].update(title="hotfix: exempt me", body="/hold exempt please")
    event["pull_request"]["head"]["ref"] = "hotfix"
    assert hotfix.deliver("pull_request", event).status_code == 202
    hotfix.drain()
    assert status(github_emulator, H1) == ("failure", FROZEN)
    label(hotfix, github_emulator, "hotfix", "octocat")  # the author (no access of their own)
    assert status(github_emulator, H1) == ("failure", FROZEN)


def api(svc: Service, scope: str) -> dict[str, str]:
    token = create_token(Path(svc.settings.api_tokens_file or ""), f"bot-{scope}", scope)
    return {"Authorization": f"Bearer {token}"}


def test_the_api_grants_head_bound_exemptions_and_sticky_ones_only_with_an_admin_token(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    hold = api(svc, "hold")
    body = {"target": f"{REPO}#1", "reason": "reviewed fix"}
    sticky = svc.client.post("/api/v1/exemptions", json={**body, "sticky": True}, headers=hold)
    assert sticky.status_code == 403 and "admin token" in sticky.get_json()["error"]
    stale = svc.client.post("/api/v1/exemptions", json={**body, "head_sha": "abcdef1"}, headers=hold)
    assert stale.status_code == 409 and stale.get_json()["head_sha"] == H1
    granted = svc.client.post("/api/v1/exemptions", json={**body, "head_sha": H1[:7]}, headers=hold)
    assert granted.status_code == 201, granted.get_json()
    shown = granted.get_json()["exemption"]
    assert (shown["head_sha"], shown["sticky"], shown["by"], shown["origin"]) == (H1, False, "token:bot-hold",
                                                                                  "api:bot-hold")
    svc.drain()
    assert status(github_emulator, H1) == ("success", "No holds")
    listed = svc.client.get("/api/v1/exemptions", headers=api(svc, "read")).get_json()["exemptions"]
    assert [(e["pr_scope"], e["in_force"]) for e in listed] == [(f"{REPO}#1", True)]
    push(svc, github_emulator, H2)
    assert status(github_emulator, H2) == ("failure", FROZEN)

    admin = api(svc, "admin")
    assert svc.client.post("/api/v1/exemptions", json={**body, "sticky": True}, headers=admin).status_code == 201
    svc.drain()
    assert status(github_emulator, H2) == ("success", "No holds")
    assert svc.client.delete(f"/api/v1/exemptions/{REPO}/1", headers=hold).status_code == 200
    svc.drain()
    assert status(github_emulator, H2) == ("failure", FROZEN)
    assert svc.client.delete(f"/api/v1/exemptions/{REPO}/1", headers=hold).status_code == 404


@pytest.mark.parametrize(("body", "problem"), [
    ({"target": REPO, "reason": "x"}, "one pull request"),
    ({"target": f"{REPO}#1"}, "reason is required"),
    ({"target": f"{REPO}#1", "reason": "x", "sticky": "yes"}, "sticky must be true or false"),
    ({"target": f"{REPO}#1", "reason": "x", "head_sha": "main"}, "head_sha must be the commit"),
    ({"target": f"{REPO}#1", "reason": "x", "for": "forever"}, "for must be a duration"),
])
def test_the_api_refuses_a_malformed_exemption(svc: Service, body: dict[str, object], problem: str) -> None:
    answer = svc.client.post("/api/v1/exemptions", json=body, headers=api(svc, "hold"))
    assert answer.status_code == 400 and problem in answer.get_json()["error"]
    assert store.exemption(svc.redis, REPO, 1) is None


@pytest.fixture()
def page_svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, slack: SlackStandIn) -> Service:
    service = serve(github_emulator, redis_client, redis_url, slack, github_client_id=CLIENT_ID,
                    github_client_secret=CLIENT_SECRET, github_web_url=github_emulator.url, public_url=PUBLIC)
    for login, role in (("mia", "maintain"), ("wes", "write"), ("ada", "admin")):
        github_emulator.set_permission(REPO, login, role)
    svc_run(service, ChatCommand("hold", REPO, reason="incident 4711"))
    return service


def page_form(svc: Service, emulator: GitHubEmulator, login: str, action: str,
              data: dict[str, str]) -> tuple[str, str]:
    """Sign in as ``login``, load the PR's page, submit one of its forms; (the page before, the page after)."""
    client = svc.app.test_client()
    sign_in(client, emulator, login)
    before = html.unescape(client.get(f"/{REPO}/pull/1").get_data(as_text=True))
    answer = post_form(client, f"/{REPO}/pull/1/{action}", data)
    assert answer.status_code == 302
    return before, html.unescape(client.get(answer.headers["Location"]).get_data(as_text=True))


def test_the_page_exempts_the_head_it_shows_for_maintainers_and_sticky_only_for_admins(
        page_svc: Service, github_emulator: GitHubEmulator) -> None:
    before, _ = page_form(page_svc, github_emulator, "wes", "exempt", {"reason": "x", "head_sha": H1})
    assert "Exempt <code>" not in before  # a writer is offered no form...
    _, after = page_form(page_svc, github_emulator, "wes", "exempt", {"reason": "x", "head_sha": H1})
    assert "an exemption needs maintain or admin access" in after  # ...and refused when posting anyway
    before, after = page_form(page_svc, github_emulator, "mia", "exempt",
                              {"reason": "reviewed", "head_sha": H1, "sticky": "1"})
    assert f"Exempt <code>{H1[:7]}</code>" in before and 'name="sticky"' not in before
    assert "a sticky exemption needs admin access" in after
    _, after = page_form(page_svc, github_emulator, "mia", "exempt", {"reason": "reviewed", "head_sha": "f" * 40})
    assert f"is at {H1[:7]} now, not fffffff as the page showed" in after
    _, after = page_form(page_svc, github_emulator, "mia", "exempt", {"reason": "reviewed", "head_sha": H1})
    assert f"Exempted {REPO}#1 from room and freeze holds on its head {H1[:7]} (a new push ends it)" in after
    page_svc.drain()
    assert status(github_emulator, H1) == ("success", "No holds")
    before, after = page_form(page_svc, github_emulator, "ada", "exempt",
                              {"reason": "train", "head_sha": H1, "sticky": "1"})
    assert 'name="sticky"' in before and "on every head (sticky: new pushes too)" in after
    page_svc.drain()
    push(page_svc, github_emulator, H2)
    assert status(github_emulator, H2) == ("success", "No holds")
    _, after = page_form(page_svc, github_emulator, "mia", "unexempt", {})
    assert "Ended the exemption of acme/widgets#1 (granted by @ada: train)" in after
    page_svc.drain()
    assert status(github_emulator, H2) == ("failure", FROZEN)
