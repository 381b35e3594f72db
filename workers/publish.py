"""Recompute a PR's verdict and publish it: the verdict record in Redis and the `merge-hold` status.

The one funnel every event ends in. Drives to the desired state (Prow's way): computes the status
that should be on the head commit and posts only when it differs from the last one posted. Bursts
coalesce: a recompute asked for while one is queued adds nothing, and one asked for while one runs
leads to exactly one more (the `queued` flag is cleared when the run starts, under the PR's lock).
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from rq import Retry

from core import keys
from core.freeze import next_transition
from core.holds import to_iso
from core.prstate import PullState
from core.repo_config import ConfigError, RepoConfig
from core.status import build_status
from core.verdict import Verdict, compute_verdict, verdict_record
from workers import groups, store
from workers.config_loader import load_config
from workers.runtime import Runtime, current
from workers.sync import sync_pull

log = logging.getLogger(__name__)

RECOMPUTE_JOB = "workers.publish.recompute_job"
RECOMPUTE_RETRY = Retry(max=5, interval=[1, 5, 30, 120, 600])
LOCK_TIMEOUT = 60
QUEUED_TTL = 600
"""A lost `queued` flag (a worker killed between enqueue and run) stops blocking after ten minutes."""


def request_recompute(rt: Runtime, repo: str, number: int) -> bool:
    """Ask for a recompute of ``repo#number``; False when one is already waiting (coalesced)."""
    if not rt.redis.set(keys.recompute_queued(repo, number), "1", nx=True, ex=QUEUED_TTL):
        return False
    rt.queue.enqueue(RECOMPUTE_JOB, repo, number, retry=RECOMPUTE_RETRY, result_ttl=60, failure_ttl=86400)
    return True


def recompute_job(repo: str, number: int) -> str:
    rt = current()
    lock = rt.redis.lock(keys.recompute_lock(repo, number), timeout=LOCK_TIMEOUT, sleep=0.01,
                         blocking_timeout=LOCK_TIMEOUT)
    with lock:
        rt.redis.delete(keys.recompute_queued(repo, number))
        return publish(rt, repo, number, datetime.now(UTC))


@lru_cache(maxsize=256)
def _parse_config(text: str | None) -> tuple[RepoConfig | None, str | None]:
    try:
        return load_config(text), None
    except ConfigError as exc:
        return None, str(exc)


def repo_config(meta: store.RepoMeta | None) -> tuple[RepoConfig | None, str | None]:
    if meta is None:
        return None, "repo state lost, rebuilding"
    if not meta.config_loaded:
        return None, "repo config not loaded yet"
    return _parse_config(meta.config_text)


def target_url(rt: Runtime, repo: str, number: int) -> str:
    return f"{rt.settings.public_url}/{repo}/pull/{number}"


def publish(rt: Runtime, repo: str, number: int, now: datetime) -> str:
    """Recompute and publish one PR. Returns what happened (for logs and tests)."""
    state = store.load_pull(rt.redis, repo, number)
    meta = store.load_repo(rt.redis, repo)
    config, config_error = repo_config(meta)
    if not state.synced or state.facts is None:
        state = sync_pull(rt, state, config)
        if state.facts is None:
            return "unknown-pr"
    if not state.facts.open:
        _forget(rt, repo, number, state)
        return "closed"
    verdict = compute_verdict(
        state, config=config, config_error=config_error, now=now,
        scoped_holds=store.scoped_holds(rt.redis, repo), exemption=store.exemption(rt.redis, repo, number),
    )
    held_state = config.held_state if config else "failure"
    status = build_status(verdict, held_state=held_state, target_url=target_url(rt, repo, number))
    _write_record(rt, state, verdict, status, now, config.hold_label if config else None)
    groups.follow(rt, repo, number)  # merge groups checking this PR carry its verdict too
    if config is not None:
        _schedule_wakeup(rt, repo, number, verdict, config, now)
    return post_if_changed(rt, repo, number, verdict.head_sha, status)


