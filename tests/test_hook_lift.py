"""Lifting a hold is a person's act (issue #8 item 3): the guard, run as Claude Code runs it, blocks an
agent's lift of a hold on a held PR — a label removed, a comment or review carrying ``/unhold``, ``/hold
cancel`` or ``/remove-hold``, an approval over a changes-requested hold, a dismissed review — through
``gh``, ``gh api`` (REST and GraphQL) and curl, and lets the same actions through where nothing is held.
Verdicts in a real Redis; the server's comment grammar is the reference for what lifts."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis

from core.comments import parse_comment
from hook.detect.lift import lifts_text
from tests.hook_support import git_checkout, hold, payload, record, run_guard, store, write_spec

REPO = "acme/widgets"
ALICE = hold("comment", "alice", "waiting for the DB migration")
BOB = hold("review", "bob", "changes requested")
LABEL = replace(hold("label", "", "label do-not-merge/hold"), id="label:do-not-merge/hold")


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    """#5 held by a comment, a review and the hold label; #6 free; #7 held by a comment only."""
    store(redis_client, REPO, 5, record(REPO, 5, [ALICE, BOB, LABEL], head_ref="feature/login"), head="feature/login")
    store(redis_client, REPO, 6, record(REPO, 6, [], head_ref="free-branch"), head="free-branch")
    store(redis_client, REPO, 7, record(REPO, 7, [ALICE], head_ref="other"), head="other")
    checkout = git_checkout(tmp_path / "widgets", branch="feature/login")
    (checkout / "notes.md").write_text("Thanks!\n\n/unhold\n")
    (checkout / "plain.md").write_text("Thanks for the review.\n")
    return {"redis": redis_client, "url": redis_url, "tmp": tmp_path, "cwd": str(checkout)}


def guard(world: dict[str, Any], command: str, **spec: Any) -> subprocess.CompletedProcess[str]:
    return run_guard(write_spec(world["tmp"], world["url"], **spec), payload(command, cwd=world["cwd"]))


