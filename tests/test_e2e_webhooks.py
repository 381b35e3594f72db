"""GitHub's own webhook examples, end to end: signed HTTP in, real Redis, a real rq worker, statuses
observed at the GitHub emulator (design §3, §4).

The examples (octokit/webhooks, MIT, see tests/fixtures/github/webhooks/LICENSE.octokit-webhooks) are
about `Codertocat/Hello-World` PR #2 at `ec26c3e…`. None of the `issue_comment` examples is on a PR,
so the tests add `issue.pull_request` as GitHub does for PR comments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core import keys
from state.store import load_pull
from tests.e2e_support import PUBLIC_URL, Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from workers.intake.pump import pump_all
from workers.publishing.recompute import mergeability

REPO = "Codertocat/Hello-World"
SHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
PR = 2


def seed_hello_world(emu: GitHubEmulator, **permissions: str) -> None:
    """GitHub's example world of the webhook fixtures: installation 1 of Codertocat, Hello-World with
    PR #2 (head ``changes`` at SHA onto master), and each login's permission on it."""
    emu.add_installation(1, "Codertocat")
    emu.add_repo(REPO, installation_id=1, default_branch="master")
    emu.add_pull(REPO, PR, head_sha=SHA, head_ref="changes", base="master", user="Codertocat",
                 updated_at="2019-05-15T15:20:33Z")
    for login, role in permissions.items():
        emu.set_permission(REPO, login, role)


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    emu = github_emulator
    seed_hello_world(emu, alice="write", bob="write")
    emu.set_permission(REPO, "mallory", "none")
    emu.set_permission(REPO, "maria", "maintain")
    settings = service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug)
    yield Service.start(settings)


def comment(body: str, *, user: str = "alice", at: str = "2019-05-15T15:30:00Z", comment_id: int = 100,
            association: str = "MEMBER", number: int = PR) -> dict[str, Any]:
    payload = fixture("issue_comment", "created.payload.json")
    payload["issue"]["number"] = number
    payload["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    payload["comment"].update(body=body, created_at=at, updated_at=at, id=comment_id,
                              author_association=association,
                              html_url=f"https://github.com/{REPO}/pull/{number}#issuecomment-{comment_id}")
    payload["comment"]["user"] = {**payload["comment"]["user"], "login": user}
    return payload


def status(emu: GitHubEmulator, sha: str = SHA) -> tuple[str, str] | None:
    found = emu.latest_status(REPO, sha)
    return None if found is None else (found["state"], found["description"])


def test_opened_pr_gets_a_success_status_pointing_at_the_dashboard(
    svc: Service, github_emulator: GitHubEmulator
) -> None:
    assert svc.deliver("pull_request", fixture("pull_request", "opened.payload.json")).status_code == 202
    svc.drain()
    posted = github_emulator.latest_status(REPO, SHA)
    assert posted is not None
    assert (posted["state"], posted["description"]) == ("success", "No holds")
    assert posted["target_url"] == f"{PUBLIC_URL}/{REPO}/pull/{PR}"
    assert posted["creator"] == github_emulator.bot_login


