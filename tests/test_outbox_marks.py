"""Freeze marks are a kind of outbox member (issue 31 item 3): one paced, leased drain writes statuses
first, then marks, each at the pacer's priority it needs; a drain waiting for a mark's far slot holds back
no status that arrives later. Real Redis, rq and the GitHub emulator."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.freeze_gate import FREEZE_CONTEXT
from core.outbox import Member, group_member, mark_member, parse_member, pr_member, run_member
from state import store
from state.decoding import as_text
from tests.chat_support import dry_runtime, emulated_service, head_sha, latest, seed_repo
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from workers.publishing import freeze_marks
from workers.publishing.drain import drain
from workers.publishing.outbox import FRONT_MS, PEOPLE_MARK, URGENT_MARK, add, enqueue_drain, urgent_waiting
from workers.publishing.pacing import Pacer
from workers.publishing.recompute import EXPOSED, recompute, record

REPO = "acme/widgets"
BUCKET = "inst-1"


@pytest.mark.parametrize(("stored", "member"), [
    ("acme/widgets#7", Member("acme/widgets", 7)),
    (b"acme/widgets#7", Member("acme/widgets", 7)),
    ("acme/widgets@" + "a" * 40 + "#7", Member("acme/widgets", 7, "a" * 40)),
    ("acme/widgets@" + "a" * 40 + "#0", Member("acme/widgets", 0, "a" * 40)),
    ("mark:acme/widgets#7", Member("acme/widgets", 7, mark=True)),
    (b"mark:acme/my.repo-2#12", Member("acme/my.repo-2", 12, mark=True)),
    ("run:acme/widgets#7", Member("acme/widgets", 7, run=True)),
    (b"run:acme/my.repo-2#12", Member("acme/my.repo-2", 12, run=True)),
])
def test_every_stored_member_form_parses(stored: str | bytes, member: Member) -> None:
    assert parse_member(stored) == member


def test_the_member_writers_round_trip() -> None:
    assert parse_member(pr_member(REPO, 3)) == Member(REPO, 3)
    assert parse_member(group_member(REPO, "b" * 40, None)) == Member(REPO, 0, "b" * 40)
    assert parse_member(mark_member(REPO, 3)) == Member(REPO, 3, mark=True)
    assert parse_member(run_member(REPO, 3)) == Member(REPO, 3, run=True)
    assert [parse_member(m(REPO, 3)).status for m in (pr_member, mark_member, run_member)] == [True, False, False]


def test_marks_writes_for_people_rank_after_every_status_and_urgent_ones_first(redis_client: Redis) -> None:
    """Whatever a status's rank and shift (to the front, behind fresher PRs), it comes before a mark for
    people; an urgent mark (an exemption someone waits on) goes with the exposed statuses, by age, ahead of
    the rest. Added in the worst order: marks first, the front status last."""
    add(redis_client, BUCKET, mark_member(REPO, 1), PEOPLE_MARK)
    add(redis_client, BUCKET, mark_member(REPO, 2), URGENT_MARK)
    add(redis_client, BUCKET, pr_member(REPO, 3), 2, FRONT_MS - 1)  # a draft, as far back as a shift goes
    add(redis_client, BUCKET, pr_member(REPO, 4), 0)
    add(redis_client, BUCKET, group_member(REPO, "c" * 40, 5), EXPOSED)
    add(redis_client, BUCKET, pr_member(REPO, 6), 1, -FRONT_MS)
    order = [as_text(m) for m in redis_client.zrange(keys.outbox(BUCKET), 0, -1)]
    assert order == [mark_member(REPO, 2), group_member(REPO, "c" * 40, 5), pr_member(REPO, 4), pr_member(REPO, 6),
                     pr_member(REPO, 3), mark_member(REPO, 1)]
    assert urgent_waiting(redis_client, BUCKET)
    redis_client.zrem(keys.outbox(BUCKET), *order[1:5])
    assert urgent_waiting(redis_client, BUCKET)  # the urgent mark
    redis_client.zrem(keys.outbox(BUCKET), order[0])
    assert not urgent_waiting(redis_client, BUCKET)  # a mark for people only


@pytest.mark.parametrize(("lease", "mark_wait", "waiting", "queued"), [
    (None, None, [mark_member(REPO, 1)], True),  # nobody drains: a fresh drain
    ("run-a", None, [pr_member(REPO, 2)], False),  # the holder looks again before it lets go
    ("run-a", "run-a", [pr_member(REPO, 2), mark_member(REPO, 1)], True),  # it waits for a mark: a status came
    ("run-a", "run-a", [mark_member(REPO, 1)], False),  # it waits for a mark, and only marks wait
    ("run-a", "run-old", [pr_member(REPO, 2)], False),  # a stale wait of an earlier run
])
def test_a_fresh_drain_is_queued_past_a_holder_waiting_for_a_mark(
        redis_client: Redis, redis_url: str, lease: str | None, mark_wait: str | None, waiting: list[str],
        queued: bool) -> None:
    rt = dry_runtime(redis_client, redis_url)
    for member in waiting:
        add(redis_client, BUCKET, member, PEOPLE_MARK if parse_member(member).mark else 0)
    if lease:
        redis_client.set(keys.outbox_lease(BUCKET), lease, ex=60)
    if mark_wait:
        redis_client.set(keys.outbox_mark_wait(BUCKET), mark_wait, ex=60)
    assert enqueue_drain(rt, BUCKET) is queued
    assert rt.bulk(BUCKET).count == int(queued)
    assert enqueue_drain(rt, BUCKET) is False  # one waiting drain, however many ask


def frozen(svc: Service, number: int, description: str = "Frozen: incident 4711", state: str = "failure") -> dict[
        str, Any]:
    """PR ``number``'s verdict record carrying a freeze mark (its head shows none yet): for people to read, or
    with ``state`` success an exemption's, which is urgent."""
    record(svc.rt, REPO, number, datetime.now(UTC))
    found = dict(store.load_verdict(svc.redis, REPO, number) or {})
    found["freeze_mark"] = {"state": state, "context": FREEZE_CONTEXT, "description": description}
    with svc.redis.pipeline() as pipe:
        store.put_verdict(pipe, REPO, number, found)
        pipe.execute()
    return found


