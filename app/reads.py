"""Read-only views of the state the workers write, for the API and the dashboard.

Nothing here writes or judges: a verdict is whatever record the workers last stored. The one
interpretation made is hiding holds whose ``expires_at`` has passed, since the expiry job may lag.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from core import keys, verdict_format
from core.holds import record_hold_active
from state import verdicts
from state.decoding import as_text

REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
STREAM_ID = re.compile(r"\d{1,20}(-\d{1,20})?")
MAX_ID_PART = 2**64 - 1
"""Redis stream ids are two unsigned 64-bit numbers: a part beyond this is no id (Redis refuses it)."""


def stream_cursor(text: str) -> bool:
    """Whether ``text`` is a stream id a page may start before: both parts within 64 bits, and not
    ``0-0``, below which there is nothing (Redis refuses an exclusive range ending there)."""
    if not STREAM_ID.fullmatch(text):
        return False
    parts = [int(part) for part in text.split("-")]
    return all(part <= MAX_ID_PART for part in parts) and parts != [0, 0]
SCAN_CAP = 5000
"""Entries a filtered stream read may examine per request, so a filter cannot turn into a full scan."""

Entry = dict[str, Any]


def _json(raw: Any) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def valid_repo(repo: str) -> bool:
    return bool(REPO.fullmatch(repo)) and ".." not in repo


def verdict(r: Redis, repo: str, number: int) -> dict[str, Any] | None:
    return verdicts.load(r, repo, number)


def is_managed(r: Redis, repo: str) -> bool:
    return bool(r.exists(keys.managed(repo)))


def number_for_branch(r: Redis, repo: str, branch: str) -> int | None:
    raw = r.get(keys.head_index(repo, branch))
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def held_numbers(r: Redis, repo: str) -> list[int]:
    return verdicts.held_numbers(r, repo)


def held_heads(r: Redis, repo: str) -> dict[str, dict[str, Any]]:
    """Held PR number -> ``{"base", "head_sha", "description"}`` (`core.keys.held_heads`), for the hook's push rule."""
    heads: dict[str, dict[str, Any]] = {}
    for number, raw in r.hgetall(keys.held_heads(repo)).items():
        value = verdict_format.expand_held_head(_json(raw))
        if as_text(number).isdigit() and isinstance(value, dict):
            heads[as_text(number)] = value
    return heads


def managed_repos(r: Redis) -> list[str]:
    return sorted(as_text(m) for m in r.smembers(keys.MANAGED_REPOS))


def held_records(r: Redis, repo: str | None = None) -> list[tuple[str, int, dict[str, Any] | None]]:
    """(repo, number, verdict record or None) for every PR in a held set, by repo then number."""
    return verdicts.held_records(r, [repo.lower()] if repo else managed_repos(r))


