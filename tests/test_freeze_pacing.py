"""A freeze binds as fast on a busy installation as on an idle one, and a thaw is never starved by its
own freeze (per-repo rulesets: no Organization administration here).

- Busy: the installation's paced writes (a fan-out, a bootstrap) have taken every slot of GitHub's
  minute they may; the freeze's ruleset writes still go at once, in the share of the minute kept for
  them — counted as the seconds each ruleset write waited for its pacer slot, not as wall time.
- Thaw: the installation has spent part of GitHub's hour; a freeze of more repos than what is left
  could bind while keeping a thaw write each binds as many as can (each keeping its thaw's write),
  schedules the rest and says when; the thaw then writes every ruleset it must, none refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from core.chat_request import parse_binding
from tests.chat_support import emulated_service, seed_repo
from tests.emulator import APP_ID, GitHubEmulator
from tests.test_freeze_ruleset import ADMIN, ORG, request
from workers import runtime
from workers.chat.rooms import execute
from workers.publishing import pacing
from workers.publishing.fanout import request_fanout
from workers.publishing.pacing import GATE, LOW_PRIORITY, URGENT, Pacer

BUCKET = "inst-1"


def repo_ruleset_writes(emu: GitHubEmulator) -> int:
    return emu.count("POST", r"^/repos/.*/rulesets$") + emu.count("PUT", r"^/repos/.*/rulesets/\d+$")


def setup(emu: GitHubEmulator, redis: Redis, redis_url: str, repos: list[str], **slow: Any) -> runtime.Runtime:
    """Repos of one mergeable PR each in ruleset mode, set up at a fast pace; the runtime returned
    paces at ``slow`` (GitHub's real figures, or a scaled-down hour), its pacer's windows empty."""
    svc = emulated_service(emu, redis_url, write_rate_per_minute=600_000.0, freeze_mode="ruleset",
                           slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"))
    for repo in repos:
        seed_repo(emu, redis, repo, 1)
        emu.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
    emu.set_installation_permissions(1, ADMIN)
    request_fanout(svc.rt, ORG)
    svc.drain()
    assert all(emu.mergeable(r, 1) for r in repos)
    redis.delete(keys.pacer(BUCKET), keys.pacer_hour(BUCKET))
    emu.reset_log()
    return runtime.build(replace(svc.settings, **slow))


@pytest.mark.parametrize("busy", [URGENT, LOW_PRIORITY], ids=["statuses-fan-out", "low-priority-work"])
def test_a_freeze_on_a_busy_installation_binds_at_once(github_emulator: GitHubEmulator, redis_client: Redis,
                                                      redis_url: str, monkeypatch: pytest.MonkeyPatch,
                                                      busy: int) -> None:
    repos = [f"acme/busy-{i}" for i in range(8)]
    rt = setup(github_emulator, redis_client, redis_url, repos, write_rate_per_minute=60.0, write_burst=10,
               write_hourly=450)
    pacer = Pacer.of(rt.redis, rt.settings, BUCKET)
    # The installation's own paced work takes every slot of the sliding minute it may (its writes
    # reserved ahead, as a running drain or bootstrap holds them).
    taken = 0
    while pacer.reserve(59, priority=busy) is not None:
        taken += 1
    assert taken == pacer.minute_cap(URGENT) == 60  # rate + burst, less the gates' share
    waits: list[float] = []
    acquire = Pacer.acquire

    def counted(self: Pacer, max_wait: float | None = None, **kwargs: Any) -> float:
        waited = acquire(self, max_wait, **kwargs)
        if kwargs.get("priority") == GATE:
            waits.append(waited)
        return waited

    monkeypatch.setattr(pacing.Pacer, "acquire", counted)
    reply = execute(rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    assert f"rulesets active in {len(repos)} of {len(repos)} repos" in reply.text
    assert repo_ruleset_writes(github_emulator) == len(repos)
    assert waits and max(waits) == 0  # not one ruleset write waited for the busy minute
    assert not any(github_emulator.mergeable(r, 1) for r in repos)
    assert github_emulator.refused_writes == 0


def test_a_thaw_keeps_its_writes_after_a_freeze_bigger_than_the_hour(github_emulator: GitHubEmulator,
                                                                   redis_client: Redis, redis_url: str) -> None:
    repos = [f"acme/big-{i:02d}" for i in range(12)]
    hourly = 40  # GitHub's hour, scaled down so that the test spends it
    rt = setup(github_emulator, redis_client, redis_url, repos, write_hourly=hourly)
    github_emulator.secondary_limit(None, hourly)
    pacer = Pacer.of(rt.redis, rt.settings, BUCKET)
    for _ in range(20):  # the installation was installed within the hour: half of it spent
        assert pacer.reserve(1) is not None
    left = hourly - 20 - 1  # less the org ruleset's one try (refused: no Organization administration)
    bind_now = left // 2  # each activation keeps its thaw's write

    reply = execute(rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    frozen = [r for r in repos if not github_emulator.mergeable(r, 1)]
    assert len(frozen) == bind_now == repo_ruleset_writes(github_emulator)
    assert f"{bind_now} of {len(repos)} repos bind now; the other {len(repos) - bind_now} by about" in reply.text
    assert pacer.owed() == bind_now
    assert all(redis_client.exists(keys.freeze_deferred(r)) for r in repos if r not in frozen)
    assert pacer.reserve(1) is None and pacer.reserve(1, priority=LOW_PRIORITY) is None  # kept for the thaw

    github_emulator.reset_log()
    reply = execute(rt, request(), ChatCommand("unhold", ORG))
    assert f"rulesets disabled in {bind_now} of {len(repos)} repos" in reply.text
    assert repo_ruleset_writes(github_emulator) == bind_now  # every thaw write went
    assert all(github_emulator.mergeable(r, 1) for r in repos)  # none left frozen
    assert github_emulator.refused_writes == 0 and pacer.owed() == 0
    assert not any(redis_client.exists(keys.freeze_deferred(r)) for r in repos)  # nothing left to bind later