def drain_waiting_for_a_far_slot(svc: Service, redis_client: Redis) -> bytes | str:
    """With only writes for people on the outbox, spend the hour's low-priority slots (10 writes an hour
    leave 5 to them) and run the drain job by hand: it keeps the lease for the slot an hour away, saying
    it waits for a write for people (`outbox_mark_wait`). Returns its lease token; no slot is free now."""
    svc.rt.bulk(BUCKET).empty()  # type: ignore[no-untyped-call]  # the drain asked for runs here, by hand
    redis_client.delete(keys.outbox_drain_queued(BUCKET))
    pacer = Pacer.of(redis_client, svc.settings, BUCKET)
    for _ in range(5):
        pacer.reserve(None)
    assert drain(svc.rt, BUCKET, writes_for_people=True) == {"posted": 0, "checked": 1, "later": 1}
    holder = redis_client.get(keys.outbox_lease(BUCKET))
    assert holder is not None and redis_client.get(keys.outbox_mark_wait(BUCKET)) == holder
    assert redis_client.ttl(keys.outbox_lease(BUCKET)) > 3000  # kept for the slot, an hour away
    assert pacer.reserve(0) is None  # no slot free this instant: a status is left to a drain
    return holder


def test_a_drain_waiting_for_a_marks_slot_holds_no_status_back(github_emulator: GitHubEmulator, redis_client: Redis,
                                                                 redis_url: str) -> None:
    """The hour's low-priority slots are spent, so PR 1's mark waits about an hour and its drain keeps the
    lease for then. PR 2 changes while the pacer has no slot free this instant: its recompute's drain
    takes the lease over and writes the status within the second, then leaves the mark to a fresh drain
    job (a recompute never waits for a mark's slot), which waits for it in turn."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600.0, write_burst=1, write_hourly=10)
    seed_repo(github_emulator, redis_client, REPO, 2)
    marked = frozen(svc, 1)
    redis_client.delete(keys.outbox(BUCKET))  # PR 1's status: not what this test is about
    freeze_marks.note(svc.rt, BUCKET, REPO, 1, marked)  # the mark alone on the outbox
    holder = drain_waiting_for_a_far_slot(svc, redis_client)
    outcome = recompute(svc.rt, REPO, 2) or ""
    assert outcome.startswith("pending; drain {'posted': 1"), outcome
    assert (latest(github_emulator, REPO, 2) or {}).get("state") == "success"
    assert github_emulator.latest_status(REPO, head_sha(REPO, 1), FREEZE_CONTEXT) is None
    assert redis_client.zrange(keys.outbox(BUCKET), 0, -1) == [mark_member(REPO, 1).encode()]
    assert not redis_client.exists(keys.outbox_lease(BUCKET), keys.outbox_mark_wait(BUCKET))
    assert svc.rt.bulk(BUCKET).count == 1  # the drain job asked for, for the mark

    again = drain(svc.rt, BUCKET, writes_for_people=True)
    assert again == {"posted": 0, "checked": 1, "later": 1}
    taker = redis_client.get(keys.outbox_lease(BUCKET))
    assert taker not in (None, holder) and redis_client.get(keys.outbox_mark_wait(BUCKET)) == taker


def test_a_drain_run_in_place_leaves_the_marks_to_the_drain_job(github_emulator: GitHubEmulator,
                                                                 redis_client: Redis, redis_url: str) -> None:
    """A recompute's drain writes the statuses and stops at the first mark, asking for the drain job."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0)
    seed_repo(github_emulator, redis_client, REPO, 1)
    freeze_marks.note(svc.rt, BUCKET, REPO, 1, frozen(svc, 1))
    svc.rt.bulk(BUCKET).empty()  # type: ignore[no-untyped-call]
    redis_client.delete(keys.outbox_drain_queued(BUCKET))
    assert drain(svc.rt, BUCKET) == {"posted": 1, "checked": 1, "marks_left": 1}
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "success"
    assert not github_emulator.status_posts(FREEZE_CONTEXT)
    assert svc.rt.bulk(BUCKET).count == 1 and not redis_client.exists(keys.outbox_lease(BUCKET))


