"""Freezes scoped by path (issue 30 item 2) end to end: room holds from chat and the API, and freeze windows
of the repo config, with ``paths``; the PRs' changed files listed by the GitHub emulator (GitHub's shapes,
its 3,000-file cap); a real rq worker, Redis, statuses read back at the emulator.

A PR is held only when one of its changed files matches (``!`` excludes); more files than GitHub lists,
or a list that cannot be read, holds; a push that stops touching the path frees the PR; the list is
read once per head. In ruleset mode a path freeze still goes through each PR's status, and says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from core.freeze_gate import FREEZE_CONTEXT
from merge_hold.tokens import create as create_token
from state import store
from tests.chat_support import drain as run_jobs
from tests.chat_support import head_sha
from tests.e2e_support import Service
from tests.emulator import APP_ID, GitHubEmulator
from tests.publish_now import publish
from tests.semantics_support import REPO, chat, pull_event, serve, status
from tests.slack_standin import SlackStandIn
from workers.chat.rooms import execute
from workers.events.repos import load_repo_config
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer

MIGRATIONS = ("db/migrations/**", "!db/migrations/README.md")
REASON = "schema change in flight"
HELD = f"Held by @dana in slack:acme-eng/#releases: {REASON}"
FILES: dict[int, list[str | dict[str, Any]]] = {
    1: ["db/migrations/0042_add_index.sql", "app/models.py"],  # touches a migration
    2: ["db/migrations/README.md", "docs/schema.md"],  # only the excluded README and docs
    3: ["src/main.py"],
    4: [{"filename": "attic/0001_init.sql", "previous_filename": "db/migrations/0001_init.sql"}],  # moved out
}
FILE_READS = r"/pulls/\d+/files$"


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, slack: SlackStandIn,
        tmp_path: Path) -> Service:
    service = serve(github_emulator, redis_client, redis_url, slack, prs=len(FILES),
                    api_tokens_file=str(tmp_path / "tokens"))
    for number, files in FILES.items():
        github_emulator.set_pull_files(REPO, number, files)
    return service


def hold(svc: Service, paths: tuple[str, ...] = MIGRATIONS) -> str:
    reply = execute(svc.rt, chat(), ChatCommand("hold", REPO, reason=REASON, paths=paths)).text
    svc.drain()
    return reply


def states(emulator: GitHubEmulator) -> dict[int, tuple[str | None, str | None]]:
    return {n: status(emulator, head_sha(REPO, n)) for n in FILES}


def test_a_pr_is_held_only_when_a_changed_file_matches(svc: Service, github_emulator: GitHubEmulator) -> None:
    reply = hold(svc)
    assert reply.startswith("@dana held acme/widgets (")
    assert reply.endswith(" where a PR changes db/migrations/** (not db/migrations/README.md): schema change in flight")
    assert states(github_emulator) == {
        1: ("failure", f"{HELD} (db/migrations/0042_add_index.sql)"),
        2: ("success", "No holds"),  # the README is excluded, docs are not in scope
        3: ("success", "No holds"),
        4: ("failure", f"{HELD} (db/migrations/0001_init.sql)"),  # a rename counts under its old name too
    }
    held = store.load_verdict(svc.redis, REPO, 1) or {}
    assert held["held"] and held["holds"][0]["paths"] == list(MIGRATIONS)
    assert (store.load_verdict(svc.redis, REPO, 2) or {})["held"] is False
    # One read per PR (one page each); republishing the same heads reads nothing again.
    assert github_emulator.count("GET", FILE_READS) == 4
    execute(svc.rt, chat(), ChatCommand("hold", REPO, reason=REASON, paths=MIGRATIONS))
    svc.drain()
    assert github_emulator.count("GET", FILE_READS) == 4


def test_a_push_that_stops_touching_the_path_frees_the_pr(svc: Service, github_emulator: GitHubEmulator) -> None:
    hold(svc)
    assert status(github_emulator, head_sha(REPO, 1))[0] == "failure"
    new_head = "5" * 40
    github_emulator.update_pull(REPO, 1, head_sha=new_head)
    github_emulator.set_pull_files(REPO, 1, ["app/models.py"])  # the migration was dropped from the PR
    assert svc.deliver("pull_request", pull_event(1, "synchronize", sha=new_head)).status_code == 202
    svc.drain()
    assert status(github_emulator, new_head) == ("success", "No holds")
    # And a push that starts touching it holds a free PR.
    github_emulator.update_pull(REPO, 3, head_sha="6" * 40)
    github_emulator.set_pull_files(REPO, 3, ["src/main.py", "db/migrations/0043_drop.sql"])
    assert svc.deliver("pull_request", pull_event(3, "synchronize", sha="6" * 40)).status_code == 202
    svc.drain()
    assert status(github_emulator, "6" * 40) == ("failure", f"{HELD} (db/migrations/0043_drop.sql)")


def test_a_pr_with_more_files_than_github_lists_is_held(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.set_pull_files(REPO, 3, [f"src/module_{i}.py" for i in range(3001)])
    hold(svc)
    assert status(github_emulator, head_sha(REPO, 3)) == (
        "failure", f"{HELD}; it changes more files than GitHub lists (3,000)")
    # GitHub lists 3,000 (30 pages of 100): read once, kept for that head.
    pages = github_emulator.count("GET", r"/pulls/3/files$")
    assert pages == 30
    execute(svc.rt, chat(), ChatCommand("hold", REPO, reason=REASON, paths=MIGRATIONS))
    svc.drain()
    assert github_emulator.count("GET", r"/pulls/3/files$") == pages


def test_an_unreadable_file_list_holds_and_is_read_again_later(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.inject("GET", r"/pulls/3/files$", 500, times=None)
    hold(svc)
    assert status(github_emulator, head_sha(REPO, 3)) == ("failure", f"{HELD}; its changed files could not be read")
    assert status(github_emulator, head_sha(REPO, 2)) == ("success", "No holds")
    # A recompute is scheduled for the next try, not a read on every event meanwhile.
    wakes = [j for j in svc.rt.queue.scheduled_job_registry.get_job_ids() if j.startswith("wake-acme_widgets-3-")]
    assert len(wakes) == 1
    reads = github_emulator.count("GET", r"/pulls/3/files$")
    assert publish(svc.rt, REPO, 3, datetime.now(UTC)) in ("unchanged", "posted")
    assert github_emulator.count("GET", r"/pulls/3/files$") == reads
    # GitHub answers again: the scheduled recompute (run here at its moment) reads and frees the PR.
    github_emulator.clear_faults()
    assert publish(svc.rt, REPO, 3, datetime.now(UTC) + timedelta(minutes=2)) == "posted"
    assert status(github_emulator, head_sha(REPO, 3)) == ("success", "No holds")


WINDOW = """\
freeze_windows:
  - name: migrations
    days: daily
    from: "00:00"
    to: "24:00"
    paths: ["db/migrations/**", "!db/migrations/README.md"]
  - name: release
    days: daily
    from: "00:00"
    to: "24:00"
    branches: ["release/*"]