@pytest.mark.parametrize(
    ("command", "code"),
    [
        # labels
        ("gh pr edit 5 --remove-label do-not-merge/hold", 2),
        ("gh pr edit 5 --remove-label=bug,do-not-merge/hold", 2),
        ("gh pr edit 5 --remove-label DO-NOT-MERGE/HOLD", 2),  # GitHub's label names ignore case
        ("gh pr edit 5 -R acme/widgets --remove-label do-not-merge/hold", 2),
        ("gh issue edit 5 --remove-label do-not-merge/hold", 2),  # a PR is an issue too
        ("gh pr edit 5 --remove-label bug", 0),
        ("gh pr edit 5 --add-label do-not-merge/hold", 0),
        ("gh pr edit 6 --remove-label do-not-merge/hold", 0),  # free: nothing to lift
        ("gh pr edit 7 --remove-label do-not-merge/hold", 2),  # held; the record names the hold label
        ("gh pr edit --remove-label do-not-merge/hold", 2),  # the current branch's PR: #5
        ("gh api -X DELETE repos/acme/widgets/issues/5/labels/do-not-merge%2Fhold", 2),
        ("gh api -X DELETE repos/{owner}/{repo}/issues/5/labels", 2),
        ("gh api -X DELETE repos/acme/widgets/issues/5/labels/bug", 0),
        ("gh api -X DELETE repos/acme/widgets/issues/7/labels", 0),  # #7 carries no hold label
        ("gh api graphql -f query='mutation{removeLabelsFromLabelable(input:{labelableId:\"PR_1\","
         "labelIds:[\"L\"]}){clientMutationId}}'", 2),
        # comments
        ("gh pr comment 5 --body '/unhold'", 2),
        ("gh pr comment 5 -b '/hold cancel'", 2),
        ("gh pr comment 5 -b 'Done here.\n/Remove-Hold'", 2),
        ('gh pr comment 5 --body "$(printf \'/unhold\')"', 2),  # computed: on_undetermined
        ("gh pr comment 5 -F notes.md", 2),
        ("gh pr comment 5 --body-file - <<'EOF'\nall good\n/unhold @alice\nEOF", 2),
        ("gh pr comment 5 -b 'lgtm'", 0),
        ("gh pr comment 5 -F plain.md", 0),
        ("gh pr comment 5 -b '> /unhold\nquoting the docs'", 0),
        ("gh pr comment 5 -b 'please do not /unhold yet'", 0),
        ("gh pr comment 6 -b '/unhold'", 0),  # nothing held
        ("gh api repos/acme/widgets/issues/5/comments -f body=/unhold", 2),
        ("gh api repos/acme/widgets/issues/5/comments -f body=thanks", 0),
        ("gh api -X PATCH repos/acme/widgets/issues/comments/99 -f body=/unhold", 2),  # which PR: unknown
        ("curl -X POST -H 'Authorization: Bearer x' -d '{\"body\":\"/remove-hold\"}' "
         "https://api.github.com/repos/acme/widgets/issues/5/comments", 2),
        ("gh api graphql -f query='mutation($b:String!){addComment(input:{subjectId:\"PR_1\",body:$b})"
         "{clientMutationId}}' -f b=/unhold", 2),
        ("gh api graphql -f query='mutation($b:String!){addComment(input:{subjectId:\"PR_1\",body:$b})"
         "{clientMutationId}}' -f b=thanks", 0),
        # reviews
        ("gh pr review 5 --approve", 2),  # lifts a changes-requested hold
        ("gh pr review 7 --approve", 0),  # #7 has no review hold
        ("gh pr review 5 --comment -b '/unhold'", 2),
        ("gh pr review 5 --comment -b 'nice'", 0),
        ("gh api repos/acme/widgets/pulls/5/reviews -f event=APPROVE", 2),
        ("gh api repos/acme/widgets/pulls/5/reviews -f event=COMMENT -f body=/unhold", 2),
        ("gh api repos/acme/widgets/pulls/5/reviews -f event=COMMENT -f body=ok", 0),
        # dismissals
        ("gh api -X PUT repos/acme/widgets/pulls/5/reviews/42/dismissals -f message=stale", 2),
        ("gh api -X PUT repos/acme/widgets/pulls/6/reviews/42/dismissals -f message=stale", 0),
        ("gh api graphql -f query='mutation{dismissPullRequestReview(input:{pullRequestReviewId:\"R_1\","
         "message:\"x\"}){clientMutationId}}'", 2),
        # a click on a button of merge-hold's check run (Lift my hold, Request exemption): requested actions are
        # clicked in GitHub's UI only; the API's nearest is asking a run (or suite) again
        ("gh api -X POST repos/acme/widgets/check-runs/77/rerequest", 2),
        ("gh api -X POST repos/acme/widgets/check-suites/78/rerequest", 2),
        ("gh api -X PATCH repos/acme/widgets/check-runs/77 -f 'requested_action[identifier]=lift'", 2),
        ("curl -X PATCH -d '{\"requested_action\":{\"identifier\":\"lift\"}}' "
         "https://api.github.com/repos/acme/widgets/check-runs/77", 2),
        ("gh api graphql -f query='mutation{rerequestCheckSuite(input:{repositoryId:\"R_1\",checkSuiteId:\"CS_1\"})"
         "{clientMutationId}}'", 2),
        ("gh api graphql -f query='mutation{updateCheckRun(input:{repositoryId:\"R_1\",checkRunId:\"CR_1\","
         "requestedAction:\"lift\"}){clientMutationId}}'", 2),
        ("gh api -X POST repos/acme/gadgets/check-runs/77/rerequest", 0),  # not managed: nothing held there
        ("gh api repos/acme/widgets/commits/HEAD/check-runs?check_name=merge-hold", 0),  # reading the run
        # look-alikes
        ("echo 'gh pr comment 5 -b /unhold'", 0),
        ("gh pr view 5 --comments", 0),
    ],
)
def test_lift_rows(world: dict[str, Any], command: str, code: int) -> None:
    done = guard(world, command)
    assert done.returncode == code, done.stderr
    if code == 2:
        assert "lift" in done.stderr and "Do not work around" in done.stderr


