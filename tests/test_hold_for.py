"""`/hold-for`: the grammar as a table, then end to end — a hold that lifts itself when the other PR
merges or the issue closes (signed webhooks, real Redis and rq, the GitHub emulator)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from core import keys
from core.holdfor import Dependency, HoldFor, parse_hold_for
from merge_hold import samples
from tests.e2e_support import Service, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator

REPO, LIB = "acme/widgets", "acme/lib"
PR, DEP = 5, 7
SHA = "5" * 40
AT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)

GRAMMAR: list[tuple[str, list[HoldFor]]] = [
    ("/hold-for #7", [HoldFor(Dependency(REPO, 7))]),
    ("/HOLD-FOR acme/lib#45", [HoldFor(Dependency(LIB, 45))]),
    ("/hold-for https://github.com/acme/lib/pull/45", [HoldFor(Dependency(LIB, 45))]),
    ("/hold-for https://github.com/acme/lib/issues/3/", [HoldFor(Dependency(LIB, 3))]),
    ("/hold-for cancel", [HoldFor(None)]),
    ("/hold-for #7\n/hold-for #7", [HoldFor(Dependency(REPO, 7))]),
    ("/hold-for #0", [HoldFor(None, "`/hold-for #0`: expected `#123`, `owner/repo#123` or a PR or issue URL")]),
    ("/hold-for", [HoldFor(None, "`/hold-for `: expected `#123`, `owner/repo#123` or a PR or issue URL")]),
    ("/hold-for https://github.com/acme/lib/commit/abc", [HoldFor(None, "`/hold-for https://github.com/acme/lib"
                                                                     "/commit/abc`: expected `#123`, "
                                                                     "`owner/repo#123` or a PR or issue URL")]),
    ("> /hold-for #7", []),
    ("`/hold-for #7`", []),
    ("/hold-for #7 and more words", []),
    ("/hold for 2h", []),
]


@pytest.mark.parametrize(("body", "expected"), GRAMMAR, ids=[g[0] for g in GRAMMAR])
def test_grammar(body: str, expected: list[HoldFor]) -> None:
    assert parse_hold_for(body, REPO) == expected


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    emu.add_installation(3, "acme")
    emu.set_installation_permissions(3, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                         "issues": "write", "statuses": "write"})
    emu.add_repo(REPO, installation_id=3)
    emu.add_repo(LIB, installation_id=3)
    emu.add_pull(REPO, PR, head_sha=SHA, head_ref="feature", user="octocat")
    emu.add_pull(REPO, DEP, head_sha="7" * 40, head_ref="dependency", user="octocat")
    emu.add_issue(LIB, 3, title="Fix the schema")
    emu.set_permission(REPO, "alice", "write")
    emu.set_permission(REPO, "mallory", "read")
    yield Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))


def comment(svc: Service, emu: GitHubEmulator, body: str, *, user: str = "alice") -> None:
    comment_id = emu.add_issue_comment(REPO, PR, user=user, body=body, created_at="2026-01-05T10:00:00Z")
    payload = samples.issue_comment_event(REPO, PR, body=body, commenter=user, at=AT, comment_id=comment_id,
                                          installation_id=3)
    assert svc.deliver("issue_comment", payload).status_code == 202
    svc.drain()


def merged(svc: Service, emu: GitHubEmulator, *, merge: bool = True, delivery_id: str | None = None) -> None:
    emu.update_pull(REPO, DEP, state="closed", merged=merge)
    payload = samples.pull_request_event(REPO, DEP, action="closed", at=AT, installation_id=3, state="closed",
                                         sha="7" * 40, head_ref="dependency")
    payload["pull_request"].update(merged=merge, merged_at=samples.iso(AT) if merge else None)
    assert svc.deliver("pull_request", payload, delivery_id=delivery_id).status_code == 202
    svc.drain()


def status(emu: GitHubEmulator) -> tuple[str, str]:
    found = emu.latest_status(REPO, SHA) or {}
    return found.get("state", ""), found.get("description", "")


def replies(emu: GitHubEmulator) -> list[str]:
    return [c.body for c in emu.comments if c.user == emu.bot_login]


def test_held_until_the_other_pr_merges(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    comment(svc, emu, "/hold-for #7")
    assert status(emu) == ("failure", "Held by @alice: waiting for acme/widgets#7 to merge")
    assert [r["content"] for r in emu.reactions] == ["eyes", "+1"]
    merged(svc, emu, merge=False)  # closed without merging: what was waited for did not land
    assert status(emu)[0] == "failure"
    merged(svc, emu, delivery_id="merged-1")
    assert status(emu) == ("success", "No holds")
    assert replies(emu) == ["@alice's hold lifted: acme/widgets#7 was merged."]
    history: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(keys.history(REPO))  # type: ignore[assignment]
    lifts = [json.loads(f[b"data"]) for _id, f in history if f[b"event"] == b"hold.lifted"]
    assert [(e["number"], e["target"], e["reason"]) for e in lifts] == [(PR, "alice", "acme/widgets#7 merged")]
    merged(svc, emu, delivery_id="merged-2")  # redelivered: nothing more
    assert len(replies(emu)) == 1


def test_issue_in_another_repo_of_the_installation(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    comment(svc, emu, "/hold-for https://github.com/acme/lib/issues/3")
    assert status(emu) == ("failure", "Held by @alice: waiting for acme/lib#3 to close")
    emu.close_issue(LIB, 3)
    closed = {"action": "closed", "issue": {"number": 3, "state": "closed", "title": "Fix the schema"},
              "repository": samples.repository(LIB), "installation": {"id": 3}, "sender": samples.user("octocat")}
    assert svc.deliver("issues", closed).status_code == 202
    svc.drain()
    assert status(emu) == ("success", "No holds")
    assert replies(emu) == ["@alice's hold lifted: acme/lib#3 was closed."]


@pytest.mark.parametrize(("body", "user", "said"), [
    ("/hold-for #5", "alice", "cannot wait for itself"),
    ("/hold-for other/repo#1", "alice", "cannot see other/repo#1"),
    ("/hold-for #7", "mallory", "/hold-for needs write access"),
    ("/hold-for cancel", "alice", "no /hold-for on this PR"),
    ("/hold-for #nope", "alice", "expected `#123`"),
])
def test_refusals_are_answered(svc: Service, github_emulator: GitHubEmulator, body: str, user: str,
                               said: str) -> None:
    comment(svc, github_emulator, body, user=user)
    [reply] = replies(github_emulator)
    assert said in reply
    assert status(github_emulator)[0] == "success"


def test_already_merged_and_cancel(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    comment(svc, emu, "/hold-for #7")
    comment(svc, emu, "/hold-for cancel")
    assert status(emu) == ("success", "No holds")
    emu.update_pull(REPO, DEP, state="closed", merged=True)
    comment(svc, emu, "/hold-for #7")
    assert "already merged" in replies(emu)[-1]
    assert status(emu)[0] == "success"
