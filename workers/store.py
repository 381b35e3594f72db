"""The hold state in Redis: PR states, repo metadata, room holds, verdict records, the audit log.

Writers update a PR's state with an optimistic transaction (WATCH/MULTI) around a pure `core.prstate`
function, so concurrent workers never lose each other's updates; the registers inside make the result
independent of the order in which they win.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from redis import Redis, WatchError
from redis.client import Pipeline

from core import keys
from core.holds import Exemption, Hold
from core.prstate import PullState
from merge_hold import verdicts
from workers import subscriptions

log = logging.getLogger(__name__)

CLOSED_STATE_TTL = 30 * 24 * 3600
"""A closed PR's state is kept a month as a tombstone, so a late event cannot resurrect it as open."""
HISTORY_MAXLEN = 2_000
"""Audit events kept per repo (about 300 B each, ~600 KB a repo at most): the dashboard's recent history.
Older events are trimmed from Redis (design §7: ≤ 2 KB per tracked PR); every event is also written to
the process log (logger ``workers.store``, INFO), which is where long-term history lives."""
AUDIT_MAXLEN = 20_000
"""Audit events kept across all repos (the API's ``/api/v1/events``); older ones live in the log only."""


@dataclass(frozen=True)
class RepoMeta:
    installation_id: int
    default_branch: str = "main"
    config_text: str | None = None
    """The raw `.github/merge-hold.yml` of the default branch; `None` when the repo has none (defaults)."""
    config_loaded: bool = False
    """False until the file was read from GitHub once: the verdict is `error` until then, never free."""
    private: bool = False


def load_pull(redis: Redis, repo: str, number: int) -> PullState:
    raw = redis.get(keys.pr_state(repo, number))
    if raw is None:
        return PullState(repo=repo, number=number)
    return PullState.from_dict(json.loads(raw))


def load_pull_versioned(redis: Redis, repo: str, number: int) -> tuple[PullState, int]:
    """The PR's state and its state version, read in one MULTI (a consistent pair)."""
    with redis.pipeline() as pipe:
        pipe.get(keys.pr_state(repo, number))
        pipe.get(keys.state_version(repo, number))
        raw, version = pipe.execute()
    state = PullState.from_dict(json.loads(raw)) if raw else PullState(repo=repo, number=number)
    return state, int(version or 0)


def state_version(redis: Redis, repo: str, number: int) -> int:
    return int(redis.get(keys.state_version(repo, number)) or 0)


class InTransaction(Protocol):
    """Something written with a state change, in its EXEC (`workers.funnel.RecomputeRequest`)."""

    def watch(self, pipe: Pipeline) -> None: ...
    def add(self, pipe: Pipeline) -> bool: ...


def update_pull(
    redis: Redis, repo: str, number: int, change: Callable[[PullState], PullState], *,
    request: InTransaction | None = None,
) -> tuple[PullState, bool]:
    """Apply a pure change atomically; returns the new state and whether anything changed.

    The state, its version counter and ``request`` (the PR's recompute) are one EXEC: a worker killed
    at any point leaves either all of them or none."""
    key = keys.pr_state(repo, number)
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(key)  # type: ignore[no-untyped-call]
                raw = pipe.get(key)
                before = PullState.from_dict(json.loads(raw)) if raw else PullState(repo=repo, number=number)
                after = change(before)
                if after == before:
                    pipe.unwatch()
                    return before, False
                if request is not None:
                    request.watch(pipe)
                pipe.multi()
                ttl = None if after.facts is None or after.facts.open else CLOSED_STATE_TTL
                pipe.set(key, json.dumps(after.to_dict(), separators=(",", ":")), ex=ttl)
                pipe.incr(keys.state_version(repo, number))
                if ttl is not None:
                    pipe.expire(keys.state_version(repo, number), ttl)
                if request is not None:
                    request.add(pipe)
                pipe.execute()
                return after, True
            except WatchError:
                continue


def load_repo(redis: Redis, repo: str) -> RepoMeta | None:
    raw = redis.get(keys.repo_meta(repo))
    return RepoMeta(**json.loads(raw)) if raw else None


def save_repo(redis: Redis, repo: str, meta: RepoMeta) -> None:
    with redis.pipeline() as pipe:
        pipe.set(keys.repo_meta(repo), json.dumps(asdict(meta)))
        pipe.set(keys.managed(repo), "1")
        pipe.sadd(keys.MANAGED_REPOS, repo.lower())
        pipe.sadd(keys.installation_repos(meta.installation_id), repo.lower())
        pipe.execute()


def drop_repo(redis: Redis, repo: str, installation_id: int | None) -> list[int]:
    """The App left the repo: forget its live state (history stays). Returns the PRs that were open."""
    numbers = sorted(int(n) for n in redis.smembers(keys.open_prs(repo)))
    with redis.pipeline() as pipe:
        for number in numbers:
            pipe.delete(keys.pr_state(repo, number), keys.verdict(repo, number), keys.posted(repo, number),
                        keys.state_version(repo, number))
        pipe.delete(keys.repo_meta(repo), keys.managed(repo), keys.open_prs(repo), keys.held_prs(repo),
                    keys.held_heads(repo))
        pipe.srem(keys.MANAGED_REPOS, repo.lower())
        if installation_id is not None:
            pipe.srem(keys.installation_repos(installation_id), repo.lower())
        pipe.execute()
    return numbers


def open_numbers(redis: Redis, repo: str) -> list[int]:
    return sorted(int(n) for n in redis.smembers(keys.open_prs(repo)))


def scoped_holds(redis: Redis, repo: str) -> list[Hold]:
    """Room and freeze holds on the repo (any scope within it) and on its org."""
    owner = repo.split("/", 1)[0]
    with redis.pipeline(transaction=False) as pipe:
        pipe.hvals(keys.room_holds(repo))
        pipe.hvals(keys.org_room_holds(owner))
        repo_vals, org_vals = pipe.execute()
    return [Hold.from_dict(json.loads(v)) for v in (*repo_vals, *org_vals)]


def exemption(redis: Redis, repo: str, number: int) -> Exemption | None:
    raw = redis.hget(keys.exemptions(repo), str(number))
    return Exemption.from_dict(json.loads(raw)) if raw else None


def load_verdict(redis: Redis, repo: str, number: int) -> dict[str, Any] | None:
    return verdicts.load(redis, repo, number)  # the one reader


def audit(redis: Redis, repo: str | None, event: str, **data: Any) -> None:
    """Append an audit event to the repo's history and the global log (what the dashboard shows)."""
    fields: dict[Any, Any] = {"event": event, "data": json.dumps({"repo": repo, **data}, default=str),
              "at": datetime.now(UTC).isoformat(timespec="seconds")}
    log.info("audit %s %s", event, fields["data"])
    with redis.pipeline(transaction=False) as pipe:
        if repo:
            pipe.xadd(keys.history(repo), fields, maxlen=HISTORY_MAXLEN, approximate=True)
        pipe.xadd(keys.AUDIT, fields, maxlen=AUDIT_MAXLEN, approximate=True)
        pipe.execute()
    subscriptions.note(redis, event, {"repo": repo, **data})  # chat news: only appends to an outbox
