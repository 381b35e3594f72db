"""A hold placed on a PR's dashboard page is the user's own hold, as their `/hold` comment would be
(issue #9 item 3, design §3): recorded in the PR's per-holder register, lifted by their `/unhold`
comment or a maintainer, never let through by an exemption, kept by `reconcile --rebuild`. Through the
real app, a real rq worker, Redis and the GitHub emulator (statuses read back at the emulator)."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from redis import Redis

from core import keys
from core.holds import from_iso, to_iso
from merge_hold.tokens import create as create_token
from state import room_holds
from tests.chat_support import head_sha, seed_repo
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, GitHubEmulator, private_key_pem
from tests.emulator.oauth import CLIENT_ID, CLIENT_SECRET
from tests.test_github_login import PUBLIC, sign_in
from tests.webapp_support import post_form
from workers.ops.reconcile import reconcile_repo

REPO = "acme/widgets"
PAGE = f"/{REPO}/pull/1"


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, tmp_path: Path) -> Service:
    emu = github_emulator
    seed_repo(emu, redis_client, REPO, 2)
    for login, role in (("alice", "write"), ("carol", "maintain"), ("bob", "read")):
        emu.set_permission(REPO, login, role)
    return Service.start(service_settings(
        redis_url, emu.url, APP_ID, private_key_pem(), emu.app_slug, github_client_id=CLIENT_ID,
        github_client_secret=CLIENT_SECRET, github_web_url=emu.url, public_url=PUBLIC,
        api_tokens_file=str(tmp_path / "tokens"), write_rate_per_minute=60_000))


def user(svc: Service, emu: GitHubEmulator, login: str) -> FlaskClient:
    client = svc.app.test_client()
    sign_in(client, emu, login)
    return client


def post(client: FlaskClient, path: str, data: dict[str, str]) -> str:
    """Submit a form of the PR's page with its CSRF token; returns the page it lands on."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(PAGE).get_data(as_text=True))
    assert found is not None
    answer = client.post(path, data={**data, "csrf_token": found[1]})
    assert answer.status_code == 302, answer.get_data(as_text=True)
    return html.unescape(client.get(answer.headers["Location"]).get_data(as_text=True))


def state(emu: GitHubEmulator) -> str | None:
    return (emu.latest_status(REPO, head_sha(REPO, 1)) or {}).get("state")


def holds(svc: Service) -> list[dict[str, Any]]:
    return list((svc.verdict(REPO, 1) or {}).get("holds") or [])


def held_from_the_page(svc: Service, emu: GitHubEmulator, alice: FlaskClient) -> dict[str, Any]:
    page = post(alice, f"{PAGE}/hold", {"reason": "waiting for DB migration", "for": "2h"})
    assert "Held acme/widgets#1: waiting for DB migration" in page
    svc.drain()
    assert state(emu) == "failure"
    [hold] = holds(svc)
    assert (hold["id"], hold["source"], hold["holder"], hold["origin"]) == ("comment:alice", "comment", "alice",
                                                                            "dashboard")
    assert hold["expires_at"] is not None
    assert room_holds.holds_in(svc.redis, keys.room_holds(REPO)) == []  # not a room hold
    return hold


def placed(hold: dict[str, Any]) -> datetime:
    at = from_iso(hold["created_at"])
    assert at is not None
    return at


def comment(svc: Service, emu: GitHubEmulator, login: str, body: str, at: str) -> None:
    """A real `issue_comment` delivery, the comment also at the emulator (for a rebuild to read)."""
    comment_id = emu.add_issue_comment(REPO, 1, user=login, body=body, created_at=at,
                                       author_association="COLLABORATOR")
    payload = fixture("issue_comment", "created.payload.json")
    payload["repository"] = {**payload["repository"], "full_name": REPO}
    payload["issue"].update(number=1, pull_request={"url": "x"}, user={"login": "octocat"})
    payload["comment"].update(body=body, author_association="COLLABORATOR", created_at=at, id=comment_id,
                              user={**payload["comment"]["user"], "login": login})
    assert svc.deliver("issue_comment", payload).status_code in (200, 202)
    svc.drain()


