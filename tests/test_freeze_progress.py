"""A freeze's progress on `/rooms` (issue 14 item 5), from a seeded Redis: rulesets active, repos fallen
back to statuses, per-PR statuses written, ruleset descriptions written, exemptions — in two pipelined
round trips and no other command, however many repos and PRs."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from redis.client import Pipeline

from core import keys, verdict_format
from core.freeze_gate import ALL, freeze_mark
from core.holds import Exemption, Hold, Source
from core.status import build_status
from core.verdict import Verdict, verdict_record
from state.freeze_progress import Count, progress, wanted_posted
from state.posted_status import form as posted_form
from state.posted_status import wanted_status

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def freeze(scope: str, holder: str = "alice") -> Hold:
    return Hold(id=f"room:dashboard:{holder}:{scope}", source=Source.ROOM, scope=scope, holder=holder,
                reason="incident 4711", created_at=NOW - timedelta(minutes=5), expires_at=None, origin="dashboard")


def seed_pr(r: redis.Redis, repo: str, number: int, holds: tuple[Hold, ...], *, base: str = "main",
            posted: bool = False, marked: bool | None = None, bound: bool = False) -> dict[str, Any]:
    """An open PR with its verdict record; ``posted``: its wanted status is on its head; ``marked``: a
    ruleset-bound PR's `merge-hold/freeze` description is (True) or an old one is (False)."""
    verdict = Verdict(repo, number, holds, head_sha=f"{number:040x}", base=base, head_ref=f"topic-{number}")
    shown = Verdict(repo, number, (), head_sha=verdict.head_sha, base=base) if bound else verdict
    record = verdict_record(verdict, version=2, computed_at=NOW, status=build_status(
        shown, target_url=f"http://dash/{repo}/pull/{number}"))
    if bound:
        record["freeze_mark"] = freeze_mark(verdict, True, None)
    r.set(keys.verdict(repo, number), verdict_format.encode_verdict(record))
    r.sadd(keys.open_prs(repo), number)
    r.sadd(keys.MANAGED_REPOS, repo)
    want = wanted_status(record)
    assert want is not None
    r.set(keys.posted(repo, number), posted_form(*want) if posted else
          posted_form(want[0], {**want[1], "state": "success", "description": "No holds"}))
    if marked is not None:
        mark = record["freeze_mark"]
        r.set(keys.posted_mark(repo, number), json.dumps(
            {"sha": verdict.head_sha, **mark, **({} if marked else {"description": "an older freeze"})}))
    return record


def exempt(r: redis.Redis, repo: str, number: int, head_sha: str | None = None) -> None:
    """An exemption of the PR's head as `seed_pr` records it (or of ``head_sha``)."""
    found = Exemption(pr_scope=f"{repo}#{number}", by="carol", reason="hotfix", created_at=NOW, expires_at=None,
                      origin="dashboard", head_sha=head_sha or f"{number:040x}")
    r.hset(keys.exemptions(repo), str(number), json.dumps(found.to_dict()))


def ruleset(r: redis.Redis, repo: str, enforcement: str, include: list[str]) -> None:
    r.set(keys.freeze_ruleset(repo), json.dumps({"id": 9, "enforcement": enforcement, "include": include,
                                                 "at": "2026-03-02T11:55:00Z"}))


def test_wanted_posted_is_the_funnels_posted_form() -> None:
    """The web tier does not import the worker stack; its reading of "posted" must stay the funnel's."""
    record = verdict_record(Verdict("acme/widgets", 1, (freeze("acme"),), head_sha="a" * 40, base="main"),
                            version=1, computed_at=NOW, status=build_status(
                                Verdict("acme/widgets", 1, (freeze("acme"),), head_sha="a" * 40, base="main"),
                                target_url="http://dash/acme/widgets/pull/1"))
    want = wanted_status(record)
    assert want is not None and wanted_posted(record) == json.loads(posted_form(*want))
    assert wanted_posted(None) is None


def test_progress_in_both_modes(redis_client: redis.Redis) -> None:
    r = redis_client
    org, repo_hold, branch = freeze("acme"), freeze("acme/widgets", "bob"), freeze("acme/widgets@release/*")
    # acme/widgets freezes through statuses: 1 written, 1 still showing success, 1 not yet recomputed,
    # 1 exempt (not to be written), and a release branch PR.
    seed_pr(r, "acme/widgets", 1, (org, repo_hold), posted=True)
    seed_pr(r, "acme/widgets", 2, (org, repo_hold))
    seed_pr(r, "acme/widgets", 3, (), posted=True)
    seed_pr(r, "acme/widgets", 4, ())
    exempt(r, "acme/widgets", 4)
    seed_pr(r, "acme/widgets", 5, (org, repo_hold, branch), base="release/2.0", posted=True)
    # acme/gadgets: its ruleset is active over every branch; one description shown, one old, one not yet.
    ruleset(r, "acme/gadgets", "active", [ALL])
    seed_pr(r, "acme/gadgets", 1, (org,), bound=True, marked=True, posted=True)
    seed_pr(r, "acme/gadgets", 2, (org,), bound=True, marked=False, posted=True)
    seed_pr(r, "acme/gadgets", 3, (org,), bound=True, posted=True)
    # acme/tools wants a ruleset but may not write it: its freeze goes through statuses.
    r.set(keys.freeze_fallback("acme/tools"), "the App lacks Administration: write")
    seed_pr(r, "acme/tools", 1, (org,), posted=True)
    # another org's repo, never reached
    seed_pr(r, "beta/other", 1, (), posted=True)
    repos = ["acme/gadgets", "acme/tools", "acme/widgets", "beta/other"]

    found = progress(r, [org, repo_hold, branch, freeze("acme/widgets#1")], repos, NOW,
                     ruleset_repos=["acme/gadgets", "acme/tools"])

    assert set(found) == {org.id, repo_hold.id, branch.id}  # a PR hold is no freeze
    acme = found[org.id]
    assert (acme.repos, acme.rulesets) == (3, Count(1, 2))
    assert acme.fallbacks == (("acme/tools", "the App lacks Administration: write"),)
    assert acme.statuses == Count(3, 5)  # widgets 1 and 5, tools 1 of widgets 1, 2, 3, 5 and tools 1
    assert acme.descriptions == Count(1, 3)
    assert acme.exemptions == 1
    widgets = found[repo_hold.id]
    assert (widgets.repos, widgets.rulesets, widgets.fallbacks) == (1, Count(0, 0), ())
    assert (widgets.statuses, widgets.descriptions, widgets.exemptions) == (Count(2, 4), Count(0, 0), 1)
    release = found[branch.id]
    assert (release.statuses, release.exemptions) == (Count(1, 1), 0)  # only the release/2.0 PR


