"""Recompute a PR's verdict: the verdict record in Redis at once, the `merge-hold` status through the outbox.

Drives to the desired state (Prow's way): computes the status that should be on the head commit; the
record is written at once, and the PR goes on its installation's outbox when the posted status
differs (`workers.publishing.outbox`: paced, most-mergeable first, fenced). Bursts coalesce: a
recompute asked for while one is queued adds nothing, and one asked for while one runs leads to exactly
one more (the `queued` flag is cleared when the run starts, under the PR's lock). Step 7 of a delivery's
path (docs/architecture.md): a delivery runs the recomputes it asked for itself (`run_in_delivery`),
and writes the status at once (step 8) when the pacer has a slot free.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

from redis.exceptions import LockError
from rq.timeouts import BaseTimeoutException

from core import jobs, keys, verdict_format
from core.exempt_labels import granted_labels
from core.freeze import next_transition
from core.holds import Exemption, to_iso
from core.outbox import GLOBAL_BUCKET
from core.outbox import bucket as outbox_bucket
from core.paths import NOT_READ
from core.prstate import PullState
from core.repo_config import RepoConfig
from core.status import build_status
from core.verdict import Verdict, compute_verdict, verdict_record, wants_files
from state import audit, posted_status, room_holds, store
from state.config_file import repo_config
from state.queueing import options
from workers.publishing import (
    changed_files,
    check_runs,
    exemption_ends,
    freeze_marks,
    freeze_rulesets,
    in_delivery,
    merge_groups,
)
from workers.publishing.drain import drain
from workers.publishing.history_replay import replay_history
from workers.publishing.locks import LOCK_TIMEOUT, take_pr_lock
from workers.publishing.outbox import FRONT_MS, add_to_outbox, bucket_of
from workers.publishing.request import RECOMPUTE_JOB
from workers.publishing.write import write_now
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

RECORD_ONLY = ("computed_at", "version", "state_version")
"""Record fields that do not make a new verdict (no new version, no audit, no status)."""


def recompute_job(repo: str, number: int) -> str:
    """The rq job: record the verdict under the PR's lock, then write what the outbox holds."""
    outcome = recompute(current(), repo, number)
    if outcome is None:
        raise LockError(f"{repo}#{number}: the PR's lock stayed taken for {LOCK_TIMEOUT}s")
    return outcome


def recompute(rt: Runtime, repo: str, number: int, *, lock_wait: float = LOCK_TIMEOUT) -> str | None:
    """`recompute_job`'s work (also run in-process by `workers.publishing.in_delivery`); None, with nothing done, when
    the PR's lock is not free within ``lock_wait`` seconds."""
    outcome = record_locked(rt, repo, number, wait=lock_wait, asked=True)
    if outcome == "pending":
        counts = drain(rt, bucket_of(rt.redis, repo))
        return f"{outcome}; drain {counts}"
    return outcome


def record_locked(rt: Runtime, repo: str, number: int, *, wait: float = LOCK_TIMEOUT, asked: bool = False,
                  by_activity: bool = False, lapse_ok: bool = False) -> str | None:
    """Lock the PR, then `record` it — the one copy of lock-then-record (a recompute, a fan-out, the
    reconcile). None, with nothing done, when the lock is not free within ``wait`` seconds.

    A recompute someone ``asked`` for (activity on the PR) clears its queued flag first (so a request
    arriving meanwhile leads to one more run), goes to the front of its outbox rank, and is written at
    once when a write slot is free. A lock that lapsed before its release raises `LockError` (rq retries
    the job) unless ``lapse_ok`` (then it is logged: the record is written either way)."""
    lock = take_pr_lock(rt.redis, repo, number, wait)
    if lock is None:
        return None
    try:
        if asked:
            rt.redis.delete(keys.recompute_queued(repo, number))
        outcome, bucket = _record(rt, repo, number, datetime.now(UTC), front=asked, by_activity=by_activity)
        if asked and outcome == "pending":
            # A free write slot now: post at once, without waiting for the outbox's one drain.
            outcome = write_now(rt, repo, number, lock, bucket=bucket) or outcome
    finally:
        try:
            lock.release()
        except LockError:
            if not lapse_ok:
                raise
            log.warning("the lock on %s#%s lapsed before its release", repo, number)
    return outcome


