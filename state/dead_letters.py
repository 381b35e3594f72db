"""Intake entries no worker could use, set aside with their reason: the intake's dead-letter list.

The pump (`workers.intake.pump`) moves an entry here — in the same MULTI/EXEC that queues the batch's
other deliveries and empties its taken list — when the entry is no delivery, is not JSON, nests deeper
than `core.json_text.MAX_DEPTH`, has fields of the wrong type, or cannot be made into a job. So one
delivery can never stop the intake: it is counted (`merge_hold_intake_dead_letters_total` in
`/metrics`), shown by `merge-hold doctor`, and the pump goes on with the next. The record keeps the
entry itself, up to `KEEP_BYTES`, for whoever looks into it; GitHub's "Recent Deliveries" can send a
fixed delivery again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from redis import Redis
from redis.client import Pipeline

from core import keys
from core.deliveries import headers

KEEP = 1_000
"""Records kept, newest first: enough to see a storm's shape; older ones are trimmed (the count stays)."""
KEEP_BYTES = 64 * 1024
"""Of each entry, what is kept (a GitHub payload is rarely above 30 KB): a storm of 25 MB bodies costs
Redis at most `KEEP` times this."""
REASON_CHARS = 300


@dataclass(frozen=True)
class DeadLetter:
    reason: str
    entry: bytes
    at: str
    """ISO 8601, UTC: when the pump set it aside."""

    def to_json(self) -> str:
        event, delivery_id = headers(self.entry)
        return json.dumps({
            "at": self.at, "reason": self.reason[:REASON_CHARS],
            "event": event[:100].decode("utf-8", "replace"),
            "delivery_id": delivery_id[:128].decode("utf-8", "replace"),
            "bytes": len(self.entry), "truncated": len(self.entry) > KEEP_BYTES,
            # The entry as text: undecodable bytes survive as surrogates (`surrogateescape`), so the
            # bytes can be had back with `.encode("utf-8", "surrogateescape")`.
            "entry": self.entry[:KEEP_BYTES].decode("utf-8", "surrogateescape"),
        })


def set_aside(pipe: Pipeline, queue: str, letters: list[DeadLetter]) -> None:
    """Add the records to ``pipe`` (the caller's MULTI): pushed newest first, trimmed, counted."""
    if not letters:
        return
    pipe.lpush(keys.intake_dead(queue), *(letter.to_json() for letter in letters))
    pipe.ltrim(keys.intake_dead(queue), 0, KEEP - 1)
    pipe.incrby(keys.intake_dead_total(queue), len(letters))


def total(redis: Redis, queue: str) -> int:
    """Entries ever set aside (the records may have been trimmed or deleted since)."""
    raw = redis.get(keys.intake_dead_total(queue))
    return int(raw) if raw is not None else 0


def waiting(redis: Redis, queue: str) -> int:
    """How many records wait in the list."""
    return int(redis.llen(keys.intake_dead(queue)))


def newest(redis: Redis, queue: str, count: int = 1) -> tuple[int, list[dict[str, Any]]]:
    """How many records wait in the list, and the newest ``count`` (at least one) of them."""
    with redis.pipeline(transaction=False) as pipe:
        pipe.llen(keys.intake_dead(queue))
        pipe.lrange(keys.intake_dead(queue), 0, max(count, 1) - 1)
        waiting, raws = pipe.execute()
    return int(waiting), [json.loads(raw) for raw in raws]
