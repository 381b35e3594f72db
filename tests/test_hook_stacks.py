"""Stacked pull requests (issue 15 item 4): ``merge-async`` (GitHub's way for stacks) and ``gh pr merge`` on a PR
whose base branch is another open PR's head merge that PR too, so a held PR anywhere below the requested one
blocks the merge, naming it. The chain comes from the server (each verdict record's ``base`` and
``default_base``, the head index), through Redis and through the HTTP API alike; the common case — a PR based
on the default branch — stays one read."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from hook.verdicts.redis_client import parse_redis_url
from hook.verdicts.sources import HttpSource, PrQuery, RedisSource
from hook.verdicts.stacks import follow
from tests.hook_support import CountingRelay, hold, payload, record, run_guard, store, write_spec

REPO = "acme/widgets"
ALICE = hold("comment", "alice", "waiting for the migration", number=10)


def stack(redis_client: redis.Redis) -> None:
    """#10 held on main <- #11 <- #12 (a stack); #13 and #14 free elsewhere; #20 from an older server."""
    rows = [(10, [ALICE], "main", "feature/a"), (11, [], "feature/a", "feature/b"), (12, [], "feature/b", "feature/c"),
            (13, [], "main", "feature/d"), (14, [], "release/1", "feature/e")]
    for number, holds, base, head in rows:
        store(redis_client, REPO, number, record(REPO, number, holds, base=base, head_ref=head), head=head)
    store(redis_client, REPO, 20, record(REPO, 20, [], base="main", head_ref="old", default_branch=None), head="old")
    # a loop (a base that is its own stack's head) ends instead of spinning
    store(redis_client, REPO, 30, record(REPO, 30, [], base="loop/y", head_ref="loop/x"), head="loop/x")
    store(redis_client, REPO, 31, record(REPO, 31, [], base="loop/x", head_ref="loop/y"), head="loop/y")
    # a PR below whose verdict is not recorded yet
    store(redis_client, REPO, 40, record(REPO, 40, [], base="ghost", head_ref="above"), head="above")
    redis_client.set(keys.head_index(REPO, "ghost"), 41)


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    stack(redis_client)
    return {"url": redis_url, "tmp": tmp_path}


def guard(world: dict[str, Any], command: str, **spec: Any) -> subprocess.CompletedProcess[str]:
    return run_guard(write_spec(world["tmp"], world["url"], **spec), payload(command, cwd=str(world["tmp"])))


@pytest.mark.parametrize(("command", "code", "named"), [
    ("gh pr merge 12 -R acme/widgets", 2, "#10"),
    ("gh pr merge 11 -R acme/widgets --squash", 2, "#10"),
    ("gh api -X PUT repos/acme/widgets/pulls/12/merge-async -f merge_method=squash", 2, "#10"),
    ("curl -X PUT https://api.github.com/repos/acme/widgets/pulls/11/merge-async", 2, "#10"),
    ("gh pr merge feature/c -R acme/widgets", 2, "#10"),  # by head branch: the same chain
    ("gh pr merge 10 -R acme/widgets", 2, "#10"),  # held itself
    ("gh pr merge 13 -R acme/widgets", 0, ""),  # on main: nothing below
    ("gh pr merge 14 -R acme/widgets", 0, ""),  # on a release branch no PR heads
    ("gh pr merge 20 -R acme/widgets", 0, ""),  # an older server's record: followed, nothing below
    ("gh pr merge 30 -R acme/widgets", 0, ""),  # a loop ends
    ("gh pr merge 40 -R acme/widgets", 2, "#41"),  # below it, a PR with no verdict: on_unknown
])
def test_a_held_pr_below_blocks_the_merge(world: dict[str, Any], command: str, code: int, named: str) -> None:
    done = guard(world, command)
    assert done.returncode == code, done.stderr
    if named:
        assert named in done.stderr, done.stderr
    if named == "#10" and "pulls/10" not in command and " 10 " not in command:
        assert "stacked on acme/widgets#10" in done.stderr and "alice" in done.stderr, done.stderr


def test_unknown_below_follows_on_unknown(world: dict[str, Any]) -> None:
    assert guard(world, "gh pr merge 40 -R acme/widgets", on_unknown="allow").returncode == 0


@pytest.fixture()
def relay(redis_url: str) -> Iterator[CountingRelay]:
    parsed = parse_redis_url(redis_url)
    relay = CountingRelay((parsed.host, parsed.port))
    yield relay
    relay.close()


def test_the_common_case_is_one_read(redis_client: redis.Redis, redis_url: str, relay: CountingRelay) -> None:
    stack(redis_client)
    admin: Any = redis_client
    admin.execute_command("ACL", "SETUSER", "mh-stack-test", "on", ">pw", "~*", "+@all")
    try:
        db = int(redis_url.rsplit("/", 1)[1] or 0)
        source = RedisSource(relay.url("mh-stack-test:pw@", db), timeout_s=2)
        queries = [PrQuery(REPO, 13)]
        answers, _ = source.lookup(queries, [])
        follow(source, queries, answers)
        on_main = relay.turns
        queries = [PrQuery(REPO, 12)]
        answers, _ = source.lookup(queries, [])
        follow(source, queries, answers)
        source.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "mh-stack-test")
    assert on_main == 1  # auth, select and the verdict in one round trip; default_base: nothing below
    assert [n for n, _ in answers[0].below] == [11, 10]


def test_the_http_api_carries_the_same_chain(redis_client: redis.Redis, tmp_path: Path) -> None:
    from tests.webapp_support import make_app, serving

    stack(redis_client)
    app, token = make_app(redis_client, tmp_path)
    with serving(app) as base:
        source = HttpSource(base, token, timeout_s=5)
        queries = [PrQuery(REPO, 12), PrQuery(REPO, 13), PrQuery(REPO, 40)]
        answers, _ = source.lookup(queries, [])
        follow(source, queries, answers)
        source.close()
    assert [n for n, _ in answers[0].below] == [11, 10] and answers[0].below[-1][1]["held"] is True  # type: ignore[index]
    assert answers[1].below == [] and answers[1].stack_problem is None
    assert answers[2].stack_problem is not None and "#41" in answers[2].stack_problem
