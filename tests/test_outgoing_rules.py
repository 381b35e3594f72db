"""Outgoing webhooks, the pure parts: signatures against the Standard Webhooks specification's reference
vector, which URLs and addresses are sent to, the audit-event table, the retry schedule."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook

from core.outgoing import GIVE_UP_AFTER, RETRY_SCHEDULE, TABLE, TYPES, message_body, retry_delay, translate
from core.outgoing_urls import EndpointUrlError, check, networks, sendable
from workers.outgoing.post import retry_after, signed_headers

# The reference vector every Standard Webhooks library is tested with (standard-webhooks/standard-webhooks,
# libraries/*/tests: Python, Go, JavaScript, Java, C#, PHP, Ruby share it).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = 1614265330
VECTOR_PAYLOAD = '{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_signature_is_the_reference_vectors() -> None:
    headers = signed_headers(VECTOR_ID, VECTOR_PAYLOAD, VECTOR_SECRET, datetime.fromtimestamp(VECTOR_TIMESTAMP, UTC))
    assert headers == {"webhook-id": VECTOR_ID, "webhook-timestamp": str(VECTOR_TIMESTAMP),
                       "webhook-signature": VECTOR_SIGNATURE}


def test_the_signature_is_the_specifications_scheme_by_hand() -> None:
    """HMAC-SHA256 of ``id.timestamp.body`` under the base64-decoded secret, spelled out with the standard
    library: a second way to the same bytes, so a library change that broke the scheme would show."""
    moment = datetime(2026, 3, 22, 1, 0, 7, tzinfo=UTC)
    body = message_body("freeze.started", "2026-03-22T01:00:00Z", {"org": "acme", "scope": "acme/widgets"})
    secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    headers = signed_headers("msg_1", body, secret, moment)
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"msg_1.{int(moment.timestamp())}.{body}".encode(), hashlib.sha256).digest()
    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()
    assert headers["webhook-timestamp"] == str(int(moment.timestamp()))


def test_a_receiver_verifies_with_the_reference_library() -> None:
    now = datetime.fromtimestamp(int(datetime.now(UTC).timestamp()), UTC)
    body = message_body("hold.placed", "2026-03-22T01:00:00Z", {"org": "acme"})
    secret = "whsec_" + base64.b64encode(b"s" * 24).decode()
    headers = signed_headers("msg_2", body, secret, now)
    assert Webhook(secret).verify(body, headers) == json.loads(body)
    tampered = body.replace("acme", "evil")
    with pytest.raises(Exception, match="signature"):
        Webhook(secret).verify(tampered, headers)


@pytest.mark.parametrize(("url", "allowed", "refused"), [
    ("https://hooks.example.com/merge-hold", (), None),
    ("https://hooks.example.com:8443/x?team=1", (), None),
    ("https://203.0.113.7/x", (), "private"),  # TEST-NET-3: documentation, in Python's private list
    ("https://8.8.8.8/x", (), None),
    ("http://hooks.example.com/x", (), "https://"),
    ("ftp://hooks.example.com/x", (), "https://"),
    ("https://user:pw@hooks.example.com/x", (), "user name"),
    ("https://hooks.example.com/x#frag", (), "fragment"),
    ("https://hooks.example.com/a b", (), "spaces"),
    ("https://hooks.example.com\\@evil.example/", (), "backslashes"),
    ("https://127.0.0.1/x", (), "loopback"),
    ("https://[::1]/x", (), "loopback"),
    ("https://[::ffff:127.0.0.1]/x", (), "loopback"),
    ("https://10.1.2.3/x", (), "private"),
    ("https://192.168.1.1/x", (), "private"),
    ("https://169.254.169.254/latest/meta-data", (), "link-local"),  # the cloud metadata address
    ("https://0.0.0.0/x", (), "unspecified"),
    ("https://224.0.0.1/x", (), "multicast"),
    ("https://100.64.0.1/x", (), "non-public"),  # carrier-grade NAT
    ("https://localhost/x", (), "localhost"),
    ("https://api.localhost/x", (), "localhost"),
    ("https://hooks.example.com:99999/x", (), "port"),
    ("https:///x", (), "no host"),
    ("https://10.1.2.3/x", ("10.0.0.0/8",), None),
    ("http://10.1.2.3/x", ("10.0.0.0/8",), None),  # plain http inside an allowed network
    ("http://10.1.2.3/x", ("192.168.0.0/16",), "private"),
    ("http://127.0.0.1:8080/x", ("127.0.0.0/8",), None),
    ("https://localhost/x", ("127.0.0.0/8",), None),
    ("https://" + "a" * 2000 + ".example/", (), "at most"),
])
def test_endpoint_url_rows(url: str, allowed: tuple[str, ...], refused: str | None) -> None:
    if refused is None:
        check(url, networks(allowed))
    else:
        with pytest.raises(EndpointUrlError, match=refused):
            check(url, networks(allowed))


@pytest.mark.parametrize(("url", "resolved", "allowed", "refused"), [
    ("https://hooks.example.com/", ["93.184.215.14"], (), None),
    # A name that resolves inside the network is refused as its address would be (rebinding, internal names).
    ("https://hooks.example.com/", ["10.0.0.5"], (), "private"),
    ("https://hooks.example.com/", ["93.184.215.14", "127.0.0.1"], (), "loopback"),  # one bad answer refuses all
    ("https://hooks.example.com/", [], (), "no address"),
    ("http://internal.example/", ["10.0.0.5"], ("10.0.0.0/8",), None),
    ("http://internal.example/", ["93.184.215.14"], ("10.0.0.0/8",), "plain http"),
])
def test_resolved_address_rows(url: str, resolved: list[str], allowed: tuple[str, ...], refused: str | None) -> None:
    target = check(url, networks(allowed))
    addresses = [ipaddress.ip_address(a) for a in resolved]
    if refused is None:
        assert sendable(target, addresses, networks(allowed)) == addresses[0]
    else:
        with pytest.raises(EndpointUrlError, match=refused):
            sendable(target, addresses, networks(allowed))


@pytest.mark.parametrize(("event", "data", "kind", "fields"), [
    ("room.held", {"repo": "acme/widgets", "scope": "acme/widgets", "holder": "dana", "reason": "incident",
                   "expires_at": "2026-03-22T05:00:00Z"},
     "freeze.started", {"org": "acme", "scope": "acme/widgets", "actor": "dana", "expires_at": "2026-03-22T05:00:00Z"}),
    ("room.held", {"repo": None, "scope": "acme", "holder": "dana", "reason": "incident"},
     "freeze.started", {"org": "acme", "scope": "acme", "repo": None}),
    ("room.held", {"repo": "acme/widgets", "scope": "acme/widgets#5", "number": 5, "holder": "dana", "reason": "x"},
     "hold.placed", {"number": 5, "scope": "acme/widgets#5"}),
    ("room.lifted", {"repo": "acme/widgets", "scope": "acme/widgets@release/*", "actor": "ed", "holders": ["dana"]},
     "freeze.ended", {"scope": "acme/widgets@release/*", "actor": "ed", "ended": "lifted"}),
    ("room.lifted", {"repo": "acme/widgets", "scope": "acme/widgets#5", "number": 5, "actor": "ed"},
     "hold.lifted", {"number": 5}),
    ("hold.held", {"repo": "acme/widgets", "number": 7, "actor": "alice", "target": "alice", "reason": "wait"},
     "hold.placed", {"holder": "alice", "reason": "wait", "scope": "acme/widgets#7", "source": "pull_request"}),
    ("hold.lifted", {"repo": "acme/widgets", "number": 7, "actor": "alice", "target": "alice", "message": "x"},
     "hold.lifted", {"actor": "alice"}),
    ("hold.lifted", {"repo": "acme/widgets", "number": 7, "actor": "bob", "message": "@bob approved"}, None, {}),
    ("hold.lifted", {"repo": "acme/widgets", "number": 7, "message": "review 9 by @bob dismissed"}, None, {}),
    ("room.exempted", {"repo": "acme/widgets", "number": 5, "by": "dana", "reason": "hotfix"},
     "exemption.granted", {"actor": "dana", "reason": "hotfix", "number": 5}),
    ("room.unexempted", {"repo": "acme/widgets", "number": 5, "actor": "ed", "by": "dana"},
     "exemption.ended", {"actor": "ed", "granted_by": "dana"}),
    ("tree.closed", {"repo": "acme/widgets", "scope": "acme/widgets@main", "reason": "ci/build failed"},
     "freeze.started", {"source": "tree", "reason": "ci/build failed"}),
    ("tree.opened", {"repo": "acme/widgets", "scope": "acme/widgets@main"}, "freeze.ended", {"source": "tree"}),
    ("window.started", {"repo": "acme/widgets", "scope": "acme/widgets", "name": "sunday", "branches": ["main"],
                        "ends_at": "2026-03-22T03:00:00Z"},
     "freeze.started", {"source": "window", "name": "sunday", "ends_at": "2026-03-22T03:00:00Z"}),
    ("window.ended", {"repo": "acme/widgets", "scope": "acme/widgets", "name": "sunday"},
     "freeze.ended", {"source": "window", "ended": "window ended"}),
    ("room.expired", {"repo": None, "scope": "acme"}, "freeze.ended", {"ended": "expired", "org": "acme"}),
    ("room.expired", {"repo": "acme/widgets", "scope": "acme/widgets#5", "number": 5}, "hold.lifted",
     {"ended": "expired"}),
    ("incident.recorded", {"repo": "acme/widgets", "number": 5, "merged_by": "eve", "kinds": ["held"], "reason": "x"},
     "incident.recorded", {"merged_by": "eve", "kinds": ["held"]}),
    ("gate.unenforced", {"repo": "acme/widgets", "branch": "main", "actor": "eve", "detail": "protection removed"},
     "gate.weakened", {"cause": "unenforced", "branch": "main", "actor": "eve"}),
    ("app.suspended", {"repo": "acme/widgets", "actor": "eve"}, "gate.weakened", {"cause": "app_suspended"}),
    ("status.forged", {"repo": "acme/widgets", "number": 5, "sha": "abc", "sender": "mallory", "state": "success"},
     "gate.weakened", {"cause": "status_forged", "sender": "mallory"}),
    ("gate.restored", {"repo": "acme/widgets", "branch": "main"}, None, {}),
    ("status.posted", {"repo": "acme/widgets", "number": 5}, None, {}),
    ("verdict.held", {"repo": "acme/widgets", "number": 5}, None, {}),
])
def test_the_table_rows(event: str, data: dict[str, object], kind: str | None, fields: dict[str, object]) -> None:
    found = translate(event, data)
    if kind is None:
        assert found is None
        return
    assert found is not None and found.type == kind and found.org == "acme"
    assert {k: found.data.get(k) for k in fields} == fields
    assert found.data["audit_event"] == event


def test_every_type_is_made_by_some_row_and_every_row_makes_a_known_type() -> None:
    samples = {"scope": "acme/widgets", "repo": "acme/widgets", "message": "x"}
    made = {found.type for event in TABLE if (found := translate(event, samples)) is not None}
    made |= {found.type for event in ("room.held", "room.lifted") if (found := translate(
        event, {**samples, "scope": "acme/widgets#1", "number": 1})) is not None}
    assert made == set(TYPES)


@pytest.mark.parametrize(("streak", "retry", "spread", "delay"), [
    (1, None, 0.5, 5), (2, None, 0.5, 300), (3, None, 0.5, 1800), (9, None, 0.5, 86400), (50, None, 0.5, 86400),
    (1, None, 0.0, 4.5), (1, None, 0.999999, 5.5), (1, 120, 0.5, 120), (2, 60, 0.5, 300), (1, 10 ** 9, 0.5, 86400),
])
def test_retry_delay_rows(streak: int, retry: float | None, spread: float, delay: float) -> None:
    assert retry_delay(streak, retry, spread) == pytest.approx(delay, rel=1e-4)


def test_the_schedule_is_the_specifications_example_and_gives_up_after_it() -> None:
    assert RETRY_SCHEDULE == (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
    assert GIVE_UP_AFTER.total_seconds() == 75 * 3600 + 35 * 60 + 5  # the table's last "time since start"


@pytest.mark.parametrize(("header", "seconds"), [("120", 120.0), ("0", 0.0), ("-5", 0.0), (None, None),
                                                 ("soon", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)])
def test_retry_after_rows(header: str | None, seconds: float | None) -> None:
    assert retry_after(header) == seconds
