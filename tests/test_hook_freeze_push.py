"""A push into a freeze (issue 26 item 6, design §6): a room hold or freeze window covering a branch stops new
work from being pushed onto it — ``git push`` in any refspec form, the contents API, MCP file tools, ref
updates — with the freeze's holder and reason, unless the push writes nothing new. Real throwaway git
repositories (a remote-tracking ref stands for what the last fetch saw), the repo's branch freezes record
written to a real Redis as the workers build it, the guard run as Claude Code runs it."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from core.repo_config import FreezeWindow, RepoConfig
from tests.hook_support import (
    NOW,
    commit,
    freezes_record,
    git,
    hold,
    payload,
    record,
    run_guard,
    store,
    store_freezes,
    write_spec,
)

REPO = "acme/widgets"
CAROL = hold("room", "carol", "release week", scope=f"{REPO}@main", origin="slack:#releases")


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    """A clone on ``main``, as fetched (``origin/main`` is ``main``), with ``feature`` one commit ahead and a
    tag; ``acme/widgets`` is managed and ``main`` is frozen by carol's room hold. Free PR #6 has base main."""
    repo = tmp_path / "widgets"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    base = commit(repo, "base")
    git(repo, "tag", "v1")
    git(repo, "update-ref", "refs/remotes/origin/main", base)  # what `git fetch` left
    git(repo, "config", "branch.main.remote", "origin")
    git(repo, "config", "branch.main.merge", "refs/heads/main")
    git(repo, "checkout", "-q", "-b", "feature")
    feature = commit(repo, "feature")
    git(repo, "update-ref", "refs/remotes/origin/feature", base)
    git(repo, "checkout", "-q", "main")
    store(redis_client, REPO, 6, record(REPO, 6, [], head_ref="feature", head_sha=feature), head="feature")
    store_freezes(redis_client, REPO, freezes_record(REPO, [CAROL]))
    return {"redis": redis_client, "url": redis_url, "tmp": tmp_path, "repo": repo, "base": base, "feature": feature}


def guard(world: dict[str, Any], command: str, **spec: Any) -> subprocess.CompletedProcess[str]:
    spec_path = write_spec(world["tmp"], world["url"], **spec)
    return run_guard(spec_path, payload(command, cwd=str(world["repo"])))


def mcp(world: dict[str, Any], tool: str, arguments: dict[str, Any], **spec: Any) -> subprocess.CompletedProcess[str]:
    spec_path = write_spec(world["tmp"], world["url"], **spec)
    return run_guard(spec_path, payload(json.dumps(arguments), cwd=str(world["repo"]), tool_name=tool))


@pytest.mark.parametrize(
    ("command", "code"),
    [
        # the issue's own: a commit made in the same call, pushed onto the frozen base
        ("git commit --allow-empty -m hotfix && git push origin HEAD:main", 2),
        ("git commit -qam wip; git push", 2),
        ("npm version patch && git push origin main", 2),  # a program that may commit first
        # every refspec form onto main, sending feature's new commit
        ("git push origin feature:main", 2),
        ("git push origin +feature:main", 2),
        ("git push --force origin feature:refs/heads/main", 2),
        ("git push -f origin refs/heads/feature:main", 2),
        ("git push origin {feature}:main", 2),
        ("git push --force-with-lease origin feature:main", 2),
        ("git -C . push origin feature:main", 2),
        ("git push https://github.com/acme/widgets.git main", 2),  # a URL: no remote-tracking ref to tell by
        # text the guard cannot read, onto a repo with a frozen branch: on_undetermined
        ("git push origin $SHA:main", 2),
        ("git push origin feature:$BRANCH", 2),
        # what writes nothing new onto main, or nothing onto it at all
        ("git push origin main", 0),  # main is what origin/main is
        ("git push origin HEAD:main", 0),
        ("git push", 0),  # push.default simple: main to its upstream, nothing new
        ("cd . && git status && git push origin main", 0),
        ("git push origin feature", 0),  # a topic branch is not frozen
        ("git push origin feature:topic", 0),
        ("git push origin :main", 0),  # a deletion writes no commit
        ("git push --delete origin main", 0),
        ("git push --dry-run origin feature:main", 0),
        ("git push origin v1", 0),  # a tag
        ("git push origin 'refs/tags/*'", 0),
        ("git push --all", 0),  # main is as fetched; feature is not frozen
    ],
)
def test_push_rows_onto_a_branch_frozen_by_a_room_hold(world: dict[str, Any], command: str, code: int) -> None:
    done = guard(world, command.format(feature=world["feature"]))
    assert done.returncode == code, done.stderr
    if code == 2 and "$" not in command:
        assert "`main` of acme/widgets is frozen" in done.stderr
        assert "@carol (room hold on acme/widgets@main in slack:#releases): release week" in done.stderr
        assert "/unhold acme/widgets@main" in done.stderr and "Do not push onto a frozen branch" in done.stderr