def target_url(rt: Runtime, repo: str, number: int) -> str:
    return f"{rt.settings.public_url}/{repo}/pull/{number}"


def record(rt: Runtime, repo: str, number: int, now: datetime, *, front: bool = False,
           by_activity: bool = False) -> str:
    """Recompute one PR and write its verdict record (call under the PR's lock). Returns "pending" when
    its status is now on the outbox, else why not ("unchanged", "closed", "unknown-pr", "no-head", "dropped").
    Within its rank on the outbox the write goes to the ``front`` (activity on the PR asked for it), or,
    ``by_activity`` (a bootstrap), behind PRs active more recently, across the installation's repos."""
    return _record(rt, repo, number, now, front=front, by_activity=by_activity)[0]


def _record(rt: Runtime, repo: str, number: int, now: datetime, *, front: bool = False,
            by_activity: bool = False) -> tuple[str, str | None]:
    """`record`, and the outbox bucket it used (None when it did not get that far): the write that may
    follow at once needs no second read of the repo's meta for it."""
    if rt.redis.exists(keys.repo_dropped(repo)):
        return "dropped", None  # the App left the repo while this recompute waited: write and post nothing
    state, state_version = store.load_pull_versioned(rt.redis, repo, number)
    meta = store.load_repo(rt.redis, repo)
    config, config_error = repo_config(meta)
    if not state.synced or state.facts is None:
        state = replay_history(rt, state, config)
        if state.facts is None:
            return "unknown-pr", None
        state_version = store.state_version(rt.redis, repo, number)
    if not state.facts.open:
        _forget(rt, repo, number, state)
        return "closed", None
    exemption = store.exemption(rt.redis, repo, number)
    scoped = room_holds.scoped_holds(rt.redis, repo)
    head = state.head_sha
    # The files its head changes, read (once per head) only when a path-scoped hold reaches the PR.
    files, retry_at = changed_files.read(rt, repo, number, head, now) \
        if head and wants_files(state, config, scoped, now) else (NOT_READ, None)
    verdict = compute_verdict(state, config=config, config_error=config_error, now=now, scoped_holds=scoped,
                              exemption=exemption, changed_files=files)
    exemption_ends.note(rt, state, exemption, config, now)  # what a push ended: removed, audited, told
    held_state = config.held_state if config else "failure"
    # Under a ruleset freeze the status carries only what is per PR; the record keeps every hold. Only what
    # exempts this head counts (an exemption granted on another head, a label added for another, do not).
    covering = exemption if exemption is not None and exemption.covers(head, now) else None
    labels = granted_labels(state.grants, state.facts.sure_labels, head)
    shown, mark = freeze_rulesets.shaped(rt, repo, verdict, config, scoped, covering, labels, now)
    status = build_status(shown, held_state=held_state, target_url=target_url(rt, repo, number))
    written = _write_record(rt, state, verdict, status, now, state_version, config.hold_label if config else None,
                            meta.default_branch if meta is not None else None, mark)
    merge_groups.follow(rt, repo, number)  # merge groups checking this PR carry its verdict too
    if config is not None:
        _schedule_wakeup(rt, repo, number, verdict, config, now, covering, retry_at)
    if not verdict.head_sha:
        return "no-head", None
    # The repo's meta read above names its installation: no second read for the bucket.
    bucket = outbox_bucket(meta.installation_id) if meta is not None else GLOBAL_BUCKET
    # The freeze mark and the check run beside the status: outbox members ranked after it (noted first, so
    # that a drain waiting for their slot is taken over only for the status, by the drain run in place).
    freeze_marks.note(rt, bucket, repo, number, written)
    check_runs.note(rt, bucket, repo, number, written, config)
    posted = rt.redis.get(keys.posted(repo, number))
    outcome = "unchanged"
    if posted != posted_status.form(verdict.head_sha, status):
        rank = EXPOSED if status["state"] != "success" and _shows_success(posted, verdict.head_sha) \
            else mergeability(state)
        shift = -FRONT_MS if front else int((now - state.facts.at).total_seconds() * 1000) if by_activity else 0
        add_to_outbox(rt.redis, bucket, repo, number, rank, shift)
        outcome = "pending"
    return outcome, bucket


