"""What a ``REDIS_URL`` (or the hook's ``verdict_source``) names: one Redis, or a primary found through Sentinel.

Pure parsing, no I/O, so that the server's connection factory (`foundation.redis_conn`) and the agent
hook's raw-socket client read the same forms the same way (design §5)::

    redis://[user:password@]HOST[:PORT][/DB]          rediss:// for TLS, unix:///path/to.sock[?db=N]
    redis+sentinel://[user:password@]HOST:PORT[,HOST:PORT...]/SERVICE_NAME[/DB]
    rediss+sentinel://...                              TLS to the sentinels and to the data nodes

For Sentinel URLs the credentials are the data nodes' (the primary and its replicas); the sentinels are
asked without AUTH — put them on the private network next to Redis. Passwords may be percent-encoded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

DIRECT_SCHEMES = ("redis", "rediss", "unix")
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379
"""Sentinel's customary port, used when a sentinel address gives none."""

_SERVICE = re.compile(r"[A-Za-z0-9._-]{1,128}")
_HOST = re.compile(r"\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+")


class RedisUrlError(ValueError):
    """The URL is not one of the accepted forms; the message says what is wrong (never the password)."""


@dataclass(frozen=True)
class SentinelTarget:
    """A primary reached through Sentinel: ask ``sentinels`` for the address of ``service``."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    tls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)


def is_sentinel(url: str) -> bool:
    return url.split("://", 1)[0].lower() in SENTINEL_SCHEMES


def _port(text: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise RedisUrlError(f"{where}: port {text!r} is not a number from 1 to 65535")
    return int(text)


def _address(text: str) -> tuple[str, int]:
    host, port = text, ""
    if text.startswith("["):  # IPv6 literal: [::1]:26379
        close = text.find("]")
        host, rest = text[: close + 1], text[close + 1:]
        if rest and not rest.startswith(":"):
            raise RedisUrlError(f"sentinel address {text!r} is not HOST:PORT")
        port = rest[1:]
    elif ":" in text:
        host, port = text.rsplit(":", 1)
    if not _HOST.fullmatch(host):
        raise RedisUrlError(f"sentinel address {text!r} is not HOST:PORT")
    return host.strip("[]"), _port(port, f"sentinel {host}") if port else SENTINEL_PORT


def parse_sentinel(url: str) -> SentinelTarget:
    """Parse a ``redis+sentinel://`` or ``rediss+sentinel://`` URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in SENTINEL_SCHEMES:
        raise RedisUrlError("expected redis+sentinel:// or rediss+sentinel://")
    if "?" in rest or "#" in rest:
        raise RedisUrlError("sentinel URLs take no query or fragment")
    netloc, _, path = rest.partition("/")
    username = password = None
    if "@" in netloc:
        userinfo, netloc = netloc.rsplit("@", 1)
        user, has_password, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if has_password else None
        if not has_password:  # redis://SECRET@host is a password alone, as in redis-py
            username, password = None, unquote(user) or None
    if not netloc:
        raise RedisUrlError("no sentinel address (expected HOST:PORT[,HOST:PORT...])")
    sentinels = tuple(_address(part) for part in netloc.split(","))
    parts = path.split("/") if path else []
    if not parts or not parts[0]:
        raise RedisUrlError("no service name (expected .../SERVICE_NAME[/DB])")
    if not _SERVICE.fullmatch(parts[0]) or len(parts) > 2:
        raise RedisUrlError(f"path {path!r} is not SERVICE_NAME[/DB]")
    db = 0
    if len(parts) == 2 and parts[1] != "":
        if not parts[1].isdigit():
            raise RedisUrlError(f"database {parts[1]!r} is not a number")
        db = int(parts[1])
    return SentinelTarget(sentinels, parts[0], db, scheme.lower().startswith("rediss"), username, password)


def check(url: str) -> None:
    """Raise `RedisUrlError` unless ``url`` is one of the accepted forms."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in SENTINEL_SCHEMES:
        parse_sentinel(url)
    elif scheme not in DIRECT_SCHEMES:
        raise RedisUrlError("expected redis://, rediss://, unix://, redis+sentinel:// or rediss+sentinel://")
    elif scheme != "unix" and not url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]:
        raise RedisUrlError("no host")
