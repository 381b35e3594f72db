"""The tamper watch's readings in Redis: per repo, each managed branch's last gate reading and whether
the App is suspended there (`core.keys.GATES`). The banners, doctor and `/metrics` read them.

A repo's record: ``{"repo": "Acme/Widgets", "branches": {"main": reading}, "suspended": null | {…}}``,
a reading being `core.gate.GateReading.as_dict` plus ``since`` (when its state began), ``checked_at``,
``actor`` (who changed it, from the event) and ``episode`` (the id its answers on held PRs are keyed by).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from redis import Redis

from core import keys
from core.tamper import SUSPENDED, banner, unenforced
from state.decoding import as_text


def _parse(raw: Any, repo: str) -> dict[str, Any]:
    try:
        found = json.loads(raw) if raw is not None else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        found = {}
    branches = found.get("branches")
    return {"repo": str(found.get("repo") or repo), "branches": branches if isinstance(branches, dict) else {},
            "suspended": found.get("suspended") if isinstance(found.get("suspended"), dict) else None}


def load(redis: Redis, repo: str) -> dict[str, Any]:
    return _parse(redis.hget(keys.GATES, repo.lower()), repo)


def save(redis: Redis, repo: str, record: dict[str, Any]) -> None:
    """Write the repo's record (call under `core.keys.gate_lock`, so two watches never interleave)."""
    redis.hset(keys.GATES, repo.lower(), json.dumps(record, separators=(",", ":"), default=str))


def forget(redis: Redis, repo: str) -> None:
    """The App left the repo (uninstalled, or the repo deselected): merge-hold manages nothing there, so
    it has no banner to show (a suspension is kept: the App is still installed)."""
    redis.hdel(keys.GATES, repo.lower())


def bump(redis: Redis, kind: str) -> None:
    redis.hincrby(keys.TAMPER_COUNTS, kind, 1)


def counts(redis: Redis) -> dict[str, int]:
    return {as_text(k): int(v) for k, v in redis.hgetall(keys.TAMPER_COUNTS).items()}


def findings(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's readings that put up a banner, each with its banner line (suspension first)."""
    repo = str(record.get("repo") or "")
    found: list[dict[str, Any]] = []
    suspended = record.get("suspended")
    if isinstance(suspended, dict):
        found.append({**suspended, "state": SUSPENDED, "repo": repo,
                      "banner": banner(repo, {**suspended, "state": SUSPENDED})})
    for branch, reading in sorted((record.get("branches") or {}).items()):
        if isinstance(reading, dict) and unenforced(reading):
            shown = {**reading, "branch": branch, "repo": repo}
            found.append({**shown, "banner": banner(repo, shown)})
    return found


def active(redis: Redis, visible: Callable[[str], bool], repo: str | None = None) -> list[dict[str, Any]]:
    """Every banner of the repos ``visible`` lets the reader see (only ``repo``'s when given), by repo."""
    if repo is not None:
        raws = {repo.lower(): redis.hget(keys.GATES, repo.lower())}
    else:
        raws = {as_text(k): v for k, v in redis.hgetall(keys.GATES).items()}
    found: list[dict[str, Any]] = []
    for name in sorted(raws):
        if raws[name] is None or not visible(name):
            continue
        found += findings(_parse(raws[name], name))
    return found
