"""One signed POST of one message to one endpoint, to an address checked first.

The name is resolved here and every address it gives is checked (`core.outgoing_urls.sendable`); the
connection then goes to that very address, with the name kept for the ``Host`` header, TLS's SNI and the
certificate check — so a name that answers differently a moment later (DNS rebinding) cannot steer the
request inside the operator's network. Redirects are not followed (the specification counts a 3xx as a
failure, and following one would leave the checked address).

Signed with the Standard Webhooks reference library (`standardwebhooks`): ``webhook-id`` the message id,
``webhook-timestamp`` this attempt, ``webhook-signature`` ``v1,<base64 HMAC-SHA256>``.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import urllib3
from standardwebhooks.webhooks import Webhook

from core.outgoing_urls import Address, EndpointUrlError, Network, Target, check, literal, sendable

TIMEOUT = 15.0
"""Seconds a receiver has to answer (the specification recommends 15 to 30); a hung one holds one job
this long at most, never a status write."""
CONNECT_TIMEOUT = 5.0
RESPONSE_KEPT = 500
"""Characters of the receiver's answer kept in the delivery log."""
USER_AGENT = "merge-hold-webhooks/1"


@dataclass(frozen=True)
class Result:
    ok: bool
    status: int | None = None
    error: str | None = None
    retry_after: float | None = None
    response: str = ""
    ms: int = 0

    @property
    def gone(self) -> bool:
        """410 Gone: the receiver wants no more (the specification: disable the endpoint)."""
        return self.status == 410


def resolve(target: Target) -> list[Address]:
    found = literal(target.host)
    if found is not None:
        return [found]
    seen: list[Address] = []
    for *_rest, sockaddr in socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM):
        address = literal(str(sockaddr[0]).split("%", 1)[0])
        if address is not None and address not in seen:
            seen.append(address)
    return seen


def signed_headers(message_id: str, body: str, secret: str, moment: datetime) -> dict[str, str]:
    """The three Standard Webhooks headers for one attempt at ``moment`` (whole seconds, UTC)."""
    return {"webhook-id": message_id, "webhook-timestamp": str(int(moment.timestamp())),
            "webhook-signature": Webhook(secret).sign(msg_id=message_id, timestamp=moment, data=body)}


def retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max((parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None


def _pool(target: Target, address: Address) -> urllib3.HTTPConnectionPool:
    timeout = urllib3.Timeout(connect=CONNECT_TIMEOUT, read=TIMEOUT)
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(str(address), target.port, timeout=timeout, retries=False, maxsize=1,
                                           server_hostname=target.host, assert_hostname=target.host,
                                           cert_reqs="CERT_REQUIRED")
    return urllib3.HTTPConnectionPool(str(address), target.port, timeout=timeout, retries=False, maxsize=1)


def post(url: str, allowed: tuple[Network, ...], message_id: str, body: str, secret: str) -> Result:
    """Send the message once; what came of it (never raises for the endpoint's faults)."""
    started = time.monotonic()
    try:
        target = check(url, allowed)
        address = sendable(target, resolve(target), allowed)
    except EndpointUrlError as exc:
        return Result(False, error=f"refused: {exc}")
    except OSError as exc:
        return Result(False, error=f"cannot resolve the endpoint's host: {exc.strerror or exc}")
    moment = datetime.fromtimestamp(int(time.time()), UTC)
    headers = {"Host": target.host_header, "Content-Type": "application/json", "User-Agent": USER_AGENT,
               **signed_headers(message_id, body, secret, moment)}
    pool = _pool(target, address)
    try:
        response = pool.urlopen("POST", target.path, body=body.encode(), headers=headers, redirect=False,
                                retries=False, assert_same_host=False, preload_content=False)
        try:
            answer = response.read(RESPONSE_KEPT * 4, decode_content=False) or b""
        finally:
            response.release_conn()
    except urllib3.exceptions.HTTPError as exc:
        kind = "timed out" if isinstance(exc, urllib3.exceptions.TimeoutError) else "connection failed"
        return Result(False, error=f"{kind}: {type(exc).__name__}", ms=_ms(started))
    finally:
        pool.close()
    text = answer.decode("utf-8", "replace")[:RESPONSE_KEPT]
    ok = 200 <= response.status < 300
    return Result(ok, response.status, None if ok else f"HTTP {response.status}",
                  retry_after(response.headers.get("Retry-After")), text, _ms(started))


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
