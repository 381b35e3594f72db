"""Record a PR's verdict and write its status at once, in one call: for tests that want the status on the
emulator without a drain (the workers record, then write at once or through the outbox:
`workers.publishing.recompute`)."""

from __future__ import annotations

from datetime import datetime

from redis.lock import Lock

from workers.publishing.recompute import record
from workers.publishing.write import Fenced, write_locked
from workers.runtime import Runtime


def publish(rt: Runtime, repo: str, number: int, now: datetime, lock: Lock | None = None) -> str:
    """Record and write at once with ``rt.github``; the caller holds ``lock``, the PR's lock, if any.
    Returns "posted" or why nothing was posted."""
    outcome = record(rt, repo, number, now)
    if outcome != "pending":
        return outcome
    try:
        return write_locked(rt, repo, number, lock)
    except Fenced:
        return "fenced"
