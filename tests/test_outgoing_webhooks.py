"""Outgoing webhooks end to end: endpoints registered over HTTP, events from where state changes are recorded,
signed POSTs to a receiver on loopback, the backoff of a dead endpoint (that never holds back a status write
at the GitHub emulator), 410 Gone, redelivery, the freeze clock, and the page."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from rq.registry import ScheduledJobRegistry
from standardwebhooks.webhooks import Webhook

from core import jobs, keys
from merge_hold.tokens import create as create_token
from state import audit, outgoing, store, webhook_endpoints
from tests.chat_support import drain, dry_runtime, emulated_service, seed_repo
from tests.emulator import GitHubEmulator
from tests.outgoing_support import Receiver, receiver
from tests.webapp_support import make_app, post_form
from workers.outgoing import clock
from workers.outgoing.deliver import deliver

REPO = "acme/widgets"
LOOPBACK = ("127.0.0.0/8",)


def register(client: Any, auth: dict[str, str], url: str, events: list[str] | None = None) -> dict[str, Any]:
    answer = client.post("/api/v1/orgs/acme/webhooks", headers=auth,
                         json={"url": url, "events": events or ["freeze.started", "freeze.ended", "hold.placed",
                                                                "hold.lifted", "incident.recorded"],
                               "description": "incident tooling"})
    assert answer.status_code == 201, answer.get_json()
    return dict(answer.get_json())


def verified(got: Receiver, secret: str, index: int = -1) -> dict[str, Any]:
    """The request's body, after the reference library verified its signature."""
    request = got.requests[index]
    return dict(Webhook(secret).verify(request.body, request.headers))


def waits(queue: Any) -> list[float]:
    """Seconds until each scheduled delivery job runs."""
    scheduled = ScheduledJobRegistry(queue=queue)  # type: ignore[no-untyped-call]
    found = []
    for job_id in scheduled.get_job_ids():
        job = queue.fetch_job(job_id)
        if job is not None and job.func_name == jobs.WEBHOOK_DELIVERY.address:
            found.append(scheduled.get_scheduled_time(job_id).timestamp() - datetime.now(UTC).timestamp())
    return found


@pytest.fixture()
def served(redis_client: Redis, redis_url: str, tmp_path: Path) -> Any:
    app, token = make_app(redis_client, tmp_path, webhook_allow_networks=LOOPBACK)
    store.save_repo(redis_client, REPO, store.RepoMeta(installation_id=1, config_loaded=True))
    rt = dry_runtime(redis_client, redis_url, webhook_allow_networks=LOOPBACK)
    return app.test_client(), {"Authorization": f"Bearer {token}"}, rt


