"""An intake nothing can stop (issue 24 item 4): whatever a signed delivery holds — JSON nested a few
thousand levels, an ``action`` that is a list, fields of the wrong type, bytes that are not JSON — the
pump sets it aside as a dead letter with its reason, counts it, and goes on; every later valid delivery
is processed. Rows of the issue's reproductions, a running pump thread, a property test throwing
generated hostile bodies at the real pump and Redis, the doctor line and the metric, and the whole path
from the signed webhook to the commit status at the GitHub emulator."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rq import Queue

from core import keys
from core.deliveries import pack
from core.events import QUEUED
from core.json_text import MAX_DEPTH
from merge_hold.doctor import _dead_letters
from state import dead_letters
from tests.e2e_support import fixture, held_widgets, sign
from tests.emulator import GitHubEmulator
from workers.intake.pump import Pump

QUEUE = "merge-hold-dead-letters"


def deep(levels: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * levels + closer * levels).encode()


def valid(n: int) -> bytes:
    return pack("pull_request", f"ok-{n}", json.dumps({"action": "opened", "number": n}).encode())


HOSTILE: list[tuple[str, bytes, str]] = [
    ("1,000 levels", pack("issue_comment", "h1", deep(1000)), "TooDeep"),
    ("5,000 levels in a field", pack("pull_request", "h2", b'{"action":"opened","x":' + deep(5000) + b"}"),
     "TooDeep"),
    ("65 levels of objects", pack("push", "h3", b'{"a":' * 65 + b"1" + b"}" * 65), "TooDeep"),
    ("an action that is a list", pack("pull_request", "h4", b'{"action":["opened"]}'), "action not handled"),
    ("an action that is an object", pack("issue_comment", "h5", b'{"action":{"a":1}}'), "action not handled"),
    ("branches that are a number", pack("status", "h6", b'{"state":"success","context":"ci","branches":5}'),
     "TypeError"),
    ("a state that is a list", pack("status", "h7", b'{"state":["success"],"context":"ci"}'), "AttributeError"),
    ("not JSON", pack("push", "h8", b"{not json}"), "JSONDecodeError"),
    ("not UTF-8", pack("push", "h9", b'{"ref":"\xff\xfe"}'), "UnicodeDecodeError"),
    ("no entry at all", b"garbage without newlines", "ValueError: not an intake entry"),
]
"""(what, the intake entry, what happens: a dead letter's reason starts with the exception's name, or
the pump's ``ignore_reason`` drops it)."""


def _clear(redis_client: redis.Redis) -> None:
    redis_client.delete(*(redis_client.keys("rq:*") or ["-"]), *(redis_client.keys(f"mh:intake:{QUEUE}*") or ["-"]))


@pytest.mark.parametrize(("what", "entry", "outcome"), HOSTILE, ids=[row[0] for row in HOSTILE])
def test_a_hostile_entry_is_set_aside_and_the_next_is_queued(redis_client: redis.Redis, what: str, entry: bytes,
                                                             outcome: str) -> None:
    queue = Queue(QUEUE, connection=redis_client)
    redis_client.lpush(keys.intake(QUEUE), entry, valid(1))  # the hostile one is taken first
    pump = Pump(redis_client, queue, "p")
    assert pump.pump_all() == 2
    assert queue.job_ids == ["delivery-ok-1"]
    waiting, records = dead_letters.newest(redis_client, QUEUE, 5)
    if outcome == "action not handled":
        assert (pump.ignored, waiting) == (1, 0)
        return
    assert (pump.dead, waiting, dead_letters.total(redis_client, QUEUE)) == (1, 1, 1)
    (record,) = records
    assert record["reason"].startswith(outcome), record["reason"]
    assert record["entry"].encode("utf-8", "surrogateescape") == entry[: dead_letters.KEEP_BYTES]
    assert record["bytes"] == len(entry) and record["truncated"] is (len(entry) > dead_letters.KEEP_BYTES)
    assert not redis_client.exists(keys.intake(QUEUE), keys.intake_taken(QUEUE, "p"))
    check = _dead_letters(redis_client, QUEUE)
    assert not check.ok and check.detail.startswith("1 delivery set aside") and outcome.split(":")[0] in check.detail
    assert keys.intake_dead(QUEUE) in check.fix


def test_the_running_pump_survives_a_deep_delivery(redis_client: redis.Redis) -> None:
    """The issue's reproduction: the pump thread died on such an entry, and each restarted pump took it
    back and died again. Now the thread lives on and the valid delivery behind it becomes a job."""
    queue = Queue(QUEUE, connection=redis_client)
    pump = Pump(redis_client, queue, "live")
    thread, stop = pump.start()
    try:
        redis_client.lpush(keys.intake(QUEUE), pack("issue_comment", "deep", deep(3000)),
                           pack("pull_request", "list", b'{"action":[1]}'), valid(2))
        deadline = time.monotonic() + 10
        while "delivery-ok-2" not in queue.job_ids and time.monotonic() < deadline:
            time.sleep(0.02)
        assert queue.job_ids == ["delivery-ok-2"] and thread.is_alive()
        assert dead_letters.total(redis_client, QUEUE) == 1
    finally:
        stop.set()
        thread.join(5)


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
JSONISH = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                       max_leaves=12)
FIELDS = ("action", "issue", "changes", "ref", "state", "context", "branches", "pull_request", "sender")