def test_the_message_says_a_person_lifts_and_how(world: dict[str, Any]) -> None:
    done = guard(world, "gh pr comment 5 --body '/unhold'")
    assert done.returncode == 2
    assert "acme/widgets#5 is on hold" in done.stderr
    assert "Holds are lifted by people, not by agents" in done.stderr
    assert "@alice comments `/unhold`" in done.stderr  # how the person lifts it


@pytest.mark.parametrize(("spec", "code"), [({"on_lift": "allow"}, 0), ({"on_lift": "block"}, 2), ({}, 2)])
def test_on_lift(world: dict[str, Any], spec: dict[str, Any], code: int) -> None:
    assert guard(world, "gh pr edit 5 --remove-label do-not-merge/hold", **spec).returncode == code


def test_a_computed_body_follows_on_undetermined(world: dict[str, Any]) -> None:
    command = 'gh pr comment 5 --body "$(cat "$NOTES")"'
    assert guard(world, command, on_undetermined="allow").returncode == 0
    done = guard(world, command)
    assert done.returncode == 2 and "computed at run time" in done.stderr


def test_an_unreachable_source_is_on_unknown(world: dict[str, Any]) -> None:
    from merge_hold.redis_server import free_port

    source = f"redis://127.0.0.1:{free_port()}/0"
    spec_path = write_spec(world["tmp"], source, on_unknown="block")
    assert run_guard(spec_path, payload("gh pr comment 5 -b /unhold", cwd=world["cwd"])).returncode == 2
    spec_path = write_spec(world["tmp"], source, on_unknown="allow")
    assert run_guard(spec_path, payload("gh pr comment 5 -b /unhold", cwd=world["cwd"])).returncode == 0


# -- the body grammar: a superset of the server's ----------------------------------------------------------

BODIES = [
    "/unhold", "/UNHOLD", "  /unhold  ", "/hold cancel", "/hold   cancel", "/remove-hold", "/unhold all",
    "/unhold @alice", "/remove-hold @bob", "/remove-hold all", "thanks\n/unhold\nbye", "\t/unhold",
    "/unhold<!-- why -->", "/unhold <!-- unclosed", "<!-- x -->/unhold", "<!--\n/unhold\n-->", "> /unhold",
    "   > /unhold", "    /unhold", "```\n/unhold\n```", "`/unhold`", "/hold cancel now", "/unhold bob",
    "/unholdx", "please /unhold", "/hold", "/hold for 2h x", "/hold cancellation", "a\r\n/unhold\r\n",
    "> quote\n/unhold", "~~~\n/unhold", "/unhold @all", "para\n    /unhold",
    "/hold cancel further review has happened", "/unhold looks good now", "/remove-hold ready",
    "/unhold @alice she is away", "/unhold all shipped", "/hold   cancel  x  y", "/unhold\tthanks",
]


@pytest.mark.parametrize("body", BODIES)
def test_the_hook_sees_every_lift_the_server_would_apply(body: str) -> None:
    server_lifts = any(c.kind == "lift" for c in parse_comment(body))
    if server_lifts:
        assert lifts_text(body), body
    plainly_not = ("/unholdx", "please /unhold", "/hold", "/hold for 2h x", "/hold cancellation")
    if (not server_lifts and body.strip().startswith(">")) or body in plainly_not:
        assert not lifts_text(body), body  # and no false alarms on what is plainly not a lift


def test_explain_shows_lifts_apart_from_merges(world: dict[str, Any]) -> None:
    import json
    import sys

    data = payload("gh pr edit 5 --remove-label do-not-merge/hold && gh pr merge 6", cwd=world["cwd"])
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "explain"], input=json.dumps(data),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "merges": [{"via": "gh_pr_merge", "repo": REPO, "pr": 6, "branch": None}], "undetermined": False,
        "lifts": [{"via": "gh_pr_edit", "repo": REPO, "pr": 5, "branch": None, "lift": "label:do-not-merge/hold"}],
        "tampers": []}
