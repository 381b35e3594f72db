"""A ``redis+sentinel://`` verdict source for the guard's raw-socket client (design §5, §6).

``redis+sentinel://[user:password@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]`` (``rediss+sentinel://``: TLS to
the sentinels and the data nodes), read as the server reads ``REDIS_URL`` (`core.redis_url`, not
imported: ``re``, ``dataclasses`` and ``urllib`` cost more than the guard's budget; a test pins the two
parsers together). The credentials and database are the data nodes'; sentinels are asked without AUTH.

The guard asks the sentinels in the listed order ``SENTINEL get-master-addr-by-name SERVICE`` and
reads the verdict from the first primary one names. A sentinel's answer can be stale during a
failover (it still names the old primary, now restarted as a replica), so the first write to the
primary carries ``ROLE`` ahead of the lookup (no extra round trip): a node that says it is not the
master is skipped for the next sentinel's answer. A sentinel that does not answer gets at most half
the time left when others remain, so one black-holed sentinel cannot use the whole budget.
"""

from __future__ import annotations

import time

from hook.verdicts.redis_client import Connection, RedisError, RedisURL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

SCHEMES = ("redis+sentinel", "rediss+sentinel")
SENTINEL_PORT = 26379
"""Sentinel's customary port, when an address gives none (as `core.redis_url`)."""
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class SentinelURL:
    __slots__ = ("db", "password", "sentinels", "service", "tls", "username")

    def __init__(self, sentinels: tuple[tuple[str, int], ...], service: str, *, db: int = 0, tls: bool = False,
                 username: str | None = None, password: str | None = None) -> None:
        self.sentinels = sentinels
        self.service = service
        self.db = db
        self.tls = tls
        self.username = username
        self.password = password

    def __repr__(self) -> str:
        # Never the password.
        return f"SentinelURL({self.sentinels!r}, {self.service!r}, db={self.db}, tls={self.tls})"


def is_sentinel(url: str) -> bool:
    return url.partition("://")[0].lower() in SCHEMES


def _port(text: str, where: str) -> int:
    if not text.isdigit() or not text.isascii() or not 0 < int(text) < 65536:
        raise RedisError(f"{where}: port {text!r} is not a number from 1 to 65535")
    return int(text)


def _address(text: str) -> tuple[str, int]:
    host, port = text, ""
    if text.startswith("["):  # [::1]:26379
        close = text.find("]")
        host, rest = text[: close + 1], text[close + 1 :]
        if close < 0 or (rest and not rest.startswith(":")) or not all(c in "0123456789abcdefABCDEF:." for c in
                                                                         host[1:-1]) or len(host) < 3:
            raise RedisError(f"sentinel address {text!r} is not HOST:PORT")
        port = rest[1:]
        host = host[1:-1]
    else:
        if ":" in text:
            host, _, port = text.rpartition(":")
        if not host or not all(c in _NAME_CHARS for c in host):
            raise RedisError(f"sentinel address {text!r} is not HOST:PORT")
    return host, _port(port, f"sentinel {host}") if port else SENTINEL_PORT


def parse_sentinel_url(url: str) -> SentinelURL:
    from hook.verdicts.redis_client import unquote

    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise RedisError("expected redis+sentinel:// or rediss+sentinel://")
    if "?" in rest or "#" in rest:
        raise RedisError("sentinel URLs take no query or fragment")
    netloc, _, path = rest.partition("/")
    username = password = None
    if "@" in netloc:
        userinfo, _, netloc = netloc.rpartition("@")
        user, colon, secret = userinfo.partition(":")
        if colon:
            username, password = unquote(user) or None, unquote(secret)
        else:  # a password alone, as the server reads it
            password = unquote(user) or None
    if not netloc:
        raise RedisError("no sentinel address (expected HOST:PORT[,HOST:PORT...])")
    sentinels = tuple(_address(part) for part in netloc.split(","))
    parts = path.split("/") if path else []
    if not parts or not parts[0]:
        raise RedisError("no service name (expected .../SERVICE[/DB])")
    if len(parts) > 2 or len(parts[0]) > 128 or not all(c in _NAME_CHARS for c in parts[0]):
        raise RedisError(f"path {path!r} is not SERVICE[/DB]")
    db = 0
    if len(parts) == 2 and parts[1]:
        if not parts[1].isdigit() or not parts[1].isascii():
            raise RedisError(f"database {parts[1]!r} is not a number")
        db = int(parts[1])
    return SentinelURL(sentinels, parts[0], db=db, tls=scheme.lower() == "rediss+sentinel",
                       username=username, password=password)


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class SentinelConnection(Connection):
    """A `Connection` to the primary the sentinels name, found on the first `pipeline` call."""

    def __init__(self, target: SentinelURL, *, timeout_s: float) -> None:
        super().__init__(RedisURL("", 0), timeout_s=timeout_s)
        self.target = target

    def _primaries(self, problems: list[str]) -> Iterator[tuple[str, int]]:
        target = self.target
        tried: set[tuple[str, int]] = set()
        for index, (host, port) in enumerate(target.sentinels):
            left = self._left()
            share = left if index == len(target.sentinels) - 1 else left / 2
            asking = Connection(RedisURL(host, port, tls=target.tls), timeout_s=share)
            try:
                reply = asking.call("SENTINEL", "get-master-addr-by-name", target.service)
            except (OSError, RedisError) as exc:
                problems.append(f"sentinel {host}:{port}: {exc or type(exc).__name__}")
                continue
            finally:
                asking.close()
            if not (isinstance(reply, list) and len(reply) == 2 and all(isinstance(x, bytes) for x in reply)):
                why = getattr(reply, "message", None) or f"knows no primary named {target.service!r}"
                problems.append(f"sentinel {host}:{port} {why}")
                continue
            try:
                found = (_text(reply[0]), int(reply[1]))
            except ValueError:
                problems.append(f"sentinel {host}:{port} gave a bad port {reply[1]!r}")
                continue
            if found not in tried:
                tried.add(found)
                yield found

    def pipeline(self, commands: Sequence[Sequence[str | bytes | int]]) -> list[object]:
        if self._sock is not None:
            return super().pipeline(commands)
        target = self.target
        problems: list[str] = []
        for host, port in self._primaries(problems):
            self.url = RedisURL(host, port, username=target.username, password=target.password, db=target.db,
                                tls=target.tls)
            try:
                replies = super().pipeline([["ROLE"], *commands])
            except TimeoutError:
                self.close()
                raise
            except (OSError, RedisError) as exc:
                self.close()
                problems.append(f"primary {host}:{port}: {exc or type(exc).__name__}")
                continue
            role = replies[0]
            if isinstance(role, list) and role and role[0] != b"master":
                # A stale answer: that node is no longer the primary. (A ROLE the ACL refuses is no answer.)
                self.close()
                problems.append(f"{host}:{port} named by a sentinel is a {_text(role[0])}, not the primary")
                continue
            return replies[1:]
        if time.monotonic() >= self.deadline:
            raise TimeoutError("Redis did not answer within the time budget")
        raise RedisError(f"no primary for {target.service!r} through Sentinel ({'; '.join(problems)})")
