"""The per-repo branch freezes record (issue 26 item 6): built from the room holds and freeze windows the
verdicts read (`core.branch_freezes`), written by the workers whenever a hold on a repo, branch or org is
placed or lifted (chat, API), the config loads and the reconcile runs (`state.branch_freezes`), served by
``GET /api/v1/repos/{owner}/{repo}/guard``, and read by the hook (`hook.freezes`), whose glob reading is the
verdict's."""

from __future__ import annotations

import random
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
import redis

from core import branch_freezes, keys
from core.holds import Hold, Source
from core.repo_config import FreezeWindow, RepoConfig
from hook import freezes
from merge_hold.tokens import create as create_token
from state import branch_freezes as stored
from state import room_holds
from tests.chat_support import drain, dry_runtime, manage
from tests.hook_support import git_checkout, payload, run_guard, write_spec
from tests.webapp_support import make_app

REPO = "acme/widgets"
NOW = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)  # a Friday


def room(scope: str, *, expires: datetime | None = None, source: Source = Source.ROOM) -> Hold:
    return Hold(id=f"room:slack:T1:U1:{scope}", source=source, scope=scope, holder="carol", reason="release week",
                created_at=NOW - timedelta(hours=1), expires_at=expires, origin="slack:#releases")


def test_the_format_and_the_whole_repo_glob_are_the_hooks() -> None:
    assert (freezes.FORMAT, freezes.WHOLE) == (branch_freezes.FORMAT, branch_freezes.WHOLE)


@pytest.mark.parametrize(
    ("scope", "glob"),
    [(REPO, "*"), ("acme", "*"), (f"{REPO}@main", "main"), (f"{REPO}@release/*", "release/*"), (f"{REPO}@*", "*"),
     (f"{REPO}@**", "*")],
)
def test_each_scope_freezes_its_glob(scope: str, glob: str) -> None:
    record = branch_freezes.build(REPO, config=RepoConfig(), config_error=None, scoped_holds=[room(scope)],
                                  default_branch="main", now=NOW)
    assert [(f["branches"], f["holder"], f["reason"], f["scope"], f["to"]) for f in record["freezes"]] == [
        (glob, "carol", "release week", scope, None)]
    assert record["until"] == "2026-03-13T12:00:00Z" and record["default_branch"] == "main" and record["f"] == 1


def test_pr_holds_comment_holds_and_expired_holds_freeze_no_branch() -> None:
    holds = [room(f"{REPO}#5"), room(f"{REPO}@main", expires=NOW), room(f"{REPO}@main", source=Source.COMMENT)]
    record = branch_freezes.build(REPO, config=RepoConfig(), config_error=None, scoped_holds=holds,
                                  default_branch="main", now=NOW)
    assert record["freezes"] == []


def test_window_occurrences_are_listed_ahead_on_their_own_clock() -> None:
    window = FreezeWindow(name="fri-deploys", days=("fri",), start="16:00", end="23:59", timezone="Europe/Berlin",
                          branches=("main", "release/*"))
    record = branch_freezes.build(REPO, config=RepoConfig(freeze_windows=(window,)), config_error=None,
                                  scoped_holds=[], default_branch="main", now=NOW)
    # this Friday's; next Friday's starts after `until` (the reconcile lists it before then)
    assert [(f["branches"], f["from"], f["to"]) for f in record["freezes"]] == [
        ("main", "2026-03-06T15:00:00Z", "2026-03-06T22:59:00Z"),
        ("release/*", "2026-03-06T15:00:00Z", "2026-03-06T22:59:00Z")]
    first = record["freezes"][0]
    assert (first["from"], first["to"], first["source"], first["holder"]) == (
        "2026-03-06T15:00:00Z", "2026-03-06T22:59:00Z", "freeze", "fri-deploys")
    assert first["reason"] == "freeze fri-deploys until Fri 23:59 CET" and first["origin"] == "schedule:fri-deploys"
    assert all(f["from"] < record["until"] for f in record["freezes"])
    active, default, problem = freezes.read_record(record, "2026-03-06T16:00:00Z")
    assert (len(active), default, problem) == (2, "main", None)
    assert freezes.read_record(record, "2026-03-07T16:00:00Z")[0] == []  # Saturday: none active


def test_freezes_by_path_carry_their_paths_and_others_none() -> None:
    """A room hold placed with paths and a window with ``paths`` bind only work changing those files: the
    record says which (the guard judges a push's changed files by them); a whole freeze has no field."""
    by_path = replace(room(f"{REPO}@main"), paths=("docs/**",))
    window = FreezeWindow(name="fri-deploys", days=("fri",), start="00:00", end="23:59", timezone="UTC",
                          branches=("main",), paths=("migrations/",))
    record = branch_freezes.build(REPO, config=RepoConfig(freeze_windows=(window,)), config_error=None,
                                  scoped_holds=[by_path, room(f"{REPO}@release/*")], default_branch="main", now=NOW)
    assert [(f["branches"], f.get("paths")) for f in record["freezes"]] == [
        ("main", ["docs/**"]), ("release/*", None), ("main", ["migrations/"]), ("main", ["migrations/"])]  # 2 Fridays


