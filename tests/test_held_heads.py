"""What the server publishes for the hook's lift and push rules: each held PR's base and head SHA in one
hash per repo (`core.keys.held_heads`, read in one ``HGETALL``), and the repo's hold label in the verdict
record. Real Redis, the real publish path (dry-run GitHub)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

from redis import Redis

from core import keys, verdict_format
from state import store
from tests.chat_support import dry_runtime, manage
from tests.publish_now import publish
from workers.chat.rooms import lift_holds, place_hold

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
REPO = "acme/widgets"


def heads(redis: Redis) -> dict[str, dict[str, str]]:
    raw: dict[bytes, bytes] = redis.hgetall(keys.held_heads(REPO))  # type: ignore[assignment]
    return {k.decode(): verdict_format.expand_held_head(json.loads(v)) or {} for k, v in raw.items()}


def test_held_prs_carry_base_and_head_sha_and_leave_the_index_when_free(redis_client: Redis,
                                                                        redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {1: "main", 2: "release/1", 3: "main"})
    place_hold(redis_client, f"{REPO}#1", holder="dana", holder_id="slack:T1:dana", reason="db", origin="o",
               now=NOW, duration=None)
    place_hold(redis_client, f"{REPO}@release/*", holder="erin", holder_id="slack:T1:erin", reason="freeze",
               origin="o", now=NOW, duration=None)
    for number in (1, 2, 3):
        publish(rt, REPO, number, NOW)
    assert heads(redis_client) == {
        "1": {"base": "main", "head_sha": f"{1:040x}", "description": "Held by @dana in o: db"},
        "2": {"base": "release/1", "head_sha": f"{2:040x}", "description": "Held by @erin in o: freeze"}}
    record = store.load_verdict(redis_client, REPO, 3)
    assert record is not None and record["hold_label"] == "do-not-merge/hold" and record["held"] is False
    lift_holds(redis_client, f"{REPO}#1", actor="dana", origin="o")
    publish(rt, REPO, 1, NOW)
    assert list(heads(redis_client)) == ["2"]
    store.drop_repo(redis_client, REPO, 1)
    assert not redis_client.exists(keys.held_heads(REPO))


def test_a_closed_pr_leaves_the_index(redis_client: Redis, redis_url: str) -> None:
    rt = dry_runtime(redis_client, redis_url)
    manage(redis_client, REPO, {4: "main"})
    place_hold(redis_client, f"{REPO}#4", holder="dana", holder_id="slack:T1:dana", reason="db", origin="o",
               now=NOW, duration=None)
    publish(rt, REPO, 4, NOW)
    assert list(heads(redis_client)) == ["4"]
    store.update_pull(redis_client, REPO, 4, lambda s: replace(s, facts=replace(s.facts, open=False)))  # type: ignore[type-var]
    assert publish(rt, REPO, 4, NOW) == "closed"
    assert heads(redis_client) == {}