@st.composite
def hostile_bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["fields", "deep", "bytes", "value"]))
    if kind == "fields":  # a payload whose judged fields hold anything at all
        payload = draw(st.dictionaries(st.sampled_from(FIELDS), JSONISH, max_size=5))
        return json.dumps(payload).encode()
    if kind == "deep":
        levels = draw(st.integers(MAX_DEPTH - 2, 4000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        return (('{"action":"opened","x":' if draw(st.booleans()) else "") + opener * levels
                + ("1" if opener != "[" else "") + closer * levels).encode()
    if kind == "value":
        return json.dumps(draw(JSONISH)).encode()
    return draw(st.binary(max_size=64))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(storm=st.lists(st.tuples(st.sampled_from((*QUEUED, "ping", "nonsense")), hostile_bodies()),
                      min_size=1, max_size=8))
def test_no_storm_of_hostile_bodies_stops_the_intake(redis_client: redis.Redis,
                                                     storm: list[tuple[str, bytes]]) -> None:
    _clear(redis_client)
    queue = Queue(QUEUE, connection=redis_client)
    entries = [pack(event, f"h-{n}", body) for n, (event, body) in enumerate(storm)]
    redis_client.lpush(keys.intake(QUEUE), *entries, valid(3))
    pump = Pump(redis_client, queue, "storm")
    assert pump.pump_all() == len(entries) + 1
    assert "delivery-ok-3" in queue.job_ids
    assert pump.queued + pump.ignored + pump.dead == len(entries) + 1
    assert dead_letters.waiting(redis_client, QUEUE) == pump.dead
    assert not redis_client.exists(keys.intake(QUEUE), keys.intake_taken(QUEUE, "storm"))


def test_from_the_signed_webhook_to_the_status(github_emulator: GitHubEmulator, redis_url: str) -> None:
    """End to end: signed hostile deliveries are acknowledged (their bodies look like JSON objects, so the
    receiver queues them), the pump sets them aside, and the valid `/unhold` behind them frees the PR."""
    svc = held_widgets(github_emulator, redis_url)
    hostile: list[tuple[str, bytes]] = [("issue_comment", b'{"x":' + deep(5000) + b"}"),
                                        ("pull_request", b'{"action":["closed"],"number":5}'),
                                        ("status", b'{"state":["failure"],"context":"ci","branches":[]}')]
    for n, (event, body) in enumerate(hostile):
        answer = svc.client.post("/webhooks/github", data=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": f"hostile-{n}",
            "X-Hub-Signature-256": sign(body)})
        assert answer.status_code == 202, answer.get_data(as_text=True)
    unhold: dict[str, Any] = fixture("issue_comment", "created.payload.json")
    unhold["repository"] = {**unhold["repository"], "full_name": "acme/widgets"}
    unhold["issue"].update(number=5, pull_request={"url": "x"})
    unhold["comment"].update(body="/unhold", author_association="OWNER", created_at="2026-01-05T11:00:00Z", id=56)
    unhold["comment"]["user"] = {**unhold["comment"]["user"], "login": "alice"}
    assert svc.deliver("issue_comment", unhold).status_code == 202
    svc.drain()
    assert (github_emulator.latest_status("acme/widgets", "5" * 40) or {}).get("state") == "success"
    waiting, records = dead_letters.newest(svc.redis, svc.settings.queue_name, 5)
    assert waiting == 2 and {r["delivery_id"] for r in records} == {"hostile-0", "hostile-2"}


def test_the_metric_counts_them(redis_client: redis.Redis, tmp_path: Any) -> None:
    from tests.webapp_support import make_app

    app, _ = make_app(redis_client, tmp_path, metrics_token="scrape", queue_name=QUEUE)
    queue = Queue(QUEUE, connection=redis_client)
    redis_client.lpush(keys.intake(QUEUE), pack("push", "d", deep(100)), b"junk", valid(4))
    Pump(redis_client, queue, "m").pump_all()
    text = app.test_client().get("/metrics", headers={"Authorization": "Bearer scrape"}).get_data(as_text=True)
    assert "merge_hold_intake_dead_letters_total 2.0" in text
    assert "merge_hold_intake_dead_letters_waiting 2.0" in text
