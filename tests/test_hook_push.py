"""``git push`` onto a base branch, precisely (issue #8 item 4): a push whose target is the base of a held
PR is blocked when the pushed commit contains that PR's head (``git merge-base --is-ancestor``), and
allowed otherwise. Real throwaway git repositories with real commits; the held PRs' heads are those
commits' SHAs, written to a real Redis as the workers write them; the guard runs as Claude Code runs it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.hook_support import commit, git, hold, payload, record, run_guard, store, write_spec

REPO = "acme/widgets"
ALICE = hold("comment", "alice", "waiting for the DB migration")


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    """main <- feature/login (held #5, base main) and free-branch (free #6, base main); release from main;
    #8 held with a head this clone never fetched. The checkout is on feature/login."""
    repo = tmp_path / "widgets"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    commit(repo, "base")
    git(repo, "branch", "release")
    git(repo, "checkout", "-q", "-b", "free-branch")
    free = commit(repo, "free")
    git(repo, "checkout", "-q", "-b", "feature/login", "main")
    held = commit(repo, "login")
    store(redis_client, REPO, 5, record(REPO, 5, [ALICE], head_ref="feature/login", head_sha=held),
          head="feature/login")
    store(redis_client, REPO, 6, record(REPO, 6, [], head_ref="free-branch", head_sha=free), head="free-branch")
    store(redis_client, REPO, 8, record(REPO, 8, [ALICE], head_ref="far", head_sha="ab" * 20), head="far")
    return {"redis": redis_client, "url": redis_url, "tmp": tmp_path, "repo": repo, "held": held, "free": free}


def guard(world: dict[str, Any], command: str, cwd: Path | None = None,
          **spec: Any) -> subprocess.CompletedProcess[str]:
    spec_path = write_spec(world["tmp"], world["url"], **spec)
    return run_guard(spec_path, payload(command, cwd=str(cwd or world["repo"])))


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("git push origin feature/login:main", 2),  # #5's head onto its base
        ("git push origin HEAD:main", 2),  # the checkout is on feature/login
        ("git push origin HEAD:refs/heads/main", 2),
        ("git push origin +HEAD:main", 2),
        ("git push --force origin feature/login:main", 2),
        ("git push -f origin refs/heads/feature/login:refs/heads/main", 2),
        ("git push origin {held}:main", 2),  # the head itself, by SHA
        ("git push origin feature/login:release", 0),  # not #5's base
        ("git push origin feature/login", 0),  # the head branch itself
        ("git push -u origin HEAD", 0),
        ("git push", 0),  # push.default simple: feature/login to itself
        ("git push origin free-branch:main", 0),  # #6 is free, and free-branch does not contain #5
        ("git push origin {free}:main", 0),
        ("git push origin main", 0),  # main does not contain #5's head
        ("git push origin refs/heads/main", 0),
        ("git push --all", 0),  # every branch to its own name: main and release contain nothing held
        ("git push --mirror", 0),
        ("git push origin 'refs/heads/*:refs/heads/*'", 0),
        ("git push origin :main", 0),  # a deletion
        ("git push --dry-run origin feature/login:main", 0),
        ("git push origin refs/tags/v1", 0),
        ("git push https://github.com/other/repo feature/login:main", 0),  # not managed
        ("git push /srv/mirror.git feature/login:main", 0),  # not GitHub
        # the command's own story
        ("git checkout main && git merge --ff-only feature/login && git push origin main", 2),
        ("git checkout main && git merge --no-ff -m m feature/login && git push", 2),
        ("git switch main && git reset --hard feature/login && git push origin main", 2),
        ("git checkout -b tmp && git push origin tmp:main", 2),  # tmp starts at feature/login
        ("git checkout main && git merge free-branch && git push", 0),
        ("git checkout main && git merge feature/login && git push --all", 2),
        # text the guard cannot read: held PRs with base main exist, so on_undetermined decides
        ("git push origin $SHA:main", 2),
        ("git push origin \"$(git rev-parse feature/login)\":main", 2),
        ("git push origin feature/login:$BASE", 2),
        ("git push origin $SHA:release", 0),  # no held PR has base release
    ],
)
def test_push_rows(world: dict[str, Any], command: str, code: int) -> None:
    done = guard(world, command.format(held=world["held"], free=world["free"]))
    assert done.returncode == code, done.stderr
    if code == 2 and "$" not in command:
        assert "acme/widgets#5 is on hold" in done.stderr and "push its branch onto its base branch" in done.stderr
        assert world["held"][:12] in done.stderr


def test_a_base_merged_locally_earlier_is_caught_when_pushed_later(world: dict[str, Any]) -> None:
    repo = world["repo"]
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "feature/login")  # an earlier tool call
    for command in ("git push origin main", "git push", "git push origin HEAD", "git push --all", "git push --mirror",
                    "git push origin +refs/heads/main:refs/heads/main", "git push origin 'refs/heads/*:refs/heads/*'"):
        done = guard(world, command)
        assert done.returncode == 2, (command, done.stderr)
    assert guard(world, "git push origin release").returncode == 0
    assert guard(world, "git push origin main:release").returncode == 0  # release is no held PR's base


def test_from_another_directory_and_from_a_worktree(world: dict[str, Any], tmp_path: Path) -> None:
    repo, elsewhere = world["repo"], tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert guard(world, f"git -C {repo} push origin feature/login:main", cwd=elsewhere).returncode == 2
    assert guard(world, f"git -C {repo} push origin free-branch:main", cwd=elsewhere).returncode == 0
    assert guard(world, f"cd {repo} && git push origin HEAD:main", cwd=elsewhere).returncode == 2
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree), "main")
    assert guard(world, "git push origin HEAD:main", cwd=tree).returncode == 0  # the worktree is on main
    assert guard(world, "git merge -q feature/login && git push origin HEAD:main", cwd=tree).returncode == 2
    assert guard(world, f"git -C {tree} push origin feature/login:main", cwd=elsewhere).returncode == 2


@pytest.mark.parametrize(("spec", "code"), [({"on_undetermined": "allow"}, 0), ({"on_undetermined": "block"}, 2)])
def test_an_unreadable_push_follows_on_undetermined(world: dict[str, Any], spec: dict[str, Any], code: int) -> None:
    assert guard(world, "git push origin $SHA:main", **spec).returncode == code


def test_a_free_pr_and_an_unheld_base_never_block(world: dict[str, Any]) -> None:
    store(world["redis"], REPO, 5, record(REPO, 5, [], head_ref="feature/login", head_sha=world["held"]))
    world["redis"].srem(f"mh:{{{REPO}}}:held", 5)
    world["redis"].hdel(f"mh:{{{REPO}}}:held-heads", "5")
    assert guard(world, "git push origin feature/login:main").returncode == 0