def post_if_changed(rt: Runtime, repo: str, number: int, sha: str | None, status: dict[str, Any]) -> str:
    """Economy: no POST when this (sha, state, description, target) is already the posted status."""
    if not sha:
        return "no-head"
    wanted = json.dumps({"sha": sha, **status}, sort_keys=True)
    if rt.redis.get(keys.posted(repo, number)) == wanted.encode():
        return "unchanged"
    rt.github.post_status(repo, sha, status)
    rt.redis.set(keys.posted(repo, number), wanted)
    store.audit(rt.redis, repo, "status.posted", number=number, sha=sha, state=status["state"],
                description=status["description"])
    return "posted"


def _write_record(rt: Runtime, state: PullState, verdict: Verdict, status: dict[str, Any], now: datetime,
                  hold_label: str | None = None) -> None:
    repo, number = state.repo, state.number
    previous = store.load_verdict(rt.redis, repo, number)
    record = verdict_record(verdict, version=0, computed_at=now, status=status, hold_label=hold_label)
    comparable = {k: v for k, v in record.items() if k not in ("computed_at", "version")}
    if previous is not None and {k: v for k, v in previous.items()
                                 if k not in ("computed_at", "version")} == comparable:
        return
    record["version"] = int(rt.redis.incr(keys.verdict_version(repo, number)))
    facts = state.facts
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.verdict(repo, number), json.dumps(record, separators=(",", ":")))
        pipe.sadd(keys.open_prs(repo), number)
        if record["held"]:
            pipe.sadd(keys.held_prs(repo), number)
            pipe.hset(keys.held_heads(repo), str(number),
                      json.dumps({"base": record["base"], "head_sha": record["head_sha"],
                                  "description": record["description"]}, separators=(",", ":")))
        else:
            pipe.srem(keys.held_prs(repo), number)
            pipe.hdel(keys.held_heads(repo), str(number))
        if facts is not None:
            pipe.set(keys.head_index(repo, _head_key(state)), number)
        pipe.execute()
    if previous is None or previous.get("held") != record["held"]:
        store.audit(rt.redis, repo, "verdict.held" if record["held"] else "verdict.free", number=number,
                    holds=record["holds"], version=record["version"])


def _head_key(state: PullState) -> str:
    assert state.facts is not None
    if state.is_fork:
        return f"{state.facts.head_repo.split('/', 1)[0]}:{state.facts.head_ref}"
    return state.facts.head_ref


def _forget(rt: Runtime, repo: str, number: int, state: PullState) -> None:
    """A closed PR leaves the live indexes; its state stays a while as a tombstone, history forever."""
    with rt.redis.pipeline() as pipe:
        pipe.delete(keys.verdict(repo, number), keys.posted(repo, number))
        pipe.srem(keys.open_prs(repo), number)
        pipe.srem(keys.held_prs(repo), number)
        pipe.hdel(keys.held_heads(repo), str(number))
        pipe.hdel(keys.exemptions(repo), str(number))
        pipe.execute()
    if state.facts is not None:
        index = keys.head_index(repo, _head_key(state))
        if rt.redis.get(index) == str(number).encode():
            rt.redis.delete(index)


def _schedule_wakeup(rt: Runtime, repo: str, number: int, verdict: Verdict, config: RepoConfig,
                     now: datetime) -> None:
    """Timed holds, exemptions and freeze windows end on time: a recompute is scheduled for the
    next moment the verdict could change by the clock alone (rq's scheduler runs it)."""
    moments = [h.expires_at for h in verdict.holds if h.expires_at is not None and h.expires_at > now]
    exemption = store.exemption(rt.redis, repo, number)
    if exemption is not None and exemption.expires_at is not None and exemption.expires_at > now:
        moments.append(exemption.expires_at)
    turn = next_transition(config, now)
    if turn is not None:
        moments.append(turn)
    if not moments:
        return
    when = min(moments)
    job_id = "wake-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{repo}-{number}-{int(when.timestamp())}")
    if rt.redis.set(f"{keys.PREFIX}:wake:{job_id}", "1", nx=True, ex=int((when - now).total_seconds()) + 3600):
        rt.queue.enqueue_at(when, RECOMPUTE_JOB, repo, number, job_id=job_id, retry=RECOMPUTE_RETRY)
        log.info("scheduled %s#%s recompute at %s", repo, number, to_iso(when))
