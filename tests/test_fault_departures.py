"""The App leaving a repo leaves nothing behind and posts nothing more; `merge-hold reconcile` on a repo no
installation covers is an error, not "0 open PRs". Real Redis, real rq, the GitHub emulator."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from redis import Redis

from core import keys
from tests.e2e_support import ROOT, Service, fixture, held_widgets, service_env
from tests.emulator import GitHubEmulator

REPO = "acme/widgets"
HEAD5 = "5" * 40


def repo_keys(redis: Redis) -> set[str]:
    return {k.decode() for k in redis.scan_iter(match=keys.repo_keys_pattern(REPO), count=500)}


def unhold(svc: Service, comment_id: int) -> None:
    """A late `/unhold` by the holder (GitHub's redelivery, or an event queued before the removal)."""
    comment = fixture("issue_comment", "created.payload.json")
    comment["repository"] = {**comment["repository"], "full_name": REPO}
    comment["issue"].update(number=5, pull_request={"url": "x"})
    comment["comment"].update(body="/unhold", author_association="OWNER", created_at="2026-01-05T11:00:00Z",
                              id=comment_id)
    comment["comment"]["user"] = {**comment["comment"]["user"], "login": "alice"}
    assert svc.deliver("issue_comment", comment).status_code == 202
    svc.drain()


def removed(action: str) -> tuple[str, dict[str, Any]]:
    if action == "removed":
        payload = fixture("installation_repositories", "removed.payload.json")
        payload["repositories_removed"] = [{"full_name": REPO, "private": False}]
        return "installation_repositories", payload
    payload = fixture("installation", f"{action}.payload.json")
    payload["repositories"] = [{"full_name": REPO, "private": False}]
    return "installation", payload


@pytest.mark.parametrize("action", ["removed", "deleted"])
def test_a_dropped_repo_keeps_no_keys_and_posts_nothing(github_emulator: GitHubEmulator, redis_client: Redis,
                                                       redis_url: str, action: str) -> None:
    svc = held_widgets(github_emulator, redis_url)
    assert svc.redis.exists(keys.installation_repos(3))
    event, payload = removed(action)
    payload["installation"]["id"] = 3
    assert svc.deliver(event, payload).status_code == 202
    svc.drain()
    assert repo_keys(svc.redis) == {keys.history(REPO), keys.repo_dropped(REPO)}
    assert svc.redis.ttl(keys.history(REPO)) > 0 and svc.redis.ttl(keys.repo_dropped(REPO)) > 0
    assert not svc.redis.sismember(keys.MANAGED_REPOS, REPO)
    if action == "deleted":
        assert not svc.redis.exists(keys.installation_repos(3), keys.installation_token(3), keys.outbox("inst-3"))
    posts = len(github_emulator.status_posts())
    unhold(svc, 77)  # must not resurrect the repo, nor lift on GitHub
    assert len(github_emulator.status_posts()) == posts
    assert repo_keys(svc.redis) == {keys.history(REPO), keys.repo_dropped(REPO)}
    assert github_emulator.latest_status(REPO, HEAD5)["state"] == "failure"  # type: ignore[index]

    # Added again: its events count from then on.
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = 3
    added["repositories_added"] = [{"full_name": REPO, "private": False}]
    assert svc.deliver("installation_repositories", added).status_code == 202
    svc.drain()
    assert not svc.redis.exists(keys.repo_dropped(REPO))
    assert svc.verdict(REPO, 5) is not None and svc.redis.sismember(keys.MANAGED_REPOS, REPO)


def reconcile(svc: Service, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "merge_hold.cli", "reconcile", *args], cwd=ROOT, text=True,
                          env=service_env(svc.settings), capture_output=True, timeout=120)


def test_reconcile_of_an_unknown_repo_is_an_error(github_emulator: GitHubEmulator, redis_client: Redis,
                                                  redis_url: str) -> None:
    svc = held_widgets(github_emulator, redis_url)
    done = reconcile(svc, "--repo", "nope/nope")
    assert done.returncode == 1, done
    assert "nope/nope" in done.stderr and "not managed" in done.stderr and REPO in done.stderr
    assert "open PRs" not in done.stdout
    both = reconcile(svc, "--repo", REPO, "--repo", "nope/nope")  # nothing half done
    assert both.returncode == 1 and not both.stdout
    ok = reconcile(svc, "--repo", REPO)
    assert ok.returncode == 0, ok
    assert f"{REPO}: 2 open PRs" in ok.stdout


def test_a_dropped_repo_leaves_no_write_on_any_outbox(redis_client: Redis) -> None:
    """Its PRs' head statuses and its merge groups' commits alike (``repo@SHA#N``), in whatever bucket and
    case they were queued; another repo's writes stay."""
    from core.outbox import group_member, pr_member
    from workers.events.uninstalls import forget_repo
    from workers.publishing import outbox

    other = "acme/gadgets"
    queued = [("inst-3", pr_member(REPO, 5)), ("inst-3", group_member(REPO, "a" * 40, 5)),
              ("global", pr_member("Acme/Widgets", 6)), ("global", group_member("ACME/widgets", "b" * 40, None)),
              ("inst-3", pr_member(other, 1)), ("inst-3", group_member(other, "c" * 40, 1))]
    for bucket, member in queued:
        outbox.add(redis_client, bucket, member, 0)
    forget_repo(redis_client, REPO, 3)
    left = {m.decode() if isinstance(m, bytes) else str(m)
            for bucket in ("inst-3", "global") for m in redis_client.zrange(keys.outbox(bucket), 0, -1)}
    assert left == {pr_member(other, 1), group_member(other, "c" * 40, 1)}
