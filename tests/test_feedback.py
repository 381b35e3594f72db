"""Every command answered on the PR: the decision (core.feedback) as a table, then end to end — signed
webhooks, real Redis and rq, reactions and replies observed at the GitHub emulator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from core import keys
from core.comment_rules import Outcome, apply_comment
from core.feedback import decide, typos
from core.permissions import Permission
from core.prstate import PullState
from core.repo_config import DEFAULT_CONFIG
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator

AT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)

TYPO_ROWS: list[tuple[str, list[tuple[str, str]]]] = [
    ("/hodl", [("/hodl", "/hold")]),
    ("/HODL waiting for CI", [("/hodl", "/hold")]),
    ("/unhlod", [("/unhlod", "/unhold")]),
    ("/hold-cancel", [("/hold-cancel", "/hold cancel")]),
    ("/holdcancel", [("/holdcancel", "/hold cancel")]),
    ("/un-hold", [("/un-hold", "/unhold")]),
    ("/unhold-all", [("/unhold-all", "/unhold all")]),
    ("/removehold", [("/removehold", "/remove-hold")]),
    ("/hlod", [("/hlod", "/hold")]),
    # not typos: our own commands, other bots' commands, words far from ours, quoted or code text
    ("/hold", []),
    ("/hold cancel", []),
    ("/unhold @bob", []),
    ("/remove-hold", []),
    ("/lgtm", []),
    ("/help", []),
    ("/unlock", []),
    ("/retest", []),
    ("/approve", []),
    ("/holds", []),
    ("> /hodl", []),
    ("```\n/hodl\n```", []),
    ("`/hodl`", []),
    ("please /hodl this", []),
    ("/hodl/x", []),
    ("/", []),
    ("/tmp/hold is a path", []),
]


@pytest.mark.parametrize(("body", "expected"), TYPO_ROWS, ids=[r[0] for r in TYPO_ROWS])
def test_typos(body: str, expected: list[tuple[str, str]]) -> None:
    assert typos(body) == expected


def _apply(body: str, actor: str, permission: Permission, state: PullState | None = None,
           ) -> tuple[PullState, PullState, list[Outcome]]:
    before = state or PullState("acme/widgets", 5)
    after, outcomes = apply_comment(before, body, actor=actor, permission=permission, is_author=False,
                                    at=AT, ref="7", origin="", config=DEFAULT_CONFIG)
    return before, after, outcomes


def test_accepted_command_gets_eyes_then_thumbs_up_and_no_reply() -> None:
    before, _after, outcomes = _apply("/hold wait", "alice", Permission.WRITE)
    answer = decide("/hold wait", outcomes, mode="reactions", before=before, at=AT)
    assert answer.reactions == ("eyes", "+1") and answer.reply is None


def test_refused_command_names_the_permission_needed() -> None:
    before, _after, outcomes = _apply("/hold wait", "mallory", Permission.READ)
    answer = decide("/hold wait", outcomes, mode="reactions", before=before, at=AT)
    assert answer.reactions == ("eyes",)
    assert answer.reply is not None and "write access" in answer.reply and "@mallory" in answer.reply


def test_lifting_someone_elses_hold_without_rights_is_refused_with_the_reason() -> None:
    _b, held, _o = _apply("/hold mine", "alice", Permission.WRITE)
    before, _after, outcomes = _apply("/unhold @alice", "bob", Permission.WRITE, held)
    answer = decide("/unhold @alice", outcomes, mode="reactions", before=before, at=AT)
    assert answer.reply is not None and "maintain access" in answer.reply


def test_unknown_unhold_target_says_who_holds() -> None:
    _b, held, _o = _apply("/hold mine", "alice", Permission.WRITE)
    before, _after, outcomes = _apply("/unhold @carol", "maria", Permission.MAINTAIN, held)
    answer = decide("/unhold @carol", outcomes, mode="reactions", before=before, at=AT)
    assert answer.reply is not None
    assert "@carol has no hold" in answer.reply and "@alice" in answer.reply


def test_a_hold_that_came_in_after_a_later_lift_is_answered_as_not_held() -> None:
    """Deliveries arrive out of order: a /hold written before its holder's /unhold but delivered after
    it changes nothing, and the answer says so instead of a 👍 (the verdict stays free)."""
    lifted, _a, _o = _apply("/unhold", "alice", Permission.WRITE)
    lifted = apply_comment(lifted, "/unhold", actor="alice", permission=Permission.WRITE, is_author=False,
                           at=AT + timedelta(seconds=1), ref="9", origin="", config=DEFAULT_CONFIG)[0]
    before, after, outcomes = _apply("/hold wait", "alice", Permission.WRITE, lifted)
    assert after == before
    answer = decide("/hold wait", outcomes, mode="reactions", before=before, at=AT)
    assert answer.reactions == ("eyes",)
    assert answer.reply is not None and answer.reply.startswith("@alice: not held — this /hold")


def test_modes() -> None:
    before, _after, outcomes = _apply("/hold wait", "alice", Permission.WRITE)
    comments = decide("/hold wait", outcomes, mode="comments", before=before, at=AT)
    assert comments.reactions == () and comments.reply is not None and "held this PR" in comments.reply
    assert decide("/hold wait", outcomes, mode="off", before=before, at=AT).empty
    assert decide("/hodl", [], mode="off", before=before, at=AT).empty
    assert decide("just a remark", [], mode="reactions", before=before, at=AT).empty


@pytest.mark.parametrize("body", ["/hodl", "/hold x\n/unhlod", "/hold-cancel"])
def test_reply_never_starts_a_line_with_a_command(body: str) -> None:
    answer = decide(body, [], mode="reactions", before=None, at=AT)
    assert answer.reply is not None
    assert not any(line.lstrip().startswith("/") for line in answer.reply.splitlines())
    assert typos(answer.reply) == []  # our reply, read as a comment, holds no command and no typo


# --- end to end -----------------------------------------------------------------------------------

REPO = "acme/widgets"
PR = 5
SHA = "5" * 40


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    emu.add_installation(3, "acme")
    emu.set_installation_permissions(3, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                         "issues": "write", "statuses": "write"})
    emu.add_repo(REPO, installation_id=3)
    emu.add_pull(REPO, PR, head_sha=SHA, head_ref="feature", user="octocat")
    emu.set_permission(REPO, "alice", "write")
    emu.set_permission(REPO, "mallory", "read")
    yield Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))


def deliver_comment(svc: Service, emu: GitHubEmulator, body: str, *, user: str = "alice",
                    association: str = "MEMBER", user_type: str = "User", delivery_id: str | None = None,
                    comment_id: int | None = None) -> int:
    """Post the comment at the emulator (as GitHub would hold it) and deliver its `issue_comment`."""
    if comment_id is None:
        comment_id = emu.add_issue_comment(REPO, PR, user=user, body=body, created_at="2026-01-05T10:00:00Z",
                                           author_association=association)
    payload = fixture("issue_comment", "created.payload.json")
    payload["repository"] = {**payload["repository"], "full_name": REPO, "default_branch": "main"}
    payload["installation"] = {"id": 3}
    payload["issue"].update(number=PR, pull_request={"url": "x"})
    payload["comment"].update(body=body, author_association=association, created_at="2026-01-05T10:00:00Z",
                              id=comment_id)
    payload["comment"]["user"] = {**payload["comment"]["user"], "login": user, "type": user_type}
    payload["sender"] = payload["comment"]["user"]
    assert svc.deliver("issue_comment", payload, delivery_id=delivery_id).status_code == 202
    svc.drain()
    return comment_id


def replies(emu: GitHubEmulator) -> list[str]:
    return [c.body for c in emu.comments if c.user == emu.bot_login]


def test_typo_gets_exactly_one_helpful_reply_and_redelivery_posts_nothing(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    comment_id = deliver_comment(svc, emu, "/hodl waiting for the DB migration", delivery_id="d-1")
    [reply] = replies(emu)
    assert "`/hodl` is not a merge-hold command" in reply and "`/hold`" in reply
    assert [r["content"] for r in emu.reactions] == ["eyes"]
    # GitHub's redelivery (same delivery id) and our sweep's (a new one) answer nothing more.
    deliver_comment(svc, emu, "/hodl waiting for the DB migration", delivery_id="d-1", comment_id=comment_id)
    deliver_comment(svc, emu, "/hodl waiting for the DB migration", delivery_id="d-2", comment_id=comment_id)
    assert len(replies(emu)) == 1 and len(emu.reactions) == 1
    assert emu.count("POST", r"/issues/\d+/comments$") == 1
    # Our own reply, delivered back to us as an issue_comment, is not answered (no loop).
    deliver_comment(svc, emu, reply, user=emu.bot_login, association="NONE", user_type="Bot",
                    comment_id=emu.comments[-1].id)
    assert len(replies(emu)) == 1


def test_accepted_hold_is_acknowledged_with_reactions(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    comment_id = deliver_comment(svc, emu, "/hold waiting for QA")
    assert [(r["comment_id"], r["content"]) for r in emu.reactions] == [(comment_id, "eyes"), (comment_id, "+1")]
    assert replies(emu) == []
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "failure"


def test_a_hold_delivered_after_its_later_unhold_is_answered_and_recorded_as_not_held(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    """GitHub does not promise delivery order: alice's /hold, then her /unhold, delivered the other way
    round. The verdict is free, and the answer and the history say the hold changed nothing."""
    emu = github_emulator
    hold_id = emu.add_issue_comment(REPO, PR, user="alice", body="/hold wait", created_at="2026-01-05T10:00:00Z",
                                    author_association="MEMBER")
    unhold_id = emu.add_issue_comment(REPO, PR, user="alice", body="/unhold", created_at="2026-01-05T10:00:00Z",
                                      author_association="MEMBER")
    deliver_comment(svc, emu, "/unhold", comment_id=unhold_id)
    deliver_comment(svc, emu, "/hold wait", comment_id=hold_id)
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "success"
    [reply] = replies(emu)
    assert reply.startswith("@alice: not held — this /hold") and "which stands" in reply
    assert [(r["comment_id"], r["content"]) for r in emu.reactions if r["comment_id"] == hold_id] == [
        (hold_id, "eyes")]
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], svc.redis.xrange(keys.history(REPO)))
    events = [fields[b"event"].decode() for _id, fields in entries if fields[b"event"].startswith(b"hold.")]
    assert events == ["hold.lifted", "hold.superseded"]


def test_refused_hold_gets_a_reply_naming_the_permission(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    deliver_comment(svc, emu, "/hold I want this", user="mallory", association="CONTRIBUTOR")
    [reply] = replies(emu)
    assert "@mallory" in reply and "write access" in reply
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "success"


def test_other_bots_are_not_answered(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    deliver_comment(svc, emu, "/hodl", user="renovate[bot]", association="NONE", user_type="Bot")
    assert replies(emu) == [] and emu.reactions == []


def test_missing_issues_write_never_blocks_the_status(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    emu.set_installation_permissions(3, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                         "issues": "read", "statuses": "write"})
    deliver_comment(svc, emu, "/hold no rights to react")
    assert emu.reactions == [] and emu.count("POST", r"/reactions$") == 1  # tried once, refused (403)
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "failure"


def test_repo_config_feedback_off_answers_nothing(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    emu.set_file(REPO, ".github/merge-hold.yml", "feedback: off\n")
    deliver_comment(svc, emu, "/hodl")
    deliver_comment(svc, emu, "/hold quietly")
    assert replies(emu) == [] and emu.reactions == []
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "failure"


def test_comments_mode_replies_to_accepted_commands(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    emu.set_file(REPO, ".github/merge-hold.yml", "feedback: comments\n")
    deliver_comment(svc, emu, "/hold for 2h release")
    [reply] = replies(emu)
    assert "@alice held this PR for 2h" in reply and emu.reactions == []


# --- lifts with a reason: a refused or unreadable lift still gets its one answer (issue 16 item 1) -----

@pytest.mark.parametrize(("body", "user", "association", "says"), [
    ("/unhold looks good now", "mallory", "CONTRIBUTOR", "lifting your hold needs write access"),
    ("/hold cancel further review has happened", "mallory", "CONTRIBUTOR", "lifting your hold needs write access"),
    ("/unhold @alice she is away", "bob", "MEMBER", "lifting @alice's hold needs maintain access"),
    ("/unhold all release shipped", "bob", "MEMBER", "lifting every hold needs maintain access"),
    ("/unhold @-alice please", "bob", "MEMBER", "names no GitHub user, so nothing was lifted"),
    ("/remove-hold @", "bob", "MEMBER", "names no GitHub user, so nothing was lifted"),
    ("/remove-hold ready", "bob", "MEMBER", "@bob has no hold on this PR to lift (comment holds: @alice)"),
])
def test_a_refused_or_unreadable_lift_is_answered_once_and_lifts_nothing(
        svc: Service, github_emulator: GitHubEmulator, body: str, user: str, association: str, says: str) -> None:
    emu = github_emulator
    emu.set_permission(REPO, "bob", "write")
    deliver_comment(svc, emu, "/hold mine", comment_id=900)
    assert replies(emu) == []
    lift_id = deliver_comment(svc, emu, body, user=user, association=association)
    [reply] = replies(emu)
    assert says in reply, reply
    assert [r["content"] for r in emu.reactions if r["comment_id"] == lift_id] == ["eyes"]
    assert (emu.latest_status(REPO, SHA) or {}).get("state") == "failure", "alice's hold stands"
    deliver_comment(svc, emu, body, user=user, association=association, comment_id=lift_id)  # redelivered
    assert len(replies(emu)) == 1


def test_a_lift_with_a_reason_is_applied_and_keeps_the_reason(svc: Service, github_emulator: GitHubEmulator) -> None:
    emu = github_emulator
    deliver_comment(svc, emu, "/hold mine", comment_id=900)
    lift_id = deliver_comment(svc, emu, "/hold cancel further review has happened")
    assert [r["content"] for r in emu.reactions if r["comment_id"] == lift_id] == ["eyes", "+1"]
    assert replies(emu) == [] and (emu.latest_status(REPO, SHA) or {}).get("state") == "success"
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], svc.redis.xrange(keys.history(REPO)))
    lifted = [json.loads(f[b"data"]) for _i, f in entries if f[b"event"] == b"hold.lifted"]
    assert [(e["actor"], e["reason"], e["message"]) for e in lifted] == [
        ("alice", "further review has happened", "@alice lifted the hold")]
