"""Regression rows for issue #7's semantic findings, end to end: signed deliveries through the real app,
real Redis, a real rq worker, statuses read back at the GitHub emulator.

Review permission, same-second flips, merge groups ("Fixes #45", `held_state`, a hold placed while the
group is checked), config pushes handled out of order, edited comments on a rebuild, and a renamed or
transferred repository."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.test_e2e_webhooks import PR, REPO, SHA, comment, seed_hello_world, status

CONFIG = ".github/merge-hold.yml"


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    seed_hello_world(emu, alice="write", bob="write", rita="read", mallory="none")
    yield Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug))


def history(svc: Service, repo: str = REPO) -> list[tuple[str, str]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(f"mh:{{{repo.lower()}}}:history")  # type: ignore[assignment]
    return [(f[b"event"].decode(), f[b"data"].decode()) for _id, f in entries]


# --- reviews need hold_permission -------------------------------------------------------------------

REVIEW_ROWS = [
    # (why, reviewer, author_association, expected status)
    ("an outsider's review on a public repo holds nothing", "mallory", "NONE", ("success", "No holds")),
    ("a first-time contributor's neither", "mallory", "FIRST_TIME_CONTRIBUTOR", ("success", "No holds")),
    ("a member with read access neither (looked up)", "rita", "MEMBER", ("success", "No holds")),
    ("a member with write access holds", "bob", "MEMBER", ("failure", "Changes requested by @bob")),
    ("the owner holds", "Codertocat", "OWNER", ("failure", "Changes requested by @Codertocat")),
]


@pytest.mark.parametrize(("who", "association", "expected"), [r[1:] for r in REVIEW_ROWS],
                         ids=[r[0] for r in REVIEW_ROWS])
def test_changes_requested_holds_only_with_hold_permission(
        svc: Service, github_emulator: GitHubEmulator, who: str, association: str, expected: tuple[str, str]) -> None:
    review = fixture("pull_request_review", "submitted.payload.json")
    review["review"].update(state="changes_requested", author_association=association)
    review["review"]["user"] = {**review["review"]["user"], "login": who}
    svc.deliver("pull_request_review", review)
    svc.drain()
    assert status(github_emulator) == expected
    refused = [data for event, data in history(svc) if event == "hold.refused"]
    assert bool(refused) == (expected[0] == "success")
    if refused:
        assert f'"actor": "{who}"' in refused[0] and "write access" in refused[0]


# --- ties fail closed -------------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["labeled first", "unlabeled first"])
def test_same_second_label_flip_stays_held(svc: Service, github_emulator: GitHubEmulator, order: str) -> None:
    at = "2019-05-15T16:00:00Z"
    labeled = fixture("pull_request", "labeled.payload.json")
    labeled["pull_request"].update(labels=[{"name": "do-not-merge/hold"}], updated_at=at)
    labeled["label"] = {"name": "do-not-merge/hold"}
    unlabeled = fixture("pull_request", "unlabeled.payload.json")
    unlabeled["pull_request"].update(labels=[], updated_at=at)
    unlabeled["label"] = {"name": "do-not-merge/hold"}
    pair = [("labeled", labeled), ("unlabeled", unlabeled)]
    for _name, payload in pair if order == "labeled first" else pair[::-1]:
        svc.deliver("pull_request", payload)
        svc.drain()
    assert status(github_emulator) == ("failure", "Held by label do-not-merge/hold")
    # A later second settles it: removed.
    unlabeled["pull_request"]["updated_at"] = "2019-05-15T16:00:01Z"
    svc.deliver("pull_request", unlabeled)
    svc.drain()
    assert status(github_emulator) == ("success", "No holds")


@pytest.mark.parametrize(("hold_id", "unhold_id", "held"), [(500, 501, False), (501, 500, True)],
                         ids=["unhold-after", "hold-after"])
def test_same_second_hold_and_unhold_are_ordered_by_comment_id(svc: Service, github_emulator: GitHubEmulator,
                                                               hold_id: int, unhold_id: int, held: bool) -> None:
    """GitHub stamps comments to the second; its comment ids increase, so they order two of one second."""
    at = "2019-05-15T16:00:00Z"
    svc.deliver("issue_comment", comment("/unhold", at=at, comment_id=unhold_id))
    svc.deliver("issue_comment", comment("/hold same second", at=at, comment_id=hold_id))
    svc.drain()
    assert status(github_emulator) == (("failure", "Held by @alice: same second") if held else ("success", "No holds"))


# --- merge groups -----------------------------------------------------------------------------------

GROUP_SHA = "9" * 40


def group_event(number: int, message: str = "Merge pull request #2048 from octo-repo/update-readme") -> dict[str, Any]:
    group = fixture("merge_group", "checks_requested.payload.json")
    group["repository"] = fixture("pull_request", "opened.payload.json")["repository"]
    group["merge_group"].update(head_sha=GROUP_SHA,
                                head_ref=f"refs/heads/gh-readonly-queue/master/pr-{number}-{SHA}")
    group["merge_group"]["head_commit"]["message"] = message
    return group


@pytest.mark.parametrize("message", ["Fixes #45", "Merge pull request #2048\n\nCloses #45, see #46", ""])
def test_group_pr_comes_from_head_ref_only(svc: Service, github_emulator: GitHubEmulator, message: str) -> None:
    github_emulator.add_commit(REPO, GROUP_SHA)
    svc.deliver("pull_request", fixture("pull_request", "opened.payload.json"))
    svc.deliver("merge_group", group_event(PR, message))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("success", "No holds")


def test_group_honours_held_state(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.set_file(REPO, CONFIG, "held_state: pending\n", ref="master")
    github_emulator.add_commit(REPO, GROUP_SHA)
    svc.deliver("issue_comment", comment("/hold in the queue"))
    svc.deliver("merge_group", group_event(PR))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("pending", f"PR #{PR}: Held by @alice: in the queue")


def test_hold_placed_while_the_group_is_checked_reaches_the_group(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.add_commit(REPO, GROUP_SHA)
    svc.deliver("pull_request", fixture("pull_request", "opened.payload.json"))
    svc.deliver("merge_group", group_event(PR))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("success", "No holds")
    svc.deliver("issue_comment", comment("/hold stop the train"))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("failure", f"PR #{PR}: Held by @alice: stop the train")
    svc.deliver("issue_comment", comment("/unhold", at="2019-05-15T15:31:00Z", comment_id=101))
    svc.drain()
    assert status(github_emulator, GROUP_SHA) == ("success", "No holds")


def test_group_of_a_pr_never_seen_settles_after_its_first_publish(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.add_commit(REPO, GROUP_SHA)
    github_emulator.add_pull(REPO, 77, head_sha="7" * 40, head_ref="seventy-seven", base="master")
    github_emulator.add_issue_comment(REPO, 77, user="alice", body="/hold before we met",
                                      created_at="2019-05-01T10:00:00Z")
    svc.deliver("merge_group", group_event(77))
    svc.drain()
    states = [s["state"] for s in reversed(github_emulator.statuses(REPO, GROUP_SHA))]  # oldest first
    assert states[-1] == "failure" and "success" not in states  # error first (unknown), then held


# --- config reload by the branch's head ---------------------------------------------------------------


def config_push(after: str) -> dict[str, Any]:
    push = fixture("push", "payload.json")
    push.update(ref="refs/heads/master", after=after)
    push["commits"] = [{"added": [], "removed": [], "modified": [CONFIG]}]
    return push


def test_config_pushes_handled_out_of_order_keep_the_newest(svc: Service, github_emulator: GitHubEmulator) -> None:
    old_sha, new_sha = "1" * 40, "2" * 40
    svc.deliver("issue_comment", comment("/hold x"))
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: x")
    # Two pushes: `failure` (old), then `pending` (new, master's head now). Delivered newest first.
    github_emulator.set_file(REPO, CONFIG, "held_state: failure\n", ref=old_sha)
    github_emulator.set_file(REPO, CONFIG, "held_state: pending\n", ref=new_sha)
    github_emulator.set_file(REPO, CONFIG, "held_state: pending\n", ref="master")
    for sha in (old_sha, new_sha):
        github_emulator.add_commit(REPO, sha)
    svc.deliver("push", config_push(new_sha))
    svc.drain()
    assert status(github_emulator) == ("pending", "Held by @alice: x")
    svc.deliver("push", config_push(old_sha))  # the older push, late
    svc.drain()
    assert status(github_emulator) == ("pending", "Held by @alice: x")


# --- edited comments on a rebuild ---------------------------------------------------------------------


def test_rebuild_skips_edited_comments(svc: Service, github_emulator: GitHubEmulator) -> None:
    """An edit cannot place a hold after the fact (README: edited comments are ignored), not even when
    the history is read back from GitHub at installation."""
    github_emulator.add_pull(REPO, 8, head_sha="8" * 40, head_ref="old", base="master")
    sneaky = github_emulator.add_issue_comment(REPO, 8, user="alice", body="LGTM", created_at="2019-05-01T10:00:00Z")
    github_emulator.edit_issue_comment(sneaky, body="/hold after the fact", updated_at="2019-05-02T10:00:00Z")
    github_emulator.add_issue_comment(REPO, 8, user="bob", body="/hold kept", created_at="2019-05-01T11:00:00Z")
    created = fixture("installation", "created.payload.json")
    created["installation"]["id"] = 1
    created["repositories"] = [{"full_name": REPO, "private": False}]
    svc.deliver("installation", created)
    svc.drain()
    assert status(github_emulator, "8" * 40) == ("failure", "Held by @bob: kept")


# --- renamed / transferred repositories ----------------------------------------------------------------

MOVES = [
    ("renamed", "Codertocat/Hello-Universe", {"repository": {"name": {"from": "Hello-World"}}}),
    ("transferred", "octo-org/Hello-World", {"owner": {"from": {"organization": {"login": "Codertocat"}}}}),
]


@pytest.mark.parametrize(("action", "new", "changes"), MOVES, ids=[m[0] for m in MOVES])
def test_moved_repo_keeps_its_holds(svc: Service, github_emulator: GitHubEmulator, action: str, new: str,
                                    changes: dict[str, Any]) -> None:
    from datetime import UTC, datetime

    from workers.chat import rooms

    github_emulator.set_file(REPO, CONFIG, "held_state: pending\n", ref="master")
    github_emulator.add_pull(REPO, 3, head_sha="3" * 40, head_ref="three", base="master")
    svc.deliver("issue_comment", comment("/hold through the move"))
    svc.deliver("issue_comment", comment("hello", number=3, comment_id=300))
    now = datetime.now(UTC)
    rooms.place_hold(svc.redis, f"{REPO}@master", holder="ops", holder_id="slack:T1:U1", reason="release",
                     origin="#ops", now=now)
    rooms.place_exemption(svc.redis, f"{REPO}#3", by="ops", reason="hotfix", origin="#ops", now=now,
                          head_sha="3" * 40)
    svc.drain()

    github_emulator.rename_repo(REPO, new)
    owner, name = new.split("/")
    event = {"action": action, "changes": changes, "installation": {"id": 1},
             "repository": {"full_name": new, "name": name, "owner": {"login": owner}, "default_branch": "master"},
             "sender": {"login": "Codertocat"}}
    assert svc.deliver("repository", event).status_code == 202
    svc.drain()

    assert list(svc.redis.scan_iter(match=f"mh:{{{REPO.lower()}}}:*")) == []
    record = svc.verdict(new, PR)
    assert record is not None and record["repo"] == new
    assert [h["id"] for h in record["holds"]] == ["comment:alice", f"room:slack:T1:U1:{new}@master"]
    assert record["holds"][1]["scope"] == f"{new}@master"
    latest = github_emulator.latest_status(new, SHA) or {}
    assert (latest.get("state"), latest.get("target_url")) == ("pending", f"http://merge-hold.test/{new}/pull/{PR}")
    assert status_at(github_emulator, new, "3" * 40) == ("success", "No holds")  # exemption moved too
    assert svc.redis.sismember("mh:repos", new.lower()) and not svc.redis.sismember("mh:repos", REPO.lower())
    assert svc.redis.get(f"mh:{{{new.lower()}}}:managed") == b"1"
    assert any(event == "repo.moved" for event, _ in history(svc, new))

    # Commands under the new name act on the moved holds.
    lift = comment("/unhold", at="2019-05-15T15:31:00Z", comment_id=101)
    lift["repository"] = {**lift["repository"], "full_name": new}
    svc.deliver("issue_comment", lift)
    svc.drain()
    assert (github_emulator.latest_status(new, SHA) or {}).get("description") == "Held by @ops in #ops: release"

    # A redelivered rename finds nothing left to move and changes nothing.
    assert svc.deliver("repository", event).status_code == 202
    svc.drain()
    assert (github_emulator.latest_status(new, SHA) or {}).get("description") == "Held by @ops in #ops: release"


def status_at(emu: GitHubEmulator, repo: str, sha: str) -> tuple[str, str] | None:
    found = emu.latest_status(repo, sha)
    return None if found is None else (found["state"], found["description"])