def test_hold_and_unhold_by_comment(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold waiting for DB migration"))
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: waiting for DB migration")
    record = svc.verdict(REPO, PR)
    assert record is not None and record["held"] and record["holds"][0]["holder"] == "alice"
    assert record["head_sha"] == SHA and record["base"] == "master"
    assert record["default_base"] is True  # the hook's stack rule: based on the default branch, nothing below
    svc.deliver("issue_comment", comment("/unhold", at="2019-05-15T15:31:00Z", comment_id=101))
    svc.drain()
    assert status(github_emulator) == ("success", "No holds")


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        # a quoted /hold and a code block do nothing
        ([("alice", "> /hold\n```\n/hold\n```", "MEMBER")], ("success", "No holds")),
        ([("alice", "/holdx", "MEMBER")], ("success", "No holds")),
        # a non-collaborator on a public repo cannot hold
        ([("mallory", "/hold mine now", "NONE")], ("success", "No holds")),
        # Bob's cancel does not lift Alice's hold
        ([("alice", "/hold alice reason", "MEMBER"), ("bob", "/hold cancel", "MEMBER")],
         ("failure", "Held by @alice: alice reason")),
        # Bob (write) cannot lift Alice's hold by name; Maria (maintain) can
        ([("alice", "/hold a", "MEMBER"), ("bob", "/unhold @alice", "MEMBER")], ("failure", "Held by @alice: a")),
        ([("alice", "/hold a", "MEMBER"), ("maria", "/unhold @alice", "MEMBER")], ("success", "No holds")),
        ([("alice", "/hold a", "MEMBER"), ("bob", "/hold b", "MEMBER")], ("failure", "Held by @alice: a (+1 more)")),
        ([("alice", "/hold a", "MEMBER"), ("bob", "/hold b", "MEMBER"), ("maria", "/unhold all", "MEMBER")],
         ("success", "No holds")),
    ],
)
def test_comment_rows(svc: Service, github_emulator: GitHubEmulator, rows: list[tuple[str, str, str]],
                      expected: tuple[str, str]) -> None:
    svc.deliver("pull_request", fixture("pull_request", "opened.payload.json"))
    for index, (user, body, association) in enumerate(rows):
        svc.deliver("issue_comment", comment(body, user=user, association=association, comment_id=200 + index,
                                             at=f"2019-05-15T16:00:{index:02d}Z"))
    svc.drain()
    assert status(github_emulator) == expected


