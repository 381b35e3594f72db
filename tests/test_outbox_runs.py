"""Check runs are a kind of outbox member (issue 31 item 3): the one paced, leased drain writes them after
every status and urgent freeze mark — a click's answer before the marks for people, the other runs after
them — never in a drain run in place, and a drain waiting for a run's far slot holds back no status that
arrives later. Real Redis, rq and the GitHub emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.outbox import mark_member, pr_member, run_member
from state.decoding import as_text
from state.room_holds import place_hold
from tests.chat_support import emulated_service, latest, seed_repo
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from tests.emulator.seeding import DEFAULT_PERMISSIONS
from tests.test_outbox_marks import drain_waiting_for_a_far_slot
from workers.publishing import check_runs
from workers.publishing.drain import drain
from workers.publishing.outbox import (
    FRONT_MS,
    PEOPLE_MARK,
    RANK_SPAN,
    RUN_ANSWER,
    RUN_FREEZE_ONLY,
    RUN_OWN,
    URGENT_CEILING,
    URGENT_MARK,
    add,
    urgent_waiting,
)
from workers.publishing.pacing import Pacer
from workers.publishing.recompute import EXPOSED, recompute, record

REPO = "acme/widgets"
BUCKET = "inst-1"
CHECKS = {**DEFAULT_PERMISSIONS, "checks": "write"}


def test_runs_rank_after_every_status_and_urgent_mark_and_answers_before_marks_writes_for_people(
        redis_client: Redis) -> None:
    """Added in the worst order: runs first, the most urgent status last."""
    add(redis_client, BUCKET, run_member(REPO, 1), RUN_FREEZE_ONLY)
    add(redis_client, BUCKET, run_member(REPO, 2), RUN_OWN)
    add(redis_client, BUCKET, mark_member(REPO, 3), PEOPLE_MARK)
    add(redis_client, BUCKET, run_member(REPO, 4), RUN_ANSWER)
    add(redis_client, BUCKET, pr_member(REPO, 5), 2, FRONT_MS - 1)  # a draft, as far back as a shift goes
    add(redis_client, BUCKET, mark_member(REPO, 6), URGENT_MARK)
    add(redis_client, BUCKET, pr_member(REPO, 7), EXPOSED)
    order = [as_text(m) for m in redis_client.zrange(keys.outbox(BUCKET), 0, -1)]
    assert order == [mark_member(REPO, 6), pr_member(REPO, 7), pr_member(REPO, 5), run_member(REPO, 4),
                     mark_member(REPO, 3), run_member(REPO, 2), run_member(REPO, 1)]
    redis_client.zrem(keys.outbox(BUCKET), *order[:3])
    assert not urgent_waiting(redis_client, BUCKET)  # runs and marks for people only: nothing takes a drain over


@pytest.mark.parametrize(("rank", "urgent"), [
    (EXPOSED, True),
    (2, True),  # the least mergeable status
    (URGENT_MARK, True),
    (check_runs.ANSWER, False),  # a click's answer: still for people to read
    (check_runs.OWN, False),
    (check_runs.FREEZE_ONLY, False),
    (PEOPLE_MARK, False),
    (4, False),  # a mark for people stored before runs joined the outbox (its rank was 4)
])
def test_which_side_of_the_urgent_ceiling_a_rank_lies(redis_client: Redis, rank: int, urgent: bool) -> None:
    """At or above `URGENT_CEILING` a drain run in place stops, and a waiting drain is not taken over."""
    add(redis_client, BUCKET, run_member(REPO, 1), rank, FRONT_MS - 1)
    assert urgent_waiting(redis_client, BUCKET) is urgent
    assert (rank * RANK_SPAN >= URGENT_CEILING) is not urgent


def held(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, **overrides: Any) -> Service:
    """Two PRs of a repo whose installation may write check runs, both held by a room hold; PR 1 recorded
    (its status and its run on the outbox)."""
    svc = emulated_service(github_emulator, redis_url, **overrides)
    seed_repo(github_emulator, redis_client, REPO, 2)
    github_emulator.set_installation_permissions(1, CHECKS)
    place_hold(redis_client, REPO, holder="dana", holder_id="slack:T1:U1", reason="incident 4711",
               origin="slack:acme/#ops", now=datetime.now(UTC))
    record(svc.rt, REPO, 1, datetime.now(UTC))
    return svc


def test_a_drain_waiting_for_a_runs_slot_holds_no_status_back(github_emulator: GitHubEmulator, redis_client: Redis,
                                                                redis_url: str) -> None:
    """The hour's low-priority slots are spent, so PR 1's run waits about an hour and its drain keeps the
    lease for then. PR 2 changes while the pacer has no slot free this instant: its recompute's drain takes
    the lease over and writes the status within the second, then leaves the runs to a fresh drain job (a
    recompute never waits for a run's slot), which waits for them in turn."""
    svc = held(github_emulator, redis_client, redis_url, write_rate_per_minute=600.0, write_burst=1,
               write_hourly=10)
    redis_client.zrem(keys.outbox(BUCKET), pr_member(REPO, 1))  # PR 1's status: not what this test is about
    assert redis_client.zrange(keys.outbox(BUCKET), 0, -1) == [run_member(REPO, 1).encode()]
    holder = drain_waiting_for_a_far_slot(svc, redis_client)
    outcome = recompute(svc.rt, REPO, 2) or ""
    assert outcome.startswith("pending; drain {'posted': 1"), outcome
    assert (latest(github_emulator, REPO, 2) or {}).get("state") == "failure"
    assert not github_emulator.count(None, r"/check-runs")
    assert sorted(redis_client.zrange(keys.outbox(BUCKET), 0, -1)) == [
        run_member(REPO, 1).encode(), run_member(REPO, 2).encode()]
    assert not redis_client.exists(keys.outbox_lease(BUCKET), keys.outbox_mark_wait(BUCKET))
    assert svc.rt.bulk(BUCKET).count == 1  # the drain job asked for, for the runs

    again = drain(svc.rt, BUCKET, writes_for_people=True)
    assert again == {"posted": 0, "checked": 1, "later": 1}
    taker = redis_client.get(keys.outbox_lease(BUCKET))
    assert taker not in (None, holder) and redis_client.get(keys.outbox_mark_wait(BUCKET)) == taker


@pytest.mark.parametrize("deliveries_wait", [False, True])
def test_a_drain_run_in_place_leaves_the_runs_to_the_drain_job(github_emulator: GitHubEmulator,
                                                               redis_client: Redis, redis_url: str,
                                                               deliveries_wait: bool) -> None:
    """A recompute's drain writes the status and stops at the run, asking for the drain job; the drain job
    writes the run. With deliveries waiting it still lets the outbox go rather than keep it for a
    continuation: the next deliveries' drains write their statuses, instead of finding it busy."""
    svc = held(github_emulator, redis_client, redis_url, write_rate_per_minute=600_000.0)
    svc.rt.bulk(BUCKET).empty()  # type: ignore[no-untyped-call]
    redis_client.delete(keys.outbox_drain_queued(BUCKET))
    if deliveries_wait:
        svc.rt.queue.enqueue("builtins.len", "a delivery")
    assert drain(svc.rt, BUCKET) == {"posted": 1, "checked": 1, "marks_left": 1}
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"
    assert not github_emulator.count(None, r"/check-runs")
    assert svc.rt.bulk(BUCKET).count == 1 and not redis_client.exists(keys.outbox_lease(BUCKET))
    assert drain(svc.rt, BUCKET, writes_for_people=True) == {"posted": 1, "checked": 1}
    assert github_emulator.count("POST", r"/check-runs$") == 1 and not redis_client.zcard(keys.outbox(BUCKET))


def test_a_refusal_takes_the_installations_runs_off_the_outbox_and_leaves_its_statuses(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    """The installation's token says Checks: read: nothing is asked of GitHub, its runs leave the outbox
    (another installation's stay), its statuses and marks stay, and no run is noted for an hour."""
    svc = held(github_emulator, redis_client, redis_url, write_rate_per_minute=600_000.0)
    redis_client.set(keys.installation_token(1), json.dumps({"token": "t", "permissions": {"checks": "read"}}))
    add(redis_client, BUCKET, run_member(REPO, 2), RUN_ANSWER)
    add(redis_client, BUCKET, mark_member(REPO, 2), PEOPLE_MARK)
    add(redis_client, "inst-2", run_member("acme/other", 1), RUN_OWN)
    pacer = Pacer.of(redis_client, svc.settings, BUCKET)
    assert check_runs.write(svc.rt, pacer, BUCKET, run_member(REPO, 2), 0.0) == "refused"
    assert sorted(redis_client.zrange(keys.outbox(BUCKET), 0, -1)) == [pr_member(REPO, 1).encode(),
                                                                       mark_member(REPO, 2).encode()]
    assert redis_client.zrange(keys.outbox("inst-2"), 0, -1) == [run_member("acme/other", 1).encode()]
    assert not github_emulator.count(None, r"/check-runs")
    record(svc.rt, REPO, 2, datetime.now(UTC))
    assert redis_client.zscore(keys.outbox(BUCKET), run_member(REPO, 2)) is None  # refused: none noted