def error_records(r: Redis, repos: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
    """(repo, number, record) of open PRs whose verdict is ``error``: not in a held set (the record's
    ``held`` is false), yet their status blocks and someone should look."""
    prs = []
    for name in repos:
        held = {as_text(n) for n in r.smembers(keys.held_prs(name))}
        prs += [(name, int(n)) for n in (as_text(m) for m in r.smembers(keys.open_prs(name)))
                if n.isdigit() and n not in held]
    prs.sort()
    pipe = r.pipeline(transaction=False)
    for name, number in prs:
        pipe.get(keys.verdict(name, number))
    found = []
    for (name, number), raw in zip(prs, pipe.execute(), strict=True):
        record = verdicts.parse(raw, name, number)
        if record is not None and record.get("error"):
            found.append((name, number, record))
    return found


def hold_active(hold: dict[str, Any], now: datetime) -> bool:
    return record_hold_active(hold, now)  # the one expiry rule (an unreadable expiry still holds)


def active_holds(r: Redis, now: datetime, repo: str | None = None) -> list[dict[str, Any]]:
    """Every active hold on a held PR, flattened with its repo and number."""
    rows: list[dict[str, Any]] = []
    for name, number, record in held_records(r, repo):
        for hold in (record or {}).get("holds") or []:
            if isinstance(hold, dict) and hold_active(hold, now):
                rows.append({
                    "repo": record.get("repo", name) if record else name,
                    "number": number,
                    "id": hold.get("id"),
                    "holder": hold.get("holder"),
                    "reason": hold.get("reason"),
                    "source": hold.get("source"),
                    "scope": hold.get("scope"),
                    "origin": hold.get("origin"),
                    "created_at": hold.get("created_at"),
                    "expires_at": hold.get("expires_at"),
                })
    return rows


# -- audit streams ------------------------------------------------------------------------------------


def _id_key(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


def _entry(stream: str, raw_id: Any, fields: dict[Any, Any]) -> Entry:
    stream_id = as_text(raw_id)
    decoded = {as_text(k): as_text(v) for k, v in fields.items()}
    data_text = decoded.get("data")
    data = _json(data_text) if data_text is not None else None
    # The id is the time Redis appended the entry; it is what the cursor and the order rest on.
    entry: Entry = {
        "id": stream_id,
        "stream": stream,
        "at": datetime.fromtimestamp(_id_key(stream_id)[0] / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "event": decoded.get("event"),
        "data": data if data is not None else data_text,
    }
    if "by" in decoded:
        entry["by"] = decoded["by"]
    return entry


def _scan(
    r: Redis, key: str, stream: str, before: str | None, limit: int, keep: Callable[[Entry], bool] | None
) -> tuple[list[Entry], str | None]:
    """Up to ``limit`` kept entries older than ``before``, newest first, and the floor id if the scan
    stopped at `SCAN_CAP` before the stream ran out (entries below it were not examined)."""
    found: list[Entry] = []
    cursor, scanned = before, 0
    while len(found) < limit:
        want = limit if keep is None else min(max(limit * 4, 100), SCAN_CAP - scanned)
        if want <= 0:
            return found, cursor
        batch: list[Any] = r.xrevrange(key, max=f"({cursor}" if cursor else "+", min="-", count=want) or []
        for raw_id, fields in batch:
            entry = _entry(stream, raw_id, fields)
            if keep is None or keep(entry):
                found.append(entry)
        scanned += len(batch)
        if len(batch) < want:
            break
        cursor = as_text(batch[-1][0])
    return found[:limit], None


def _about_repo(repo: str) -> Callable[[Entry], bool]:
    wanted = repo.lower()

    def keep(entry: Entry) -> bool:
        data = entry["data"]
        return isinstance(data, dict) and str(data.get("repo", "")).lower() == wanted

    return keep


def events(
    r: Redis, *, repo: str | None, limit: int, before: str | None
) -> tuple[list[Entry], str | None]:
    """Audit events newest first (the repo's history or the global audit stream, with hook records),
    and the cursor for the next page (None at the end)."""
    sources: list[tuple[str, str, Callable[[Entry], bool] | None]] = (
        [(keys.history(repo), "history", None), (keys.HOOK_EVENTS, "hook", _about_repo(repo))]
        if repo
        else [(keys.AUDIT, "audit", None), (keys.HOOK_EVENTS, "hook", None)]
    )
    merged: list[Entry] = []
    floors: list[str] = []
    for key, stream, keep in sources:
        found, floor = _scan(r, key, stream, before, limit, keep)
        merged += found
        if floor:
            floors.append(floor)
    floor = max(floors, key=_id_key) if floors else None
    if floor:
        # A stream not examined below `floor` must not be skipped by the next page's cursor.
        merged = [e for e in merged if _id_key(e["id"]) >= _id_key(floor)]
    merged.sort(key=lambda e: _id_key(e["id"]), reverse=True)
    page = merged[:limit]
    if len(page) == limit:
        return page, page[-1]["id"]
    return page, floor


def pr_history(r: Redis, repo: str, number: int, limit: int = 100) -> list[Entry]:
    """The repo's history entries about one PR (their data names it as ``number`` or ``pr``)."""

    def keep(entry: Entry) -> bool:
        data = entry["data"]
        return isinstance(data, dict) and str(number) in (str(data.get("number")), str(data.get("pr")))

    return _scan(r, keys.history(repo), "history", None, limit, keep)[0]


PULL_URL = re.compile(r"/pull/(\d+)$")


def dry_run_statuses(r: Redis, limit: int = 200) -> list[dict[str, Any]]:
    """Recorded statuses, newest first; ``number`` is recovered from the PR page in ``target_url``."""
    out: list[dict[str, Any]] = []
    for raw in r.lrange(keys.DRY_RUN_STATUSES, 0, limit - 1):
        item = _json(raw)
        if not isinstance(item, dict):
            out.append({"raw": as_text(raw)})
            continue
        found = PULL_URL.search(str(item.get("target_url") or ""))
        if "number" not in item and found:
            item["number"] = int(found.group(1))
        out.append(item)
    return out


def bootstrap_lines(redis: Redis, rate_per_minute: float, hourly: int, visible: Callable[[str], bool],
                    now: datetime) -> list[tuple[int, str]]:
    """Each installation's bootstrap still under way that adopts a repo the viewer may see: its id and
    ``N of M open PRs have a status; ... the rest in about ...`` (`core.bootstrap.line`)."""
    from core.bootstrap import line, writes_per_hour
    from state import bootstrap

    found = []
    for inst in bootstrap.installations(redis):
        repos = [as_text(r) for r in redis.smembers(keys.bootstrap_repos(inst))]
        progress = bootstrap.progress(redis, inst)
        if progress is None or progress.done or not any(visible(r) for r in repos):
            continue
        found.append((inst, line(progress, writes_per_hour(rate_per_minute, hourly), now)))
    return found