def test_a_config_that_cannot_be_read_is_an_error_not_nothing() -> None:
    record = branch_freezes.build(REPO, config=None, config_error=".github/merge-hold.yml line 2: bad", scoped_holds=[],
                                  default_branch="main", now=NOW)
    assert record["error"] and freezes.read_record(record, "2026-03-06T12:00:01Z")[2]


def test_the_hooks_glob_reading_is_fnmatchcase() -> None:
    rows = [("release/*", "release/1.2"), ("release/*", "release/a/b"), ("*", ""), ("r?l", "rel"), ("[a-c]x", "bx"),
            ("[!a-c]x", "bx"), ("[]]x", "]x"), ("[!]]x", "ax"), ("[x", "[x"), ("a*b*c", "aXXbYYc"), ("a*b*c", "abcb"),
            ("*-[0-9]", "v-7"), ("main", "Main"), ("[z-a]", "m"), ("**", "a/b"), ("a[", "a[")]
    for pattern, name in rows:
        assert freezes.glob_match(pattern, name) == fnmatchcase(name, pattern), (pattern, name)
    rng = random.Random(26)
    alphabet = "ab/*?[]!-"
    for _ in range(20000):
        pattern = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        name = "".join(rng.choice("ab/[]!-") for _ in range(rng.randint(0, 7)))
        assert freezes.glob_match(pattern, name) == fnmatchcase(name, pattern), (pattern, name)


def test_a_hold_placed_through_the_api_freezes_pushes_until_it_is_lifted(
        redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    """API -> republish job on a real rq worker -> the record in Redis and at /guard -> the hook blocks a push;
    lifted -> the next push goes."""
    app, _ = make_app(redis_client, tmp_path)
    headers = {name: {"Authorization": f"Bearer {create_token(tmp_path / 'tokens', name, scope, ())}"}
               for name, scope in (("deploy", "hold"), ("hooker", "hook-events"))}
    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000)
    manage(redis_client, REPO, {1: "main"})
    checkout = git_checkout(tmp_path / "clone", branch="main")
    subprocess.run(["git", "-C", str(checkout), "commit", "-q", "--allow-empty", "-m", "hotfix"], check=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin"})
    spec = write_spec(tmp_path, redis_url)
    push = payload("git push origin HEAD:main", cwd=str(checkout))
    stored.publish(redis_client, REPO, datetime.now(UTC))
    assert run_guard(spec, push).returncode == 0  # nothing frozen yet

    client = app.test_client()
    placed = client.post("/api/v1/holds", json={"target": REPO, "reason": "deploy 4711"}, headers=headers["deploy"])
    assert placed.status_code == 201
    drain(rt)
    guard_view = client.get(f"/api/v1/repos/{REPO}/guard", headers=headers["hooker"]).get_json()
    assert guard_view["managed"] and guard_view["held"] == [1] and guard_view["heads"]["1"]["base"] == "main"
    assert [(f["branches"], f["holder"], f["reason"]) for f in guard_view["freezes"]["freezes"]] == [
        ("*", "token:deploy", "deploy 4711")]
    done = run_guard(spec, push)
    assert done.returncode == 2 and "`main` of acme/widgets is frozen" in done.stderr and "deploy 4711" in done.stderr

    hold_id = (placed.get_json() or {})["hold"]["id"]
    assert client.delete(f"/api/v1/holds/{hold_id}", headers=headers["deploy"]).status_code == 200
    drain(rt)
    assert stored.load(redis_client, REPO)["freezes"] == []  # type: ignore[index]
    assert run_guard(spec, push).returncode == 0


def test_org_holds_reach_every_repo_and_the_reconcile_renews_the_record(
        redis_client: redis.Redis, redis_url: str) -> None:
    from workers.ops.reconcile import reconcile_job
    from workers.publishing.republish import republish

    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000)
    manage(redis_client, REPO, {1: "main"})
    manage(redis_client, "acme/gadgets", {})
    manage(redis_client, "other/x", {})
    room_holds.place_hold(redis_client, "acme", holder="carol", holder_id="slack:T1:U1", reason="org freeze",
                          origin="slack:#ops", now=datetime.now(UTC))
    republish(rt, "acme")
    for repo in (REPO, "acme/gadgets"):
        assert [f["reason"] for f in stored.load(redis_client, repo)["freezes"]] == ["org freeze"]  # type: ignore[index]
    assert stored.load(redis_client, "other/x") is None
    redis_client.delete(keys.branch_freezes("other/x"))
    rt.queue.enqueue(reconcile_job)
    drain(rt)
    assert stored.load(redis_client, "other/x") == {**stored.load(redis_client, "other/x"), "freezes": []}  # type: ignore[dict-item]
    from state import store

    store.drop_repo(redis_client, "acme/gadgets", 1)
    assert stored.load(redis_client, "acme/gadgets") is None
