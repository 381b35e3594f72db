"""Which URLs an org's outgoing webhooks may be sent to, pure: no server-side request forgery.

An endpoint is a URL an org admin typed; the workers POST to it from inside the operator's network. So,
as for a chat ``response_url`` (`core.chat_request.unsafe_url_characters`, the same character rule), the
URL is checked before anything is sent, and here also where it leads:

- ``https://`` only, no user name or password in it, no fragment, at most `MAX_URL` characters;
- no loopback, private, link-local, shared, multicast, reserved or unspecified address — as an IP literal
  when registered, and as every address the name resolves to when sent (the worker connects to the
  address it checked, so a name that changes its answer in between gains nothing: `workers.outgoing.post`);
- ``localhost`` and its subdomains refused by name;
- unless the operator allows those networks (``MERGE_HOLD_WEBHOOK_ALLOW_NETWORKS``, CIDRs): then an
  address inside them is accepted, and so is plain ``http://`` to it (an internal receiver without TLS).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.chat_request import unsafe_url_characters

MAX_URL = 2000
"""Longer URLs are not endpoints anyone means to register."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class EndpointUrlError(ValueError):
    """An endpoint URL merge-hold will not send to; the message says why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    """Lower-cased, without brackets for IPv6."""
    port: int
    path: str
    """Path and query, as sent on the request line."""

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == default else f"{host}:{self.port}"


def networks(texts: Iterable[str]) -> tuple[Network, ...]:
    """CIDRs (``10.20.0.0/16``, ``127.0.0.1``) -> networks; `ValueError` naming a bad one."""
    found = []
    for text in texts:
        try:
            found.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP network (CIDR such as 10.0.0.0/8)") from None
    return tuple(found)


def parse(url: str) -> Target:
    """The URL's parts, or `EndpointUrlError` when it is no URL we send to (before any address check)."""
    if not url or len(url) > MAX_URL:
        raise EndpointUrlError(f"an endpoint is a URL of at most {MAX_URL} characters")
    if unsafe_url_characters(url):
        raise EndpointUrlError("the URL contains spaces, control characters or backslashes")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise EndpointUrlError("an endpoint URL starts with https://")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise EndpointUrlError("an endpoint URL carries no user name or password (the signature authenticates)")
    if parts.fragment:
        raise EndpointUrlError("an endpoint URL has no #fragment")
    try:
        port = parts.port
    except ValueError:
        raise EndpointUrlError("the URL's port is not a number from 1 to 65535") from None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise EndpointUrlError("the URL names no host")
    path = parts.path or "/"
    return Target(scheme, host, port or (443 if scheme == "https" else 80),
                  path + (f"?{parts.query}" if parts.query else ""))


def literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def address_refused(address: Address, allowed: tuple[Network, ...]) -> str | None:
    """Why merge-hold will not send to ``address`` (None: it will)."""
    plain = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped else address
    if any(plain in net for net in allowed if net.version == plain.version):
        return None
    for test, what in ((plain.is_loopback, "a loopback"), (plain.is_unspecified, "an unspecified"),
                       (plain.is_link_local, "a link-local"), (plain.is_multicast, "a multicast"),
                       (plain.is_private, "a private"), (plain.is_reserved, "a reserved"),
                       (not plain.is_global, "a non-public")):
        if test:
            return (f"{address} is {what} address; merge-hold sends webhooks only to public addresses "
                    "unless the operator allows the network (MERGE_HOLD_WEBHOOK_ALLOW_NETWORKS)")
    return None


def allowed_network(address: Address, allowed: tuple[Network, ...]) -> bool:
    plain = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped else address
    return any(plain in net for net in allowed if net.version == plain.version)


def check(url: str, allowed: tuple[Network, ...] = ()) -> Target:
    """`parse`, then what can be told without resolving the name: a literal address, a ``localhost`` name,
    plain http to anything but an allowed literal address. The worker checks resolved addresses again."""
    target = parse(url)
    address = literal(target.host)
    if address is not None:
        refused = address_refused(address, allowed)
        if refused is not None:
            raise EndpointUrlError(refused)
    elif (target.host == "localhost" or target.host.endswith(".localhost")) and not any(
            net.version == 4 and ipaddress.ip_address("127.0.0.1") in net for net in allowed):
        raise EndpointUrlError("localhost is this server; merge-hold sends webhooks only to public addresses "
                               "unless the operator allows the network (MERGE_HOLD_WEBHOOK_ALLOW_NETWORKS)")
    if target.scheme == "http" and not (allowed and (address is None or allowed_network(address, allowed))):
        raise EndpointUrlError("an endpoint URL starts with https:// (plain http only to a network the operator "
                               "allows)")
    return target


def sendable(target: Target, addresses: Iterable[Address], allowed: tuple[Network, ...]) -> Address:
    """The address to connect to among those the name resolved to: every one must pass (one bad answer
    refuses all: the resolver's order must not decide), and plain http needs an allowed network."""
    found = list(addresses)
    if not found:
        raise EndpointUrlError(f"{target.host} resolves to no address")
    for address in found:
        refused = address_refused(address, allowed)
        if refused is not None:
            raise EndpointUrlError(f"{target.host} resolves to {address}: {refused}")
        if target.scheme == "http" and not allowed_network(address, allowed):
            raise EndpointUrlError(f"plain http to {address} ({target.host}), outside the networks the operator allows")
    return found[0]