EXPOSED = -1
"""The outbox rank of a held PR whose head still shows `success`: GitHub would merge it now, so its
write goes before any other (with the merge groups being checked)."""


def _shows_success(posted: bytes | str | None, head_sha: str) -> bool:
    shown = posted_status.parse(posted)
    return shown is not None and shown.get("sha") == head_sha and shown.get("state") == "success"


def mergeability(state: PullState) -> int:
    """0: ready (not a draft, approved, no changes requested) · 1: other non-drafts · 2: drafts."""
    facts = state.facts
    if facts is None or facts.draft:
        return 2
    blocked = any(r.held and r.ref not in state.dismissed for r in state.reviews.values())
    approved = any(not r.held for r in state.reviews.values())
    return 0 if approved and not blocked else 1


def _write_record(rt: Runtime, state: PullState, verdict: Verdict, status: dict[str, Any], now: datetime,
                  state_version: int, hold_label: str | None = None, default_branch: str | None = None,
                  freeze_mark: dict[str, str] | None = None) -> dict[str, Any]:
    """Write the verdict record unless it says what the stored one says; returns the record now stored."""
    repo, number = state.repo, state.number
    previous = store.load_verdict(rt.redis, repo, number)
    record = verdict_record(verdict, version=0, computed_at=now, status=status, hold_label=hold_label,
                            default_branch=default_branch)  # default_base: the hook's stack rule
    if freeze_mark is not None:
        record["freeze_mark"] = freeze_mark  # the `merge-hold/freeze` status under a ruleset freeze
    # The state it was computed from: a reconcile that finds the state newer recomputes the PR.
    record["state_version"] = state_version
    comparable = {k: v for k, v in record.items() if k not in RECORD_ONLY}
    if previous is not None and {k: v for k, v in previous.items() if k not in RECORD_ONLY} == comparable:
        if previous.get("state_version") != state_version:
            with rt.redis.pipeline() as pipe:
                store.put_verdict(pipe, repo, number, {**previous, "state_version": state_version})
                pipe.execute()
        return previous
    record["version"] = store.next_verdict_version(rt.redis, repo, number, previous)
    facts = state.facts
    with rt.redis.pipeline() as pipe:
        store.put_verdict(pipe, repo, number, record)
        pipe.sadd(keys.open_prs(repo), number)
        if record["held"]:
            pipe.sadd(keys.held_prs(repo), number)
            pipe.hset(keys.held_heads(repo), str(number),
                      verdict_format.encode_held_head(record["base"], record["head_sha"], record["description"]))
        else:
            pipe.srem(keys.held_prs(repo), number)
            pipe.hdel(keys.held_heads(repo), str(number))
        if facts is not None:
            pipe.set(keys.head_index(repo, _head_key(state)), number)
        pipe.execute()
    if previous is None or previous.get("held") != record["held"]:
        audit.record(rt.redis, repo, "verdict.held" if record["held"] else "verdict.free", number=number,
                    holds=record["holds"], version=record["version"])
    return record


def _head_key(state: PullState) -> str:
    assert state.facts is not None
    if state.is_fork:
        return f"{state.facts.head_repo.split('/', 1)[0]}:{state.facts.head_ref}"
    return state.facts.head_ref