"""


def test_a_freeze_window_with_paths(svc: Service, github_emulator: GitHubEmulator) -> None:
    github_emulator.set_file(REPO, ".github/merge-hold.yml", WINDOW)
    load_repo_config(svc.rt, REPO, installation_id=1, default_branch="main")
    now = datetime.now(UTC)
    for number in FILES:
        publish(svc.rt, REPO, number, now)
    frozen = states(github_emulator)
    assert frozen[1][0] == "failure" and frozen[1][1] is not None
    assert frozen[1][1].startswith("Frozen by migrations: freeze migrations until")
    assert frozen[1][1].endswith("(db/migrations/0042_add_index.sql)")
    assert frozen[2] == frozen[3] == ("success", "No holds")
    assert frozen[4][0] == "failure"


def test_in_ruleset_mode_a_path_freeze_goes_through_statuses_and_says_so(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, slack: SlackStandIn) -> None:
    svc = serve(github_emulator, redis_client, redis_url, slack, prs=len(FILES), freeze_mode="ruleset")
    github_emulator.set_installation_permissions(1, {"metadata": "read", "contents": "read", "pull_requests": "read",
                                                     "issues": "read", "statuses": "write",
                                                     "administration": "write"})
    github_emulator.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID)])
    for number, files in FILES.items():
        github_emulator.set_pull_files(REPO, number, files)
    reply = hold(svc)
    assert ("freeze_mode: ruleset in 1 repo, but a freeze scoped by paths goes through each PR's merge-hold "
            "status") in reply
    assert github_emulator.count("POST", r"/rulesets$") + github_emulator.count("PUT", r"/rulesets/\d+$") == 0
    assert status(github_emulator, head_sha(REPO, 1))[0] == "failure"
    assert not github_emulator.mergeable(REPO, 1)
    assert github_emulator.mergeable(REPO, 2) and github_emulator.mergeable(REPO, 3)
    assert github_emulator.status_posts(FREEZE_CONTEXT) == []


def test_the_api_takes_paths_and_refuses_unusable_ones(svc: Service, github_emulator: GitHubEmulator) -> None:
    token = create_token(Path(svc.settings.api_tokens_file or ""), "deploy", "hold")
    headers = {"Authorization": f"Bearer {token}"}
    bad = svc.client.post("/api/v1/holds", json={"target": REPO, "reason": "x", "paths": ["!docs/**"]},
                          headers=headers)
    assert bad.status_code == 400 and "only `!` excludes match nothing" in bad.get_json()["error"]
    bad = svc.client.post("/api/v1/holds", json={"target": REPO, "reason": "x", "paths": "db/**"}, headers=headers)
    assert bad.status_code == 400 and "paths must be a list" in bad.get_json()["error"]
    assert svc.redis.hlen(keys.room_holds(REPO)) == 0
    placed = svc.client.post("/api/v1/holds", json={"target": REPO, "reason": REASON, "paths": list(MIGRATIONS)},
                             headers=headers)
    assert placed.status_code == 201 and placed.get_json()["hold"]["paths"] == list(MIGRATIONS)
    svc.drain()
    assert status(github_emulator, head_sha(REPO, 1)) == (
        "failure", f"Held by token:deploy in api:deploy: {REASON} (db/migrations/0042_add_index.sql)")
    assert status(github_emulator, head_sha(REPO, 3)) == ("success", "No holds")


def test_the_files_are_read_only_when_a_path_scoped_hold_reaches_the_pr(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    execute(svc.rt, chat(), ChatCommand("hold", f"{REPO}@release/*", reason="release", paths=MIGRATIONS))
    execute(svc.rt, chat(), ChatCommand("hold", REPO, reason="incident"))
    svc.drain()
    assert github_emulator.count("GET", FILE_READS) == 0  # every PR is into main: the path hold reaches none
    assert {s for s, _ in states(github_emulator).values()} == {"failure"}


def test_no_file_list_is_read_while_github_has_the_installation_wait(
        svc: Service, github_emulator: GitHubEmulator) -> None:
    """Reads keep to GitHub's limits like the writes: while the installation's pacer is paused (a rate-limit
    answer), no list is read; the PRs in scope are held meanwhile and read when the pause ends."""
    pacer = Pacer.of(svc.redis, svc.settings, bucket_of(svc.redis, REPO))
    pacer.pause(300)
    execute(svc.rt, chat(), ChatCommand("hold", REPO, reason=REASON, paths=MIGRATIONS))
    run_jobs(svc.rt)  # the statuses wait with the writes; the verdict records are written at once
    assert github_emulator.count("GET", FILE_READS) == 0
    record = store.load_verdict(svc.redis, REPO, 3) or {}
    assert record["held"] and record["holds"][0]["reason"] == f"{REASON}; its changed files could not be read"
    wakes = svc.rt.queue.scheduled_job_registry.get_job_ids()
    assert len([j for j in wakes if j.startswith("wake-acme_widgets-3-")]) == 1
