"""Redis footprint per tracked PR against design §7's budget (≤ 2 KB), measured with MEMORY USAGE per key.

1,000 open PRs of one repo each get the events a busy PR sees — opened, `/hold` by alice, by bob and
by carol, then carol's `/unhold` (a second apart, as people type) — applied by the real job
(`workers.events.dispatch.handle_delivery`) and published by a real rq worker in dry-run mode. So each PR ends
held by two holders, with one lifted register in its state: a couple of holds, not an empty PR. Then
every key is sized with ``MEMORY USAGE``:

- per-PR keys (state, verdict, posted status, head-branch index entry), summed and divided by the PR
  count;
- the repo's indexes that grow by one entry per PR (``open`` and ``held`` sets, the ``held-heads``
  hash the hook's push rule reads), divided by the PR count;
- the budgeted row is the sum of both: the durable bytes a tracked PR costs;
- the repo's history stream, the transient keys (delivery markers, rq's job keys) and ``used_memory``
  before/after are reported in the note.

Redis: a throwaway redis-server (this bench flushes its database).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.timing import Row

PRS = int(os.environ.get("BENCH_FOOTPRINT_PRS", "1000"))
BUDGET_BYTES = 2048.0
REPO = "footprint/widgets"
COMMENTS = (("alice", "/hold waiting for the DB migration"), ("bob", "/hold security review pending"),
            ("carol", "/hold"), ("carol", "/unhold"))
INDEXES = ("open", "held", "held-heads")
"""Repo keys with one entry per open (or held) PR: their bytes are the PRs', shared out."""


def _kind(key: str) -> str:
    if ":pr:" in key:
        return "pr:" + key.rsplit(":", 1)[1]
    if ":head:" in key:
        return "pr:head"  # the head-branch index: one key per open PR
    if key.startswith("rq:"):
        return "rq"
    if key.startswith("mh:delivery:") or ":audited:" in key or ":answered:" in key:  # expiring markers
        return "markers"
    return key.rsplit(":", 1)[1] if key.startswith("mh:{") else key


def run() -> list[Row]:
    from redis import Redis

    from foundation.settings import Settings
    from merge_hold import samples
    from merge_hold.redis_server import LocalRedis
    from workers import runtime
    from workers.events.dispatch import handle_delivery
    from workers.ops.tenants import burst

    with tempfile.TemporaryDirectory() as tmp:
        server = LocalRedis(Path(tmp) / "redis").start()
        try:
            client = Redis.from_url(server.url)
            rt = runtime.install(runtime.build(Settings(
                redis_url=server.url, dry_run=True,
                write_rate_per_minute=600_000.0,  # measures bytes, not the pace of dry-run writes
            ), redis=client))
            baseline = int(client.info("memory")["used_memory"])
            start = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
            started = time.monotonic()
            comment_id = 10_000
            for number in range(1, PRS + 1):
                at = start + timedelta(seconds=number)
                events = [("pull_request", samples.pull_request_event(REPO, number, at=at))]
                for who, body in COMMENTS:
                    comment_id += 1
                    at += timedelta(seconds=1)  # in one second, a hold beats a lift (ties fail closed)
                    events.append(("issue_comment", samples.issue_comment_event(
                        REPO, number, body=body, commenter=who, at=at, comment_id=comment_id)))
                for event, payload in events:
                    delivery = samples.delivery(event, payload)
                    handle_delivery(event, delivery.delivery_id, delivery.body)
            burst(rt.queue, with_scheduler=False,
                                                             logging_level="WARNING")
            elapsed = time.monotonic() - started
            sizes: dict[str, int] = defaultdict(int)
            counts: dict[str, int] = defaultdict(int)
            for raw in client.scan_iter(count=1000):
                key = raw.decode()
                kind = _kind(key)
                sizes[kind] += int(client.memory_usage(key) or 0)
                counts[kind] += 1
            used = int(client.info("memory")["used_memory"]) - baseline
            client.close()
        finally:
            server.stop()
    per_pr = {k: v for k, v in sizes.items() if k.startswith("pr:")}
    indexes = sum(sizes.get(k, 0) for k in INDEXES) / PRS
    keys_only = sum(per_pr.values()) / PRS
    detail = ", ".join(f"{k.removeprefix('pr:')} {v / PRS:.0f}" for k, v in sorted(per_pr.items()))
    shared = ", ".join(f"{k} {sizes.get(k, 0) / PRS:.0f}" for k in INDEXES)
    history = sizes.get("history", 0) / PRS
    others = ", ".join(f"{k} {v / 1024:.0f} KB in {counts[k]} keys" for k, v in sorted(sizes.items())
                       if not k.startswith("pr:") and k != "history" and k not in INDEXES)
    print(f"  footprint: {PRS} PRs in {elapsed:.1f} s; {others}", file=sys.stderr)
    return [
        ("Redis bytes per tracked PR (durable)", keys_only + indexes, BUDGET_BYTES,
         f"{PRS} held PRs, {1 + len(COMMENTS)} events each (2 holders left); per-PR keys {keys_only:.0f} "
         f"({detail}) + repo indexes {indexes:.0f} ({shared}); + history {history:.0f} B/PR (repo stream, "
         f"capped); used_memory +{used / PRS:.0f} B/PR in all"),
    ]