def test_an_exemptions_mark_is_written_in_place_ahead_of_the_statuses(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> None:
    """An exemption's success lets its PR through the ruleset, and someone waits on it: a recompute's drain
    writes it first, at the statuses' priority, and leaves only the marks for people to the drain job."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0)
    seed_repo(github_emulator, redis_client, REPO, 2)
    freeze_marks.note(svc.rt, BUCKET, REPO, 2, frozen(svc, 2))
    freeze_marks.note(svc.rt, BUCKET, REPO, 1, frozen(svc, 1, "Exempted: hotfix", state="success"))
    svc.rt.bulk(BUCKET).empty()  # type: ignore[no-untyped-call]
    redis_client.delete(keys.outbox_drain_queued(BUCKET))
    assert drain(svc.rt, BUCKET) == {"posted": 3, "checked": 3, "marks_left": 1}
    posts = [(p["context"], p["state"]) for p in github_emulator.status_posts(None)]
    assert posts == [(FREEZE_CONTEXT, "success"), ("merge-hold", "success"), ("merge-hold", "success")]
    assert redis_client.zrange(keys.outbox(BUCKET), 0, -1) == [mark_member(REPO, 2).encode()]


def test_marks_go_after_statuses_at_their_own_priority(github_emulator: GitHubEmulator, redis_client: Redis,
                                                       redis_url: str) -> None:
    """With slots free, one drain writes the statuses first and then the marks, and takes each mark off the
    outbox once its head shows it; a mark already shown is not written again."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=600_000.0)
    seed_repo(github_emulator, redis_client, REPO, 2)
    for number in (1, 2):
        freeze_marks.note(svc.rt, BUCKET, REPO, number, frozen(svc, number))
    redis_client.zadd(keys.outbox(BUCKET), {pr_member(REPO, 1): 0, pr_member(REPO, 2): 1})
    svc.drain()
    posts = [(p["context"], p["sha"]) for p in github_emulator.status_posts(None)]
    assert [c for c, _sha in posts] == ["merge-hold", "merge-hold", FREEZE_CONTEXT, FREEZE_CONTEXT]
    assert not redis_client.zcard(keys.outbox(BUCKET))
    freeze_marks.note(svc.rt, BUCKET, REPO, 1, store.load_verdict(redis_client, REPO, 1))
    assert not redis_client.zcard(keys.outbox(BUCKET))  # shown: nothing to write