DOCS_ONLY = replace(hold("room", "dana", "docs rewrite", scope=f"{REPO}@main", origin="slack:#docs"),
                    paths=("docs/**",))


@pytest.mark.parametrize(
    ("files", "freezes", "command", "code"),
    [
        # a freeze by path binds only a push that changes a matching file, in any commit it sends
        (["src/app.py"], [DOCS_ONLY], "git push origin feature:main", 0),
        (["docs/guide.md"], [DOCS_ONLY], "git push origin feature:main", 2),
        (["docs/guide.md", "src/app.py"], [DOCS_ONLY], "git push origin feature:main", 2),
        (["src/docs/x.md"], [DOCS_ONLY], "git push origin feature:main", 0),  # anchored: docs/ at the root
        # `--all`: each local branch to its name; the new commits are main's own here
        (["src/app.py"], [DOCS_ONLY], "git push --all", 0),
        (["docs/guide.md"], [DOCS_ONLY], "git push --all", 2),
        (["docs/guide.md"], [DOCS_ONLY], "git push origin main", 2),
        # beside a whole freeze, the whole one binds
        (["src/app.py"], [DOCS_ONLY, CAROL], "git push origin feature:main", 2),
        # what git cannot list (a commit the text names by a variable) stays undetermined, as before
        (["src/app.py"], [DOCS_ONLY], "git push origin $SHA:main", 2),
    ],
)
def test_a_freeze_by_path_binds_the_pushes_that_change_its_files(
    world: dict[str, Any], files: list[str], freezes: list[Any], command: str, code: int,
) -> None:
    repo = world["repo"]
    onto = "feature" if "feature" in command else "main"
    git(repo, "checkout", "-q", onto)
    for name in files:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        commit(repo, name)
    git(repo, "checkout", "-q", "main")
    store_freezes(world["redis"], REPO, freezes_record(REPO, freezes))
    done = guard(world, command)
    assert done.returncode == code, done.stderr
    if code == 2 and "$" not in command:
        assert "`main` of acme/widgets is frozen" in done.stderr
        assert ("(only changes to docs/**)" in done.stderr) == (CAROL not in freezes)


def test_a_commit_made_in_an_earlier_call_is_new_work(world: dict[str, Any]) -> None:
    commit(world["repo"], "hotfix")  # the agent's previous tool call
    for command in ("git push", "git push origin main", "git push origin HEAD:main", "git push --all",
                    "git push origin 'refs/heads/*:refs/heads/*'", "git push --mirror"):
        done = guard(world, command)
        assert done.returncode == 2 and "frozen" in done.stderr, (command, done.stderr)
    assert guard(world, "git push origin feature").returncode == 0


@pytest.mark.parametrize(
    ("scope", "branch", "code"),
    [
        (f"{REPO}@release/*", "release/1.2", 2),
        (f"{REPO}@release/*", "releases", 0),
        (f"{REPO}@release/*", "main", 0),
        (f"{REPO}@rel?ase/[0-9]*", "release/3", 2),
        (REPO, "main", 2),  # the whole repository: its default branch ...
        (REPO, "develop", 2),  # ... and the base of a held PR (#9 below)
        (REPO, "topic", 0),  # a topic branch lands nothing
        ("acme", "main", 2),  # the org
        ("acme", "topic", 0),
        ("other", "main", 0),
        (f"{REPO}#6", "main", 0),  # a PR hold freezes no branch
    ],
)
def test_which_branches_a_hold_freezes(world: dict[str, Any], scope: str, branch: str, code: int) -> None:
    redis_client: redis.Redis = world["redis"]
    store(redis_client, REPO, 9, record(REPO, 9, [hold("comment", "dave", "wip", number=9)], base="develop"))
    holds = [hold("room", "erin", "deploy 4711", scope=scope)]
    store_freezes(redis_client, REPO, freezes_record(REPO, [h for h in holds if not h.scope.startswith("other")]))
    done = guard(world, f"git push origin feature:{branch}")
    assert done.returncode == code, done.stderr
    if code == 2:
        assert f"`{branch}` of acme/widgets is frozen" in done.stderr and "deploy 4711" in done.stderr