def test_comments_are_ordered_by_their_own_time_not_arrival(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/unhold", at="2019-05-15T17:00:00Z", comment_id=301))
    svc.deliver("issue_comment", comment("/hold late arrival", at="2019-05-15T16:00:00Z", comment_id=300))
    svc.drain()
    assert status(github_emulator) == ("success", "No holds")


def test_duplicate_delivery_changes_nothing_and_posts_nothing(svc: Service, github_emulator: GitHubEmulator) -> None:
    payload = comment("/hold once")
    svc.deliver("issue_comment", payload, delivery_id="dup-1")
    svc.drain()
    before = len(github_emulator.status_posts())
    svc.deliver("issue_comment", payload, delivery_id="dup-1")
    svc.deliver("issue_comment", payload, delivery_id="dup-2")  # same comment, redelivered under a new id
    svc.drain()
    assert len(github_emulator.status_posts()) == before == 1


def test_review_changes_requested_holds_until_dismissed(svc: Service, github_emulator: GitHubEmulator) -> None:
    review = fixture("pull_request_review", "submitted.payload.json")
    review["review"]["state"] = "changes_requested"
    svc.deliver("pull_request_review", review)
    svc.drain()
    assert status(github_emulator) == ("failure", "Changes requested by @Codertocat")
    dismissed = fixture("pull_request_review", "dismissed.payload.json")
    dismissed["review"]["id"] = review["review"]["id"]
    svc.deliver("pull_request_review", dismissed)
    svc.drain()
    assert status(github_emulator) == ("success", "No holds")


def test_hold_label_holds_while_present(svc: Service, github_emulator: GitHubEmulator) -> None:
    labeled = fixture("pull_request", "labeled.payload.json")
    labeled["pull_request"]["labels"] = [{"name": "do-not-merge/hold"}]
    svc.deliver("pull_request", labeled)
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by label do-not-merge/hold")
    unlabeled = fixture("pull_request", "unlabeled.payload.json")
    unlabeled["pull_request"]["labels"] = []
    svc.deliver("pull_request", unlabeled)
    svc.drain()
    assert status(github_emulator) == ("success", "No holds")


def test_new_head_sha_gets_the_status_too(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold keep"))
    svc.drain()
    sync = fixture("pull_request", "synchronize.payload.json")
    new_sha = "f" * 40
    sync["pull_request"]["head"]["sha"] = new_sha
    sync["pull_request"]["updated_at"] = "2019-05-15T18:00:00Z"
    github_emulator.add_commit(REPO, new_sha)
    svc.deliver("pull_request", sync)
    svc.drain()
    assert status(github_emulator, new_sha) == ("failure", "Held by @alice: keep")


def test_invalid_repo_config_posts_error_naming_the_file(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.set_file(REPO, ".github/merge-hold.yml", "held_state: maybe\n", ref="master")
    svc.deliver("pull_request", fixture("pull_request", "opened.payload.json"))
    svc.drain()
    found = status(github_emulator)
    assert found is not None and found[0] == "error"
    assert ".github/merge-hold.yml" in found[1] and "line 1" in found[1]


def test_config_push_reloads_and_republishes(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold x"))
    svc.drain()
    # The push moved master's head to a commit whose config says `pending`: read at the branch.
    github_emulator.set_file(REPO, ".github/merge-hold.yml", "held_state: pending\n", ref="master")
    push = fixture("push", "payload.json")
    push.update(ref="refs/heads/master", after="a" * 40)
    push["commits"] = [{"added": [], "removed": [], "modified": [".github/merge-hold.yml"]}]
    github_emulator.add_commit(REPO, "a" * 40)
    svc.deliver("push", push)
    svc.drain()
    assert status(github_emulator) == ("pending", "Held by @alice: x")


def test_forged_status_is_overwritten(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold real"))
    svc.drain()
    github_emulator.add_status(REPO, SHA, state="success", context="merge-hold", description="lgtm", creator="eve")
    forged = fixture("status", "payload.json")
    forged.update(sha=SHA, context="merge-hold", state="success")
    forged["sender"] = {**forged["sender"], "login": "eve"}
    svc.deliver("status", forged)
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: real")
    events: list[tuple[bytes, dict[bytes, bytes]]] = svc.redis.xrange(f"mh:{{{REPO.lower()}}}:history")  # type: ignore[assignment]
    assert any(fields[b"event"] == b"status.forged" for _id, fields in events)


def test_installation_bootstraps_open_prs(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.add_pull(REPO, 7, head_sha="7" * 40, head_ref="feature", base="master",
                             labels=("do-not-merge/hold",))
    created = fixture("installation", "created.payload.json")
    created["installation"]["id"] = 1
    created["repositories"] = [{"full_name": REPO, "private": False}]
    svc.deliver("installation", created)
    svc.drain()
    assert status(github_emulator, "7" * 40) == ("failure", "Held by label do-not-merge/hold")
    assert status(github_emulator) == ("success", "No holds")
    assert svc.redis.get(f"mh:{{{REPO.lower()}}}:managed") == b"1"


def test_holds_made_before_the_app_saw_the_pr_are_read_from_history(
    svc: Service, github_emulator: GitHubEmulator
) -> None:
    github_emulator.add_pull(REPO, 8, head_sha="8" * 40, head_ref="old", base="master")
    github_emulator.add_issue_comment(REPO, 8, user="alice", body="/hold before install",
                                      created_at="2019-05-01T10:00:00Z")
    github_emulator.add_review(REPO, 8, user="bob", state="CHANGES_REQUESTED", submitted_at="2019-05-01T11:00:00Z")
    created = fixture("installation", "created.payload.json")
    created["installation"]["id"] = 1
    created["repositories"] = [{"full_name": REPO, "private": False}]
    svc.deliver("installation", created)
    svc.drain()
    assert status(github_emulator, "8" * 40) == ("failure", "Held by @alice: before install (+1 more)")


def test_state_lost_in_redis_is_rebuilt_on_the_next_event(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.add_issue_comment(REPO, PR, user="alice", body="/hold survive", created_at="2019-05-15T15:30:00Z")
    svc.deliver("issue_comment", comment("/hold survive", at="2019-05-15T15:30:00Z"))
    svc.drain()
    svc.redis.flushdb()
    unrelated = comment("thanks!", user="bob", at="2019-05-15T15:40:00Z", comment_id=999)
    svc.deliver("issue_comment", unrelated)
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: survive")
    record = svc.verdict(REPO, PR)
    assert record is not None and record["held"]


def test_merge_group_is_held_when_a_grouped_pr_is_held(svc: Service, github_emulator: GitHubEmulator) -> None:
    svc.deliver("issue_comment", comment("/hold not in the queue"))
    svc.drain()
    group = fixture("merge_group", "checks_requested.payload.json")
    group["repository"] = fixture("pull_request", "opened.payload.json")["repository"]
    group["merge_group"]["head_ref"] = f"refs/heads/gh-readonly-queue/master/pr-{PR}-{SHA}"
    group_sha = group["merge_group"]["head_sha"]
    github_emulator.add_commit(REPO, group_sha)
    svc.deliver("merge_group", group)
    svc.drain()
    assert status(github_emulator, group_sha) == ("failure", f"PR #{PR}: Held by @alice: not in the queue")


def test_a_pr_converted_to_draft_reaches_its_handler_through_the_pump(
    svc: Service, github_emulator: GitHubEmulator
) -> None:
    """Issue 17: the handler meant `converted_to_draft` (a draft goes last on the outbox), but the
    pump's own event list dropped it, so the PR kept ranking as ready. One table now lets it in."""
    svc.deliver("pull_request", fixture("pull_request", "opened.payload.json"))
    svc.drain()
    assert svc.verdict(REPO, PR) is not None and not svc.redis.exists(keys.intake(svc.rt.queue.name))
    answer = svc.deliver("pull_request", fixture("pull_request", "converted_to_draft.with-installation.payload.json"),
                         delivery_id="draft-1")
    assert answer.status_code == 202
    pump_all(svc.redis, svc.rt.queue)  # the intake pump alone: it queues the job, it does not drop it
    assert svc.rt.queue.job_ids == ["delivery-draft-1"]
    svc.drain()
    state = load_pull(svc.redis, REPO, PR)
    assert state.facts is not None and state.facts.draft
    assert mergeability(state) == 2  # most-mergeable first: a draft waits behind every ready PR
    assert status(github_emulator) == ("success", "No holds")  # a draft is not a hold
    ready = fixture("pull_request", "ready_for_review.payload.json")
    ready["pull_request"]["updated_at"] = "2019-05-15T15:22:00Z"
    svc.deliver("pull_request", ready)
    svc.drain()
    state = load_pull(svc.redis, REPO, PR)
    assert state.facts is not None and not state.facts.draft and mergeability(state) == 1


def test_own_events_are_ignored(svc: Service, github_emulator: GitHubEmulator) -> None:
    payload = comment("/hold from ourselves")
    payload["sender"] = {**payload["sender"], "login": github_emulator.bot_login}
    svc.deliver("issue_comment", payload)
    svc.drain()
    assert github_emulator.status_posts() == []


def test_one_token_mint_serves_many_events(svc: Service, github_emulator: GitHubEmulator) -> None:
    for index in range(5):
        svc.deliver("issue_comment", comment(f"/hold n{index}", comment_id=400 + index,
                                             at=f"2019-05-15T16:00:0{index}Z"))
        svc.drain()
    assert github_emulator.token_mints(1) == 1


def test_github_rate_limit_is_retried(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.inject("POST", r"/statuses/", 403, headers={"retry-after": "1"},
                           body={"message": "You have exceeded a secondary rate limit."})
    svc.deliver("issue_comment", comment("/hold after the limit"))
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: after the limit")


@pytest.mark.parametrize(
    ("event", "name"),
    [(path.parent.name, path.name) for path in sorted(
        p for p in (fixture.__globals__["FIXTURES"]).glob("*/*.json")
        if p.parent.name not in ("installation", "installation_repositories")
    )],
)
def test_every_example_is_accepted_and_processed(svc: Service, event: str, name: str) -> None:
    """Every GitHub example goes through the receiver and the worker without a failed job."""
    payload = fixture(event, name)
    if event == "issue_comment":
        payload["issue"]["pull_request"] = {"url": "x"}
    answer = svc.deliver(event, payload)
    assert answer.status_code in (200, 202), answer.get_data(as_text=True)
    svc.drain()


def test_timed_hold_expires_on_time_through_rqs_scheduler(svc: Service, github_emulator: GitHubEmulator) -> None:
    import time
    from datetime import UTC, datetime

    from workers.ops.tenants import burst

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    svc.deliver("issue_comment", comment("/hold for 2s brief pause", at=now))
    svc.drain()
    assert status(github_emulator) == ("failure", "Held by @alice: brief pause")
    time.sleep(3)
    burst(svc.rt.queue, with_scheduler=True)
    assert status(github_emulator) == ("success", "No holds")
