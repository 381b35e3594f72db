"""The files a PR's head changes, for path-scoped holds: read once per head, kept by head SHA.

Read only when a hold or freeze window that reaches the PR carries ``paths`` (`core.verdict.wants_files`),
through the gateway like every read of the recompute (PyGithub's retries, `retry-after` honoured), and
never while GitHub has told the installation to stop (its pacer is paused; a rate-limit answer pauses it):
``GET /repos/{o}/{r}/pulls/{n}/files``, 100 a page. What it gives the verdict (`core.paths.ChangedFiles`):

- the paths, a rename under both names — kept until the head moves (a push re-reads);
- unknown, when GitHub lists `GITHUB_FILE_LIMIT` files (it lists no more, so the PR may change others
  it does not show): kept for that head, which cannot change its files;
- unknown, when the list could not be read (GitHub down, refused, rate limited): kept a short while,
  and the caller is told when to try again (a recompute is scheduled then, backing off), so a freeze
  over thousands of PRs never turns a GitHub outage into a stream of reads.

Unknown holds the PR (never success on doubt); the status says why.
"""

from __future__ import annotations

import json
import logging
import zlib
from datetime import datetime, timedelta
from typing import Any

from rq.timeouts import BaseTimeoutException

from core import keys
from core.holds import from_iso, to_iso
from core.paths import GITHUB_FILE_LIMIT, ChangedFiles, from_listing
from workers.publishing.outbox import bucket_of
from workers.publishing.pacing import Pacer, rate_limit_wait
from workers.runtime import Runtime

log = logging.getLogger(__name__)

CACHE_SECONDS = 8 * 24 * 3600
"""A head's files are kept this long (a PR idle longer is read again, once)."""
RETRY_SECONDS = (60, 300, 1800)
"""Pauses before reading an unreadable list again: a minute, five, then every half hour."""
TOO_MANY = f"it changes more files than GitHub lists ({GITHUB_FILE_LIMIT:,})"
UNREADABLE = "its changed files could not be read"


def _load(raw: bytes | str | None) -> dict[str, Any] | None:
    if not isinstance(raw, bytes) or not raw:
        return None
    try:
        data = json.loads(zlib.decompress(raw))
    except (zlib.error, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _save(rt: Runtime, repo: str, number: int, data: dict[str, Any]) -> None:
    rt.redis.set(keys.changed_files(repo, number), zlib.compress(json.dumps(data, separators=(",", ":")).encode()),
                 ex=CACHE_SECONDS)


def read(rt: Runtime, repo: str, number: int, head_sha: str, now: datetime) -> tuple[ChangedFiles, datetime | None]:
    """The files ``head_sha`` changes, and when to read again if they are unknown for now (else None)."""
    cached = _load(rt.redis.get(keys.changed_files(repo, number)))
    tries = 0
    if cached is not None and cached.get("sha") == head_sha:
        if isinstance(cached.get("files"), list):
            return ChangedFiles(tuple(str(f) for f in cached["files"])), None
        if cached.get("why") == TOO_MANY:
            return ChangedFiles.unknown(TOO_MANY), None
        retry = from_iso(cached.get("retry"))
        if retry is not None and retry > now:
            return ChangedFiles.unknown(UNREADABLE), retry
        tries = int(cached.get("tries") or 0)
    pacer = Pacer.of(rt.redis, rt.settings, bucket_of(rt.redis, repo))
    paused = pacer.paused_for()
    if paused > 0:  # GitHub told this installation to stop: no read now, one when the pause ends
        return ChangedFiles.unknown(UNREADABLE), now + timedelta(seconds=paused)
    try:
        entries = rt.github.pull_files(repo, number, GITHUB_FILE_LIMIT)
    except BaseTimeoutException:
        raise  # the job's own timeout: rq handles it
    except Exception as exc:  # whatever the reason, the answer is "unknown", and unknown holds
        retry = now + timedelta(seconds=RETRY_SECONDS[min(tries, len(RETRY_SECONDS) - 1)])
        limited = rate_limit_wait(exc)
        if limited is not None:  # a rate limit: the whole installation waits, as its writers do
            retry = max(retry, now + timedelta(seconds=pacer.pause(limited)))
        log.warning("could not list the files of %s#%s at %s (%s): its path-scoped holds hold it; next try at %s",
                    repo, number, head_sha[:7], type(exc).__name__, to_iso(retry))
        _save(rt, repo, number, {"sha": head_sha, "files": None, "why": UNREADABLE, "tries": tries + 1,
                                 "retry": to_iso(retry)})
        return ChangedFiles.unknown(UNREADABLE), retry
    if len(entries) >= GITHUB_FILE_LIMIT:
        _save(rt, repo, number, {"sha": head_sha, "files": None, "why": TOO_MANY})
        return ChangedFiles.unknown(TOO_MANY), None
    files = from_listing(entries)
    _save(rt, repo, number, {"sha": head_sha, "files": list(files)})
    return ChangedFiles(files), None