def _forget(rt: Runtime, repo: str, number: int, state: PullState) -> None:
    """A closed PR leaves the live indexes; its state stays a while as a tombstone, history forever."""
    previous = store.load_verdict(rt.redis, repo, number)
    with rt.redis.pipeline() as pipe:
        store.drop_verdict(pipe, repo, number, previous)
        pipe.delete(keys.posted(repo, number), keys.posted_mark(repo, number))
        pipe.srem(keys.open_prs(repo), number)
        pipe.srem(keys.held_prs(repo), number)
        pipe.hdel(keys.held_heads(repo), str(number))
        pipe.hdel(keys.exemptions(repo), str(number))
        pipe.delete(keys.changed_files(repo, number))
        pipe.execute()
    check_runs.forget(rt.redis, repo, number)
    if state.facts is not None:
        index = keys.head_index(repo, _head_key(state))
        if rt.redis.get(index) == str(number).encode():
            rt.redis.delete(index)


def _schedule_wakeup(rt: Runtime, repo: str, number: int, verdict: Verdict, config: RepoConfig,
                     now: datetime, exemption: Exemption | None, retry_at: datetime | None = None) -> None:
    """Timed holds, exemptions and freeze windows end on time: a recompute is scheduled for the
    next moment the verdict could change by the clock alone (rq's scheduler runs it), or when a file
    list that could not be read is to be read again (``retry_at``)."""
    moments = [h.expires_at for h in verdict.holds if h.expires_at is not None and h.expires_at > now]
    if exemption is not None and exemption.expires_at is not None and exemption.expires_at > now:
        moments.append(exemption.expires_at)
    if retry_at is not None and retry_at > now:
        moments.append(retry_at)
    turn = next_transition(config, now)
    if turn is not None:
        moments.append(turn)
    if not moments:
        return
    when = min(moments)
    job_id = "wake-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{repo}-{number}-{int(when.timestamp())}")
    if rt.redis.set(keys.wake(job_id), "1", nx=True, ex=int((when - now).total_seconds()) + 3600):
        rt.queue.enqueue_at(when, RECOMPUTE_JOB, repo, number, job_id=job_id, **options(jobs.RECOMPUTE))
        log.info("scheduled %s#%s recompute at %s", repo, number, to_iso(when))


def run_in_delivery(rt: Runtime, delivery: in_delivery.InDelivery) -> int:
    """Run the recomputes the delivery asked for in place and cancel their backstops (the delivery's
    `close` then runs the work deferred until after them); returns how many recomputes ran."""
    done = 0
    tried: set[tuple[str, int]] = set()
    covered: set[tuple[str, int]] = set()
    for item in delivery.asked():
        if item.queue != rt.queue.name:
            continue
        pr = (item.repo.lower(), item.number)
        if pr in covered:
            # Asked twice in one delivery: the run after the handler covered both requests.
            in_delivery.cancel_backstop(rt.queue, item.job_id)
            continue
        if pr in tried:
            in_delivery.queue_backstop_now(rt.queue, item.job_id)  # its first run failed: this one goes too
            continue
        tried.add(pr)
        try:
            outcome = recompute(rt, item.repo, item.number, lock_wait=in_delivery.LOCK_WAIT)
        except BaseTimeoutException:
            raise  # the delivery job's own timeout: rq handles it
        except Exception as exc:  # the backstop does the work, now, with its retries
            log.warning("in-delivery recompute of %s#%s failed (%s); its job runs it", item.repo, item.number, exc)
            in_delivery.queue_backstop_now(rt.queue, item.job_id)
            continue
        if outcome is None:  # the PR's lock is busy: its job waits for it, from the queue
            in_delivery.queue_backstop_now(rt.queue, item.job_id)
            continue
        covered.add(pr)
        in_delivery.cancel_backstop(rt.queue, item.job_id)
        done += 1
    return done