def test_a_room_freeze_reaches_the_endpoint_signed(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    with receiver() as got:
        made = register(client, auth, got.url)
        assert made["secret"].startswith("whsec_") and "secret" not in made["endpoint"]
        placed = client.post("/api/v1/holds", headers=auth, json={"target": REPO, "reason": "incident 4711",
                                                                   "for": "2h"})
        assert placed.status_code == 201
        drain(rt)
        assert len(got.requests) == 1
        body = verified(got, made["secret"])
        assert body["type"] == "freeze.started"
        data = body["data"]
        assert (data["org"], data["repo"], data["scope"], data["actor"], data["reason"]) == (
            "acme", REPO, REPO, "token:tester", "incident 4711")
        assert data["expires_at"] == placed.get_json()["hold"]["expires_at"]
        headers = got.requests[0].headers
        assert headers["webhook-id"].startswith("msg_") and headers["content-type"] == "application/json"
        assert got.requests[0].path == "/hooks/merge-hold"
        # Lifted: the end is told too, and the delivery log shows both as delivered.
        hold_id = placed.get_json()["hold"]["id"]
        assert client.delete(f"/api/v1/holds/{hold_id}", headers=auth).status_code == 200
        drain(rt)
        assert [verified(got, made["secret"], i)["type"] for i in range(2)] == ["freeze.started", "freeze.ended"]
        log = client.get(f"/api/v1/orgs/acme/webhooks/{made['endpoint']['id']}/deliveries", headers=auth).get_json()
        assert [(d["type"], d["state"], d["attempt_count"]) for d in log["deliveries"]] == [
            ("freeze.ended", "delivered", 1), ("freeze.started", "delivered", 1)]


def test_only_the_chosen_types_and_only_the_orgs_own(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    with receiver() as got:
        register(client, auth, got.url, ["incident.recorded"])
        audit.record(redis_client, REPO, "room.held", scope=REPO, holder="dana", reason="x")
        audit.record(redis_client, "other/repo", "incident.recorded", number=3, merged_by="eve", reason="held")
        audit.record(redis_client, REPO, "incident.recorded", number=5, merged_by="eve", kinds=["held"],
                     reason="merged while held")
        drain(rt)
        assert [json.loads(r.body)["type"] for r in got.requests] == ["incident.recorded"]
        assert json.loads(got.requests[0].body)["data"]["number"] == 5


def test_a_dead_endpoint_backs_off_and_never_holds_back_a_status_write(github_emulator: GitHubEmulator,
                                                                       redis_client: Redis, redis_url: str,
                                                                       tmp_path: Path) -> None:
    svc = emulated_service(github_emulator, redis_url, webhook_allow_networks=LOOPBACK,
                           api_tokens_file=str(tmp_path / "tokens"))
    token = create_token(tmp_path / "tokens", "ops", "admin")
    auth = {"Authorization": f"Bearer {token}"}
    seed_repo(github_emulator, redis_client, REPO, 3)
    with receiver() as dead:
        dead.answer(503)
        made = register(svc.client, auth, dead.url)
        endpoint = webhook_endpoints.get(redis_client, "acme", made["endpoint"]["id"])
        assert endpoint is not None
        before = len(github_emulator.status_posts())
        asked = datetime.now(UTC).timestamp()
        assert svc.client.post("/api/v1/holds", headers=auth, json={"target": REPO, "reason": "incident"}).status_code \
            == 201
        svc.drain()
        drained = datetime.now(UTC).timestamp()
        # Every PR got its status at GitHub; the endpoint was asked once and is waiting out its first pause.
        assert len(github_emulator.status_posts()) - before == 3
        assert len(dead.requests) == 1
        [wait] = waits(svc.rt.queue)
        # 5 s after the failed POST, give or take 10 % jitter; the POST fell between `asked` and `drained`,
        # and `wait` was measured from a moment after both (a slow machine must not fail this). rq keeps a
        # scheduled time in whole seconds (its registry's score is `calendar.timegm`, which truncates): the
        # time read back may be up to a second before the one asked for.
        now = datetime.now(UTC).timestamp()
        assert asked + 4.5 - 1.0 <= now + wait <= drained + 5.5 + 0.01
        # More news while it waits: statuses go out at once, the endpoint is not asked again.
        assert svc.client.post("/api/v1/holds", headers=auth, json={"target": f"{REPO}#2", "reason": "mine"}
                               ).status_code == 201
        posts = len(github_emulator.status_posts())
        svc.drain()
        assert len(github_emulator.status_posts()) == posts + 1
        assert len(dead.requests) == 1
        assert redis_client.llen(keys.webhook_pending("acme", endpoint.id)) == 2
        # The scheduled run (as rq's scheduler starts it): asked once more, and the next pause is 5 minutes.
        deliver(redis_client, svc.rt.settings, "acme", endpoint.id)
        assert len(dead.requests) == 2
        assert max(waits(svc.rt.queue)) > 250
        assert redis_client.hget(keys.webhook_health("acme", endpoint.id), "streak") == b"2"
        # It comes back: everything that waited goes, in order, and the count starts again.
        dead.answer(200)
        deliver(redis_client, svc.rt.settings, "acme", endpoint.id)
        assert [json.loads(r.body)["type"] for r in dead.requests[2:]] == ["freeze.started", "hold.placed"]
        assert dead.requests[0].headers["webhook-id"] == dead.requests[2].headers["webhook-id"]  # same message
        assert redis_client.hget(keys.webhook_health("acme", endpoint.id), "streak") == b"0"


def test_410_gone_disables_the_endpoint(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    with receiver() as got:
        got.answer(410)
        made = register(client, auth, got.url)
        audit.record(redis_client, REPO, "room.held", scope=REPO, holder="dana", reason="x")
        drain(rt)
        rows = client.get("/api/v1/orgs/acme/webhooks", headers=auth).get_json()["endpoints"]
        assert "410 Gone" in rows[0]["disabled"]
        audit.record(redis_client, REPO, "room.lifted", scope=REPO, actor="dana", holders=["dana"])
        drain(rt)
        assert len(got.requests) == 1  # nothing more is sent
        got.answer(204)
        ident = made["endpoint"]["id"]
        assert client.post(f"/api/v1/orgs/acme/webhooks/{ident}/enable", headers=auth).status_code == 200
        audit.record(redis_client, REPO, "room.held", scope=REPO, holder="dana", reason="again")
        drain(rt)
        assert json.loads(got.requests[-1].body)["data"]["reason"] == "again"


def test_a_message_given_up_is_redelivered_with_its_id(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    with receiver() as got:
        got.answer(500)
        made = register(client, auth, got.url)
        ident = made["endpoint"]["id"]
        endpoint = webhook_endpoints.get(redis_client, "acme", ident)
        assert endpoint is not None
        audit.record(redis_client, REPO, "room.held", scope=REPO, holder="dana", reason="x")
        drain(rt)
        [record] = outgoing.deliveries(redis_client, endpoint)
        record["since"] -= 4 * 86400  # days of failures later
        outgoing.save(redis_client, endpoint, record)
        deliver(redis_client, rt.settings, "acme", ident)
        [record] = outgoing.deliveries(redis_client, endpoint)
        assert record["state"] == "failed" and "gave up" in record["note"] and len(got.requests) == 1
        got.answer(200)
        redis_client.delete(keys.webhook_armed("acme", ident))  # the waiting job belongs to the past
        answer = client.post(f"/api/v1/orgs/acme/webhooks/{ident}/deliveries/{record['id']}/redeliver", headers=auth)
        assert answer.status_code == 202
        drain(rt)
        assert len(got.requests) == 2 and got.requests[1].headers["webhook-id"] == record["id"]
        verified(got, made["secret"])
        assert outgoing.deliveries(redis_client, endpoint)[0]["state"] == "delivered"
        assert client.post(f"/api/v1/orgs/acme/webhooks/{ident}/deliveries/msg_nope/redeliver",
                           headers=auth).status_code == 404


def test_the_worker_checks_the_address_again(served: Any, redis_client: Redis, redis_url: str) -> None:
    client, auth, _rt = served
    strict = dry_runtime(redis_client, redis_url)  # the operator took the allowance back
    with receiver() as got:
        made = register(client, auth, got.url)
        audit.record(redis_client, REPO, "room.held", scope=REPO, holder="dana", reason="x")
        drain(strict)
        assert got.requests == []
        endpoint = webhook_endpoints.get(redis_client, "acme", made["endpoint"]["id"])
        assert endpoint is not None
        [record] = outgoing.deliveries(redis_client, endpoint)
        assert "loopback" in record["attempts"][0]["error"]


@pytest.mark.parametrize(("body", "status", "said"), [
    ({"url": "http://127.0.0.1:9/x", "events": ["hold.placed"]}, 400, "loopback"),
    ({"url": "https://10.0.0.1/x", "events": ["hold.placed"]}, 400, "private"),
    ({"url": "https://hooks.example.com/x", "events": ["hold.placed", "hold.nope"]}, 400, "unknown event"),
    ({"url": "https://hooks.example.com/x", "events": []}, 400, "at least one"),
    ({"url": "https://hooks.example.com/x"}, 400, "list of event types"),
    ({"events": ["hold.placed"]}, 400, "url is required"),
    ({"url": "https://hooks.example.com/x", "events": ["hold.placed"]}, 201, None),
])
def test_registration_rows(redis_client: Redis, tmp_path: Path, body: dict[str, Any], status: int,
                           said: str | None) -> None:
    app, token = make_app(redis_client, tmp_path)  # no network allowed by the operator
    store.save_repo(redis_client, REPO, store.RepoMeta(installation_id=1, config_loaded=True))
    answer = app.test_client().post("/api/v1/orgs/acme/webhooks", json=body,
                                    headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == status
    if said:
        assert said in answer.get_json()["error"]


def test_only_admin_tokens_of_the_org_manage_endpoints(served: Any, tmp_path: Path) -> None:
    client, auth, _rt = served
    tokens = tmp_path / "tokens"
    reader = {"Authorization": f"Bearer {create_token(tokens, 'reader', 'read')}"}
    holder = {"Authorization": f"Bearer {create_token(tokens, 'holder', 'hold')}"}
    elsewhere = {"Authorization": f"Bearer {create_token(tokens, 'other-admin', 'admin', ('other',))}"}
    good = {"url": "https://hooks.example.com/x", "events": ["hold.placed"]}
    for headers, status in ((reader, 403), (holder, 403), (elsewhere, 403), ({}, 401), (auth, 201)):
        assert client.post("/api/v1/orgs/acme/webhooks", json=good, headers=headers).status_code == status
        assert client.get("/api/v1/orgs/acme/webhooks", headers=headers).status_code == (
            200 if status == 201 else status)
    assert client.get("/api/v1/orgs/nobody/webhooks", headers=auth).status_code == 404
    [row] = client.get("/api/v1/orgs/acme/webhooks", headers=auth).get_json()["endpoints"]
    assert "secret" not in row
    assert client.delete(f"/api/v1/orgs/acme/webhooks/{row['id']}", headers=reader).status_code == 403
    assert client.delete(f"/api/v1/orgs/acme/webhooks/{row['id']}", headers=auth).status_code == 200
    assert client.get("/api/v1/orgs/acme/webhooks", headers=auth).get_json()["endpoints"] == []


CONFIG = """\
freeze-windows:
  - name: sunday-freeze
    days: [sun]
    from: "01:00"
    to: "04:00"
    timezone: Europe/Berlin
    branches: [main]
"""


def test_the_freeze_clock_tells_a_window_beginning_and_ending_once(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    store.save_repo(redis_client, REPO, store.RepoMeta(installation_id=1, config_text=CONFIG, config_loaded=True))
    with receiver() as got:
        made = register(client, auth, got.url)
        drain(rt)  # the clock's first look (queued by the registration) only remembers
        assert got.requests == []

        def at(moment: str) -> None:
            clock.run(redis_client, "acme", datetime.fromisoformat(moment).replace(tzinfo=UTC))
            drain(rt)

        # That first look read the real clock, which may be inside the window (a Sunday night in Berlin:
        # it failed one): look once at a fixed moment before it, and judge only what follows.
        at("2026-03-21T22:00:00")
        del got.requests[:]
        before = redis_client.xlen(keys.history(REPO))
        at("2026-03-21T23:00:00")  # Saturday night, nothing yet
        at("2026-03-22T00:00:01")  # 01:00 CET: the window begins
        at("2026-03-22T01:00:00")  # again, mid-window: nothing new
        at("2026-03-22T03:00:00")  # 04:00 CET: it ends
        bodies = [verified(got, made["secret"], i) for i in range(len(got.requests))]
        assert [(b["type"], b["data"]["source"], b["data"]["name"]) for b in bodies] == [
            ("freeze.started", "window", "sunday-freeze"), ("freeze.ended", "window", "sunday-freeze")]
        assert bodies[0]["data"]["ends_at"] == "2026-03-22T03:00:00Z"
        entries: Any = redis_client.xrange(keys.history(REPO))
        events = [fields[b"event"].decode() for _id, fields in entries[before:]]
        assert [e for e in events if e.startswith("window.")] == ["window.started", "window.ended"]
        # It schedules its own next look at the next edge (29 March, 01:00 CET = 00:00 UTC).
        assert redis_client.exists(keys.webhook_clock("acme", int(datetime(2026, 3, 29, tzinfo=UTC).timestamp())))


def test_a_timed_freeze_running_out_is_told(served: Any, redis_client: Redis) -> None:
    client, auth, rt = served
    with receiver() as got:
        made = register(client, auth, got.url)
        assert client.post("/api/v1/holds", headers=auth, json={"target": f"{REPO}@main", "reason": "release",
                                                                 "for": "30m"}).status_code == 201
        drain(rt)
        later = datetime.now(UTC) + timedelta(minutes=31)
        clock.run(redis_client, "acme", later)
        drain(rt)
        types = [(b["type"], b["data"].get("ended")) for b in (verified(got, made["secret"], i)
                                                               for i in range(len(got.requests)))]
        assert types == [("freeze.started", None), ("freeze.ended", "expired")]
        clock.run(redis_client, "acme", later + timedelta(minutes=1))
        drain(rt)
        assert len(got.requests) == 2  # told once


def test_the_page_is_for_admins(served: Any, redis_client: Redis, tmp_path: Path) -> None:
    client, _auth, _rt = served
    tokens = tmp_path / "tokens"
    admin_token = create_token(tokens, "ada", "admin", ("acme",))
    post_form(client, "/login", {"token": admin_token})
    assert client.get("/orgs/acme/webhooks").status_code == 200
    made = post_form(client, "/orgs/acme/webhooks", {"url": "https://hooks.example.com/mh", "events": "hold.placed",
                                                     "description": "pager"})
    assert made.status_code == 201
    page = made.data.decode()
    [endpoint] = webhook_endpoints.endpoints(redis_client, "acme")
    assert endpoint.secret in page and endpoint.events == ("hold.placed",)
    assert endpoint.secret not in client.get("/orgs/acme/webhooks").data.decode()  # shown once
    refused = post_form(client, "/orgs/acme/webhooks", {"url": "https://192.168.0.7/", "events": "hold.placed"})
    assert refused.status_code == 302 and len(webhook_endpoints.endpoints(redis_client, "acme")) == 1
    assert client.get("/orgs/nobody/webhooks").status_code == 404
    # The delivery log on the page, with its Redeliver button for a message that failed.
    audit.record(redis_client, REPO, "room.held", scope=f"{REPO}#5", number=5, holder="dana", reason="x")
    [record] = outgoing.deliveries(redis_client, endpoint)
    outgoing.finish(redis_client, endpoint, record["id"], "failed", note="gave up")
    page = client.get("/orgs/acme/webhooks").data.decode()
    assert record["id"] in page and "Redeliver" in page and "hold.placed" in page
    redelivered = post_form(client, f"/orgs/acme/webhooks/{endpoint.id}/deliveries/{record['id']}/redeliver", {})
    assert redelivered.status_code == 302 and outgoing.deliveries(redis_client, endpoint)[0]["state"] == "pending"
    assert post_form(client, f"/orgs/acme/webhooks/{endpoint.id}/disable", {}).status_code == 302
    assert "paused by ada" in client.get("/orgs/acme/webhooks").data.decode()
    assert post_form(client, f"/orgs/acme/webhooks/{endpoint.id}/remove", {}).status_code == 302
    assert webhook_endpoints.endpoints(redis_client, "acme") == []
    reader = app_client_as(client, tokens)
    assert reader.get("/orgs/acme/webhooks").status_code == 403


def app_client_as(client: Any, tokens: Path) -> Any:
    other = client.application.test_client()
    post_form(other, "/login", {"token": create_token(tokens, "rita", "read")})
    return other
