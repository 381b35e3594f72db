"""`POST /webhooks/github`: verified, filtered, durably queued before the 2xx, 503 when it cannot queue."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
import requests
from rq import Queue

from app.webhooks import signature_valid
from core import keys
from core.deliveries import pack
from state.queueing import DELIVERY_FAILURE_TTL, HANDLE_DELIVERY
from tests.webapp_support import (
    FIXTURES,
    closed_port_url,
    delivery_headers,
    fixture_body,
    make_app,
    serving,
    sign,
)
from workers.intake.pump import pump_all

QUEUE = "merge-hold-test"
PR_LINK = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}


def _comment(action: str, on_pr: bool, link: Any = PR_LINK) -> bytes:
    payload = json.loads((FIXTURES / "github/webhooks/issue_comment/created.payload.json").read_text())
    payload["action"] = action
    if on_pr:
        payload["issue"]["pull_request"] = link
    return json.dumps(payload).encode()


def _edited(changes: dict[str, Any]) -> bytes:
    return fixture_body("pull_request/opened.payload.json", action="edited", changes=changes)


def test_github_documented_signature_vector() -> None:
    vector = json.loads((FIXTURES / "chat/github-webhook-signature.json").read_text())
    body = vector["payload"].encode()
    assert signature_valid(vector["secret"], body, vector["x_hub_signature_256"])
    assert sign(body, vector["secret"]) == vector["x_hub_signature_256"]


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256=",
        "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",  # no prefix
        "sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        "sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17",  # not GitHub's form
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e18",  # last digit off
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1",  # truncated
        "sha256=é",
    ],
)
def test_signature_rejects(header: str | None) -> None:
    assert not signature_valid("It's a Secret to Everybody", b"Hello, World!", header)


def test_signature_is_over_the_raw_bytes() -> None:
    body = b'{"a": 1}'
    assert signature_valid("k", body, sign(body, "k"))
    assert not signature_valid("k", b'{"a":1}', sign(body, "k"))  # same JSON, other bytes


# The receiver filters on the X-GitHub-Event header only and acknowledges once the raw body is in the
# intake list; the pump (workers/intake/pump.py) then drops what cannot matter and queues the rest as jobs.
# (name, event, body, status, reply subset, in the intake?, a job after the pump?)
Row = tuple[str, str, bytes, int, dict[str, Any], bool, bool]
ROWS: list[Row] = [
    ("ping", "ping", fixture_body("ping/payload.json"), 200,
     {"ok": True, "zen": "Anything added dilutes everything else."}, False, False),
    ("ping with a JSON string", "ping", b'"zen"', 200, {"ok": True, "zen": None}, False, False),
    ("ping not JSON", "ping", b"\xff", 200, {"ok": True}, False, False),
    ("unhandled event", "label", fixture_body("label/created.payload.json"), 202, {"ignored": "label"}, False,
     False),
    ("check_suite requested", "check_suite", fixture_body("check_suite/requested.payload.json"), 202, {}, True,
     False),
    ("check_suite completed (tree closer)", "check_suite", fixture_body("check_suite/completed.payload.json"),
     202, {}, True, True),
    ("event name in another case", "Pull_Request", fixture_body("pull_request/opened.payload.json"), 202,
     {"ignored": "Pull_Request"}, False, False),
    ("comment on an issue", "issue_comment", _comment("created", on_pr=False), 202, {}, True, False),
    ("comment edited on a PR", "issue_comment", _comment("edited", on_pr=True), 202, {}, True, False),
    ("comment deleted on a PR", "issue_comment", _comment("deleted", on_pr=True), 202, {}, True, False),
    ("comment created on a PR", "issue_comment", _comment("created", on_pr=True), 202, {}, True, True),
    ("comment with pull_request null", "issue_comment", _comment("created", on_pr=True, link=None), 202, {},
     True, False),
    ("comment without an issue", "issue_comment",
     fixture_body("issue_comment/created.payload.json", issue="1"), 202, {}, True, False),
    ("PR opened", "pull_request", fixture_body("pull_request/opened.payload.json"), 202, {}, True, True),
    ("PR opened, null body", "pull_request", fixture_body("pull_request/opened.with-null-body.json"), 202, {},
     True, True),
    ("PR synchronize", "pull_request", fixture_body("pull_request/synchronize.payload.json"), 202, {}, True,
     True),
    ("PR labeled", "pull_request", fixture_body("pull_request/labeled.payload.json"), 202, {}, True, True),
    ("PR closed", "pull_request", fixture_body("pull_request/closed.payload.json"), 202, {}, True, True),
    ("PR assigned", "pull_request", fixture_body("pull_request/assigned.payload.json"), 202, {}, True, False),
    ("PR title edited", "pull_request", _edited({"title": {"from": "x"}}), 202, {}, True, False),
    ("PR base edited", "pull_request", _edited({"base": {"ref": {"from": "main"}}}), 202, {}, True, True),
    ("review submitted", "pull_request_review", fixture_body("pull_request_review/submitted.payload.json"),
     202, {}, True, True),
    ("review dismissed", "pull_request_review", fixture_body("pull_request_review/dismissed.payload.json"),
     202, {}, True, True),
    ("review edited", "pull_request_review",
     fixture_body("pull_request_review/submitted.payload.json", action="edited"), 202, {}, True, False),
    ("tag push", "push", fixture_body("push/payload.json"), 202, {}, True, False),
    ("branch push", "push", fixture_body("push/with-new-branch.payload.json"), 202, {}, True, True),
    ("merge group", "merge_group", fixture_body("merge_group/checks_requested.payload.json"), 202, {}, True,
     True),
    ("merge group destroyed", "merge_group",
     fixture_body("merge_group/checks_requested.payload.json", action="destroyed"), 202, {}, True, False),
    ("installation", "installation", fixture_body("installation/created.payload.json"), 202, {}, True, True),
    ("installation repos", "installation_repositories",
     fixture_body("installation_repositories/removed.payload.json"), 202, {}, True, True),
    # A final status on a commit some branch contains is queued: whether that commit is the branch's
    # head is the workers' question (the payload's reading of the heads is as old as the event).
    ("CI status on a commit branches contain", "status", fixture_body("status/payload.json"), 202, {}, True, True),
    ("CI status on a commit no branch contains", "status", fixture_body("status/payload.json", branches=[]), 202,
     {}, True, False),
    ("CI status, pending, on a branch head", "status", fixture_body(
        "status/payload.json", state="pending", sha="f95f852bd8fca8fcc58a9a2d6c842781e32a215e"), 202, {}, True,
     False),
    ("CI failure on a branch head (tree closer)", "status", fixture_body(
        "status/payload.json", state="failure", sha="f95f852bd8fca8fcc58a9a2d6c842781e32a215e"), 202, {}, True,
     True),
    ("our status context", "status", fixture_body("status/payload.json", context="merge-hold"), 202, {}, True,
     True),
    # Signed, yet not a JSON object: acknowledged (GitHub would only resend it), dropped by the pump.
    ("malformed JSON", "pull_request", b'{"action": "opened",', 400, {"error": "body is not a JSON object"},
     False, False),
    ("JSON array", "pull_request", b"[1, 2]", 400, {"error": "body is not a JSON object"}, False, False),
    ("not UTF-8", "pull_request", b"\xff\xfe{}", 400, {"error": "body is not a JSON object"}, False, False),
    ("empty body", "push", b"", 400, {"error": "body is not a JSON object"}, False, False),
    ("a body full of newlines", "push", b"\n\n\n", 400, {"error": "body is not a JSON object"}, False, False),
    # Framed like an object yet not JSON: acknowledged (GitHub would only resend it), dropped by the pump.
    ("braces around garbage", "pull_request", b"{not json}", 202, {}, True, False),
]


@pytest.mark.parametrize(("name", "event", "body", "status", "expected", "acked", "queued"), ROWS,
                         ids=[r[0] for r in ROWS])
def test_delivery_rows(
    redis_client: redis.Redis, tmp_path: Path,
    name: str, event: str, body: bytes, status: int, expected: dict[str, Any], acked: bool, queued: bool,
) -> None:
    app, _ = make_app(redis_client, tmp_path)
    response = app.test_client().post("/webhooks/github", data=body, headers=delivery_headers(event, body))
    assert response.status_code == status, response.get_json()
    reply = response.get_json()
    assert expected.items() <= reply.items()
    assert redis_client.llen(keys.intake(QUEUE)) == int(acked)
    assert (reply == {"queued": True, "delivery": "d-1"}) == acked
    queue = Queue(QUEUE, connection=redis_client)
    assert pump_all(redis_client, queue) == int(acked)
    assert redis_client.llen(keys.intake(QUEUE)) == 0
    if queued:
        (job,) = queue.jobs
        assert (job.id, job.func_name, job.args) == ("delivery-d-1", HANDLE_DELIVERY, (event, "d-1", body))
        assert (job.result_ttl, job.failure_ttl) == (0, DELIVERY_FAILURE_TTL)
    else:
        assert queue.count == 0


def _post(app: Any, body: bytes, headers: dict[str, str]) -> Any:
    return app.test_client().post("/webhooks/github", data=body, headers=headers)


BODY = fixture_body("pull_request/opened.payload.json")


@pytest.mark.parametrize(
    ("name", "headers", "status"),
    [
        ("no signature", {"X-GitHub-Event": "pull_request"}, 401),
        ("signed with another secret", {"X-GitHub-Event": "pull_request",
                                        "X-Hub-Signature-256": sign(BODY, "other")}, 401),
        ("signature of another body", {"X-GitHub-Event": "pull_request",
                                       "X-Hub-Signature-256": sign(BODY + b" ")}, 401),
        ("sha1 only", {"X-GitHub-Event": "pull_request", "X-Hub-Signature": "sha1=" + "0" * 40}, 401),
        ("no event header", {"X-Hub-Signature-256": sign(BODY)}, 400),
        ("delivery id with a slash", {"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(BODY),
                                      "X-GitHub-Delivery": "../etc"}, 400),
    ],
)
def test_rejected_headers(
    redis_client: redis.Redis, tmp_path: Path, name: str, headers: dict[str, str], status: int
) -> None:
    app, _ = make_app(redis_client, tmp_path)
    response = _post(app, BODY, {"Content-Type": "application/json", **headers})
    assert response.status_code == status
    assert "error" in response.get_json()
    assert redis_client.llen(keys.intake(QUEUE)) == 0


def test_unsigned_is_never_accepted_without_a_secret(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path, github_webhook_secret=None)
    for headers in ({"X-GitHub-Event": "pull_request"}, delivery_headers("pull_request", BODY),
                    {"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(BODY, "")}):
        response = _post(app, BODY, headers)
        assert response.status_code == 503
        assert "GITHUB_WEBHOOK_SECRET" in response.get_json()["error"]
    assert redis_client.llen(keys.intake(QUEUE)) == 0


@pytest.mark.parametrize(("size", "status"), [(1024, 202), (1025, 413), (10_000, 413)])
def test_body_cap_on_content_length(redis_client: redis.Redis, tmp_path: Path, size: int, status: int) -> None:
    app, _ = make_app(redis_client, tmp_path, max_body_bytes=1024)
    body = json.dumps({"action": "opened", "pad": ""}).encode()
    body = body[:-2] + b" " * (size - len(body)) + body[-2:]
    assert len(body) == size
    response = _post(app, body, delivery_headers("pull_request", body))
    assert response.status_code == status
    assert redis_client.llen(keys.intake(QUEUE)) == (1 if status == 202 else 0)


def test_redis_down_answers_503_and_nothing_else(tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=closed_port_url())
    response = _post(app, BODY, delivery_headers("pull_request", BODY))
    assert response.status_code == 503
    assert "retry" in response.get_json()["error"]
    # What needs no queue still works: GitHub's ping and cheap ignores.
    ping = fixture_body("ping/payload.json")
    assert _post(app, ping, delivery_headers("ping", ping)).status_code == 200
    label = fixture_body("label/created.payload.json")
    assert _post(app, label, delivery_headers("label", label)).status_code == 202


def test_same_delivery_twice_keeps_one_job_id(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path)
    replies = [_post(app, BODY, delivery_headers("pull_request", BODY, delivery="abc-123")).get_json()
               for _ in range(2)]
    assert replies == [{"queued": True, "delivery": "abc-123"}] * 2
    queue = Queue(QUEUE, connection=redis_client)
    assert pump_all(redis_client, queue) == 2
    assert queue.job_ids == ["delivery-abc-123"]  # one batch: queued once


@pytest.mark.parametrize(("name", "event", "delivery", "jobs"), [
    ("an action the pump drops", "pull_request", "d-assigned", 0),
    ("no X-GitHub-Delivery", "pull_request", "", 1),
])
def test_the_202_names_the_delivery_never_a_job_that_may_not_exist(
    redis_client: redis.Redis, tmp_path: Path, name: str, event: str, delivery: str, jobs: int,
) -> None:
    """The 2xx promises the delivery is in Redis; what the pump makes of it comes later (or not at all)."""
    app, _ = make_app(redis_client, tmp_path)
    body = fixture_body("pull_request/assigned.payload.json") if jobs == 0 else BODY
    reply = _post(app, body, delivery_headers(event, body, delivery=delivery))
    assert (reply.status_code, reply.get_json()) == (202, {"queued": True, "delivery": delivery or None})
    queue = Queue(QUEUE, connection=redis_client)
    assert pump_all(redis_client, queue) == 1
    assert len(queue.job_ids) == jobs


# -- through a real HTTP server ---------------------------------------------------------------------------


def test_real_server_queues_before_acknowledging(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=redis_url)  # the app's own client, as in production
    queue = Queue(QUEUE, connection=redis_client)
    with serving(app) as base:
        for n, name in enumerate(["pull_request/synchronize.payload.json", "pull_request/closed.payload.json"]):
            body = (FIXTURES / "github/webhooks" / name).read_bytes()  # GitHub's bytes, signed as sent
            delivery = f"72d3162e-cc78-11e3-81ab-4c9367dc095{n}"
            response = requests.post(f"{base}/webhooks/github", data=body, timeout=10,
                                     headers=delivery_headers("pull_request", body, delivery=delivery))
            # The moment the 2xx is in hand the raw delivery is already in the intake list: no pump
            # runs here, so nothing but the request itself can have put it there.
            assert response.status_code == 202
            assert response.json() == {"queued": True, "delivery": delivery}
            assert redis_client.lindex(keys.intake(QUEUE), 0) == pack("pull_request", delivery, body)
        assert redis_client.llen(keys.intake(QUEUE)) == 2
        assert pump_all(redis_client, queue) == 2
        job = queue.fetch_job(f"delivery-{delivery}")
        assert job is not None and job.args == ("pull_request", delivery, body)
        assert queue.job_ids == [f"delivery-72d3162e-cc78-11e3-81ab-4c9367dc095{n}" for n in (0, 1)]


def test_real_server_redis_down_is_503(tmp_path: Path) -> None:
    app, _ = make_app(None, tmp_path, redis_url=closed_port_url())
    with serving(app) as base:
        response = requests.post(f"{base}/webhooks/github", data=BODY, timeout=10,
                                 headers=delivery_headers("pull_request", BODY))
    assert response.status_code == 503


def test_real_server_caps_a_chunked_body(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    """No Content-Length announces a chunked body: the cap must hold while reading."""
    app, _ = make_app(None, tmp_path, redis_url=redis_url, max_body_bytes=4096)
    with serving(app) as base:
        url = urlsplit(base)
        for size, status in ((4000, 202), (50_000, 413)):
            body = json.dumps({"action": "opened", "pad": "x" * size}).encode()
            conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
            conn.putrequest("POST", "/webhooks/github")
            for key, value in delivery_headers("pull_request", body, delivery=f"c-{size}").items():
                conn.putheader(key, value)
            conn.putheader("Transfer-Encoding", "chunked")
            conn.endheaders()
            for start in range(0, len(body), 1000):
                chunk = body[start:start + 1000]
                conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            conn.send(b"0\r\n\r\n")
            assert conn.getresponse().status == status
            conn.close()
    queue = Queue(QUEUE, connection=redis_client)
    assert pump_all(redis_client, queue) == 1
    assert queue.job_ids == ["delivery-c-4000"]


def test_too_few_replicas_is_503_and_the_entry_stays(redis_client: redis.Redis, tmp_path: Path) -> None:
    """MERGE_HOLD_MIN_REPLICAS=1 on a Redis without replicas: WAIT confirms none, so no 2xx. The entry is
    still queued (it will run; GitHub's redelivery is then a duplicate, which the workers skip)."""
    app, _ = make_app(redis_client, tmp_path, min_replicas=1)
    response = _post(app, BODY, delivery_headers("pull_request", BODY))
    assert response.status_code == 503
    assert "retry" in response.get_json()["error"]
    assert redis_client.llen(keys.intake(QUEUE)) == 1