def test_freeze_windows_now_and_over(world: dict[str, Any]) -> None:
    redis_client: redis.Redis = world["redis"]
    every_day = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
    now = FreezeWindow(name="deploys", days=every_day, start=(NOW - timedelta(minutes=5)).strftime("%H:%M"),
                       end=(NOW + timedelta(hours=1)).strftime("%H:%M"), branches=("main", "release/*"))
    store_freezes(redis_client, REPO, freezes_record(REPO, config=RepoConfig(freeze_windows=(now,))))
    done = guard(world, "git push origin feature:release/2")
    assert done.returncode == 2 and "freeze deploys until" in done.stderr, done.stderr
    assert "wait until the freeze window `deploys` ends" in done.stderr
    # a window that ended an hour ago: its next occurrence (tomorrow) is listed, and lies ahead
    over = FreezeWindow(name="deploys", days=every_day, start=(NOW - timedelta(hours=3)).strftime("%H:%M"),
                        end=(NOW - timedelta(hours=1)).strftime("%H:%M"), branches=("main", "release/*"))
    ahead = freezes_record(REPO, config=RepoConfig(freeze_windows=(over,)))
    assert ahead["freezes"] and all(f["from"] > NOW.strftime("%Y-%m-%dT%H:%M:%SZ") for f in ahead["freezes"])
    store_freezes(redis_client, REPO, ahead)
    assert guard(world, "git push origin feature:release/2").returncode == 0