def test_a_page_hold_is_the_users_comment_hold_no_exemption_frees_it_their_unhold_does(
        svc: Service, github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    alice = user(svc, emu, "alice")
    hold = held_from_the_page(svc, emu, alice)
    status = emu.latest_status(REPO, head_sha(REPO, 1))
    assert status is not None and "waiting for DB migration" in status["description"]

    page = alice.get(PAGE).get_data(as_text=True)
    assert "@alice held this PR for 2h: waiting for DB migration (dashboard)" in page  # the audit, as a sentence
    assert 'name="holder" value="alice"' in page  # her lift button
    token = create_token(tmp_path / "tokens", "reader", "read")
    listed = svc.client.get("/api/v1/holds", headers={"Authorization": f"Bearer {token}"}).get_json()
    assert [(h["number"], h["id"], h["origin"]) for h in listed["holds"]] == [(1, "comment:alice", "dashboard")]

    # A chat exemption lets the PR through room holds and freezes, never through a person's hold.
    room_holds.place_hold(svc.redis, f"{REPO}#1", holder="dana", holder_id="slack:U1", reason="freeze",
                          origin="slack", now=placed(hold))
    room_holds.place_exemption(svc.redis, f"{REPO}#1", by="carol", reason="hotfix", origin="slack",
                               now=placed(hold), head_sha=head_sha(REPO, 1))
    svc.rt.queue.enqueue("workers.chat.rooms.republish_job", f"{REPO}#1")
    svc.drain()
    assert state(emu) == "failure"
    assert [h["id"] for h in holds(svc)] == ["comment:alice"]  # the room hold is exempted, hers is not

    # Her `/unhold` comment (a later second than the page's hold) lifts it, as it would her `/hold`'s.
    after = (placed(hold)) + timedelta(seconds=1)
    comment(svc, emu, "alice", "/unhold", str(to_iso(after)))
    assert holds(svc) == [] and state(emu) == "success"


def test_readers_are_refused_maintainers_lift_from_the_page_and_a_rebuild_keeps_page_commands(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    alice = user(svc, emu, "alice")
    held_from_the_page(svc, emu, alice)

    bob = user(svc, emu, "bob")
    page = bob.get(PAGE).get_data(as_text=True)
    assert 'class="hold-form"' not in page and 'name="holder"' not in page
    assert "Holding needs write access" in post(bob, f"{PAGE}/hold", {"reason": "mine"})
    assert "Lifting @alice's hold needs maintain access" in post(bob, f"{PAGE}/unhold", {"holder": "alice"})
    svc.drain()
    assert [h["holder"] for h in holds(svc)] == ["alice"] and state(emu) == "failure"

    # The rebuild re-reads GitHub, which has no comment for this hold: it must keep it all the same.
    reconcile_repo(svc.rt, REPO, rebuild=True)
    assert [(h["id"], h["origin"]) for h in holds(svc)] == [("comment:alice", "dashboard")]
    assert state(emu) == "failure"

    carol = user(svc, emu, "carol")
    assert 'name="holder" value="alice"' in carol.get(PAGE).get_data(as_text=True)
    assert "Lifted @alice's hold on acme/widgets#1" in post(carol, f"{PAGE}/unhold", {"holder": "alice"})
    svc.drain()
    assert holds(svc) == [] and state(emu) == "success"
    # ... and the page's lift survives a rebuild too (no hold comes back).
    reconcile_repo(svc.rt, REPO, rebuild=True)
    assert holds(svc) == [] and state(emu) == "success"


def test_a_maintainers_unhold_all_comment_lifts_a_page_hold(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    hold = held_from_the_page(svc, emu, user(svc, emu, "alice"))
    after = (placed(hold)) + timedelta(seconds=1)
    comment(svc, emu, "bob", "/unhold all", str(to_iso(after)))  # a reader: refused, nothing lifted
    assert state(emu) == "failure"
    comment(svc, emu, "carol", "/unhold @alice", str(to_iso(after)))
    assert holds(svc) == [] and state(emu) == "success"


def test_a_token_login_places_no_pr_hold(svc: Service, github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    """A PR hold is a GitHub user's: a token named like a user must not hold, or lift, as that user."""
    held_from_the_page(svc, github_emulator, user(svc, github_emulator, "alice"))
    machine = svc.app.test_client()
    token = create_token(tmp_path / "tokens", "alice", "admin")  # named like her, as strong as can be
    assert post_form(machine, "/login", {"token": token}).status_code == 302
    page = machine.get(PAGE).get_data(as_text=True)
    assert 'class="hold-form"' not in page and 'name="holder"' not in page and "sign in with GitHub" in page
    assert "needs Sign in with GitHub" in post(machine, f"{PAGE}/hold", {"reason": "as alice"})
    assert "needs Sign in with GitHub" in post(machine, f"{PAGE}/unhold", {"holder": "alice"})
    svc.drain()
    assert [(h["holder"], h["reason"]) for h in holds(svc)] == [("alice", "waiting for DB migration")]
