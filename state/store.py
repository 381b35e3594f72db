"""The hold state in Redis: PR states, repo metadata, exemptions, verdict records (the audit log is
`state.audit`).

Writers update a PR's state with an optimistic transaction (WATCH/MULTI) around a pure `core.prstate`
function, so concurrent workers never lose each other's updates; the registers inside make the result
independent of the order in which they win.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from redis import Redis, WatchError
from redis.client import Pipeline

from core import keys, state_format, verdict_format
from core.holds import Exemption
from core.prstate import PullState
from state import verdicts
from state.recompute_requests import RecomputeRequest

log = logging.getLogger(__name__)

CLOSED_STATE_TTL = 30 * 24 * 3600
"""A closed PR's state is kept a month as a tombstone, so a late event cannot resurrect it as open."""


@dataclass(frozen=True)
class RepoMeta:
    installation_id: int
    default_branch: str = "main"
    config_text: str | None = None
    """The raw `.github/merge-hold.yml` of the default branch; `None` when the repo has none (defaults)."""
    config_loaded: bool = False
    """False until the file was read from GitHub once: the verdict is `error` until then, never free."""
    private: bool = False


def _decode(raw: bytes | str | None, repo: str, number: int) -> tuple[PullState, int | None]:
    """The stored state (`core.state_format`) and its version; None for a state of an earlier release's
    format, whose version is the legacy counter key. An unknown format raises (never read as empty)."""
    if raw is None:
        return PullState(repo=repo, number=number), 0
    data, version = state_format.decode_state(raw, repo, number)
    return PullState.from_dict(data), version


def load_pull(redis: Redis, repo: str, number: int) -> PullState:
    return _decode(redis.get(keys.pr_state(repo, number)), repo, number)[0]


def load_pull_versioned(redis: Redis, repo: str, number: int) -> tuple[PullState, int]:
    """The PR's state and its state version, read in one MULTI (a consistent pair)."""
    with redis.pipeline() as pipe:
        pipe.get(keys.pr_state(repo, number))
        pipe.get(keys.legacy_state_version(repo, number))
        raw, legacy = pipe.execute()
    state, version = _decode(raw, repo, number)
    return state, int(legacy or 0) if version is None else version


def state_version(redis: Redis, repo: str, number: int) -> int:
    return load_pull_versioned(redis, repo, number)[1]


T = TypeVar("T")


def update_pull(
    redis: Redis, repo: str, number: int, change: Callable[[PullState], PullState], *,
    request: RecomputeRequest | None = None,
) -> tuple[PullState, bool]:
    """Apply a pure change atomically; returns the new state and whether anything changed. ``change`` is a
    function of `core` with its data (``functools.partial``), never the caller's own: this module calls it,
    and `state/` calls nothing above it (tests/test_state_write_rules.py).

    The state (carrying its version, `core.state_format`) and ``request`` (the PR's recompute) are one EXEC: a
    worker killed at any point leaves either all of them or none."""
    _before, after, _found, changed = update_pull_with(redis, repo, number, lambda state: (change(state), None),
                                                       request=request)
    return after, changed


def update_pull_with(
    redis: Redis, repo: str, number: int, rule: Callable[[PullState], tuple[PullState, T]], *,
    request: RecomputeRequest | None = None,
) -> tuple[PullState, PullState, T, bool]:
    """`update_pull` for a rule of `core` that also says what it found (a comment's outcomes): returns the
    state before, the state after, what the winning run of ``rule`` found, and whether anything changed."""
    key, legacy = keys.pr_state(repo, number), keys.legacy_state_version(repo, number)
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(key, legacy)  # type: ignore[no-untyped-call]
                before, version = _decode(pipe.get(key), repo, number)
                if version is None:  # an earlier release's state: its version was a key of its own
                    version = int(pipe.get(legacy) or 0)
                after, found = rule(before)
                if after == before:
                    pipe.unwatch()
                    return before, before, found, False
                if request is not None:
                    request.watch(pipe)
                pipe.multi()
                ttl = None if after.facts is None or after.facts.open else CLOSED_STATE_TTL
                # The version lives in the record: one key per PR state, not two (design §7 footprint).
                pipe.set(key, state_format.encode_state(after.to_dict(), version + 1), ex=ttl)
                pipe.delete(legacy)
                if request is not None:
                    request.add(pipe)
                pipe.execute()
                return before, after, found, True
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
                        keys.verdict_version(repo, number), keys.legacy_state_version(repo, number))
        pipe.delete(keys.repo_meta(repo), keys.managed(repo), keys.open_prs(repo), keys.held_prs(repo),
                    keys.held_heads(repo), keys.branch_freezes(repo))
        pipe.srem(keys.MANAGED_REPOS, repo.lower())
        if installation_id is not None:
            pipe.srem(keys.installation_repos(installation_id), repo.lower())
        pipe.execute()
    return numbers


def open_numbers(redis: Redis, repo: str) -> list[int]:
    return sorted(int(n) for n in redis.smembers(keys.open_prs(repo)))


def exemption(redis: Redis, repo: str, number: int) -> Exemption | None:
    raw = redis.hget(keys.exemptions(repo), str(number))
    return Exemption.from_dict(json.loads(raw)) if raw else None


def load_verdict(redis: Redis, repo: str, number: int) -> dict[str, Any] | None:
    return verdicts.load(redis, repo, number)  # the one reader


def next_verdict_version(redis: Redis, repo: str, number: int, previous: dict[str, Any] | None) -> int:
    """The ``version`` of the PR's next verdict (under its lock): one more than its record's, or, with no
    record, than the version its closed self left behind (`core.keys.verdict_version`), so a reopened
    PR's versions keep increasing."""
    if previous is not None:
        return int(previous.get("version") or 0) + 1
    return int(redis.get(keys.verdict_version(repo, number)) or 0) + 1


def put_verdict(pipe: Pipeline, repo: str, number: int, record: dict[str, Any]) -> None:
    """Write a verdict record (API shape) in ``pipe``: stored compact, carrying its version."""
    pipe.set(keys.verdict(repo, number), verdict_format.encode_verdict(record))
    pipe.delete(keys.verdict_version(repo, number))  # a closed PR's (or an earlier release's) counter


def drop_verdict(pipe: Pipeline, repo: str, number: int, previous: dict[str, Any] | None) -> None:
    """Delete a closed PR's verdict in ``pipe``, keeping its version as long as its state tombstone."""
    pipe.delete(keys.verdict(repo, number))
    if previous is not None:
        pipe.set(keys.verdict_version(repo, number), int(previous.get("version") or 0), ex=CLOSED_STATE_TTL)