def test_an_expired_hold_in_the_record_freezes_nothing(world: dict[str, Any]) -> None:
    gone = hold("room", "carol", "release week", scope=f"{REPO}@main", expires_at=NOW + timedelta(seconds=1))
    store_freezes(world["redis"], REPO, freezes_record(REPO, [gone], now=NOW - timedelta(minutes=1)))
    record_ = json.loads(world["redis"].get(keys.branch_freezes(REPO)))
    record_["freezes"][0]["to"] = (NOW - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    store_freezes(world["redis"], REPO, record_)
    assert guard(world, "git push origin feature:main").returncode == 0


@pytest.mark.parametrize(
    ("stored", "why"),
    [
        (None, "no branch freezes record is published"),
        ("{not json", "unknown format"),
        ({"f": 2, "freezes": []}, "unknown format"),
        ("stale", "stale"),
        ("error", "cannot read its freeze windows"),
        ({"f": 1, "until": "2999-01-01T00:00:00Z", "freezes": [{"to": None}]}, "malformed"),
    ],
)
def test_freezes_that_cannot_be_known_are_on_unknown(world: dict[str, Any], stored: Any, why: str) -> None:
    if stored == "stale":
        stored = freezes_record(REPO, now=NOW - timedelta(days=8))
    elif stored == "error":
        stored = {**freezes_record(REPO), "error": ".github/merge-hold.yml line 3: bad"}
    store_freezes(world["redis"], REPO, stored)
    done = guard(world, "git push origin feature:topic")
    assert done.returncode == 2 and why in done.stderr and "on_unknown: block" in done.stderr, done.stderr
    assert guard(world, "git push origin feature:topic", on_unknown="allow").returncode == 0


def test_on_undetermined_allow_lets_an_unreadable_push_through(world: dict[str, Any]) -> None:
    assert guard(world, "git push origin $SHA:main", on_undetermined="allow").returncode == 0
    assert guard(world, "git push origin feature:main", on_undetermined="allow").returncode == 2


def test_an_unmanaged_repo_has_no_freeze(world: dict[str, Any]) -> None:
    world["redis"].delete(keys.managed(REPO))
    assert guard(world, "git push origin feature:main").returncode == 0


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("gh api -X PUT repos/acme/widgets/contents/notes.md -f message=hotfix -f content=eA== -f branch=main", 2),
        ("gh api -X PUT repos/acme/widgets/contents/notes.md -f message=hotfix -f content=eA==", 2),  # default
        ("gh api -X PUT repos/acme/widgets/contents/notes.md -f message=m -f content=eA== -f branch=feature", 0),
        ("gh api -X DELETE repos/acme/widgets/contents/notes.md -f message=m -f sha=abc -f branch=main", 2),
        ("curl -X PUT -H 'Authorization: Bearer t' https://api.github.com/repos/acme/widgets/contents/a.txt "
         "-d '{\"message\":\"m\",\"content\":\"eA==\",\"branch\":\"main\"}'", 2),
        ("curl -X PUT https://api.github.com/repos/acme/widgets/contents/a.txt "
         "-d '{\"message\":\"m\",\"content\":\"eA==\",\"branch\":\"topic\"}'", 0),
        ("curl -X PUT https://api.github.com/repos/acme/widgets/contents/a.txt -d @body.json", 2),  # unread body
        ("gh api -X PATCH repos/acme/widgets/git/refs/heads/main -f sha=0123456789abcdef0123456789abcdef01234567", 2),
        ("gh api -X PATCH repos/acme/widgets/git/refs/tags/v1 -f sha=0123456789abcdef0123456789abcdef01234567", 0),
        ("gh api repos/acme/widgets/git/refs -f ref=refs/heads/topic -f sha=abc", 0),
        ("gh api repos/acme/widgets/merges -f base=main -f head=feature", 2),
        ("gh api repos/acme/widgets/contents/notes.md", 0),  # a read
    ],
)
def test_writes_through_the_api_onto_a_frozen_branch(world: dict[str, Any], command: str, code: int) -> None:
    done = guard(world, command)
    assert done.returncode == code, done.stderr
    if code == 2 and "@body" not in command:
        assert "`main` of acme/widgets is frozen" in done.stderr and "release week" in done.stderr


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("mcp__github__push_files", {"owner": "acme", "repo": "widgets", "branch": "main", "message": "m",
                                     "files": [{"path": "a.txt", "content": "x"}]}, 2),
        ("mcp__github__push_files", {"owner": "acme", "repo": "widgets", "branch": "feature", "message": "m",
                                     "files": [{"path": "a.txt", "content": "x"}]}, 0),
        ("mcp__github__create_or_update_file", {"owner": "acme", "repo": "widgets", "path": "a.txt",
                                                "content": "x", "message": "m", "branch": "main"}, 2),
        ("mcp__github__create_or_update_file", {"owner": "acme", "repo": "widgets", "path": "a.txt",
                                                "content": "x", "message": "m"}, 2),  # the default branch
        ("mcp__plugin_github_github__create_or_update_file", {"owner": "acme", "repo": "widgets", "path": "a.txt",
                                                              "content": "x", "message": "m", "branch": "topic"}, 0),
        ("mcp__github__delete_file", {"owner": "acme", "repo": "widgets", "path": "a.txt", "message": "m",
                                      "branch": "main"}, 2),
        ("mcp__github__push_files", {"owner": "acme", "repo": "widgets", "branch": ["main"], "message": "m",
                                     "files": []}, 2),  # a branch the guard cannot read
    ],
)
def test_mcp_file_tools_onto_a_frozen_branch(world: dict[str, Any], tool: str, arguments: dict[str, Any],
                                             code: int) -> None:
    done = mcp(world, tool, arguments)
    assert done.returncode == code, done.stderr
    if code == 2:
        assert "acme/widgets" in done.stderr and "frozen" in done.stderr


def test_a_blocked_push_into_a_freeze_is_recorded(world: dict[str, Any]) -> None:
    assert guard(world, "git push origin feature:main").returncode == 2
    lines = (world["tmp"] / "records.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    assert entry["decision"] == "block" and entry["code"] == "frozen" and entry["repo"] == REPO