def test_a_path_freeze_counts_the_prs_it_holds_through_statuses_and_exemptions_of_their_head(
        redis_client: redis.Redis) -> None:
    r = redis_client
    migrations = replace(freeze("acme/gadgets"), paths=("db/migrations/**",))
    ruleset(r, "acme/gadgets", "active", [ALL])  # a ruleset freeze elsewhere does not carry a path freeze
    seed_pr(r, "acme/gadgets", 1, (migrations,), posted=True)  # changes a migration: held, written
    seed_pr(r, "acme/gadgets", 2, (migrations,))  # held, not written yet
    seed_pr(r, "acme/gadgets", 3, (), posted=True)  # changes no migration: not reached
    seed_pr(r, "acme/gadgets", 4, ())
    exempt(r, "acme/gadgets", 4)  # its head exempted
    seed_pr(r, "acme/gadgets", 5, (migrations,))
    exempt(r, "acme/gadgets", 5, head_sha="e" * 40)  # an exemption of an earlier head: not in force
    found = progress(r, [migrations], ["acme/gadgets"], NOW, ["acme/gadgets"])[migrations.id]
    assert (found.statuses, found.descriptions, found.exemptions) == (Count(1, 3), Count(0, 0), 0)


def test_a_branch_ruleset_counts_only_when_it_covers_the_branch(redis_client: redis.Redis) -> None:
    branch = freeze("acme/gadgets@release/*")
    ruleset(redis_client, "acme/gadgets", "active", ["refs/heads/release/**"])
    seed_pr(redis_client, "acme/gadgets", 1, (branch,), base="release/1", bound=True, marked=True)
    seed_pr(redis_client, "acme/gadgets", 2, (), base="main", posted=True)
    found = progress(redis_client, [branch, freeze("acme/gadgets")], ["acme/gadgets"], NOW, ["acme/gadgets"])
    assert (found[branch.id].rulesets, found[branch.id].descriptions) == (Count(1, 1), Count(1, 1))
    whole = found[freeze("acme/gadgets").id]
    # the repo-wide freeze is not covered by a release-only ruleset: main's PR goes through statuses
    assert (whole.rulesets, whole.descriptions, whole.statuses) == (Count(0, 1), Count(1, 1), Count(0, 1))
    ruleset(redis_client, "acme/gadgets", "disabled", ["refs/heads/release/**"])
    found = progress(redis_client, [branch], ["acme/gadgets"], NOW, ["acme/gadgets"])
    assert (found[branch.id].rulesets, found[branch.id].statuses) == (Count(0, 1), Count(0, 1))


def test_an_org_of_50_repos_and_5000_prs_takes_two_round_trips(redis_client: redis.Redis,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    org = freeze("acme")
    repos = [f"acme/repo-{i}" for i in range(50)]
    with redis_client.pipeline(transaction=False) as pipe:
        for repo in repos:
            for number in range(1, 101):
                record = verdict_record(Verdict(repo, number, (org,), head_sha=f"{number:040x}", base="main"),
                                        version=1, computed_at=NOW, status={"state": "failure", "description": "x"})
                pipe.set(keys.verdict(repo, number), verdict_format.encode_verdict(record))
                pipe.sadd(keys.open_prs(repo), number)
        pipe.execute()
    executes = []
    direct = []
    real_execute, real_command = Pipeline.execute, redis.Redis.execute_command

    def counted_execute(self: Pipeline, raise_on_error: bool = True) -> list[Any]:
        executes.append(len(self.command_stack))
        return real_execute(self, raise_on_error)

    def counted_command(self: redis.Redis, *args: Any, **options: Any) -> Any:
        direct.append(args[0])
        return real_command(self, *args, **options)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(Pipeline, "execute", counted_execute)
    monkeypatch.setattr(redis.Redis, "execute_command", counted_command)
    started = time.monotonic()
    found = progress(redis_client, [org], repos, NOW)[org.id]
    took = time.monotonic() - started
    assert found.statuses == Count(0, 5000) and found.repos == 50
    assert executes == [2 + 250, 150] and direct == []  # the org's 2 reads, 5 per repo, then 3 MGETs per repo
    assert took < 2.0, f"{took:.2f} s for 5,000 PRs"
