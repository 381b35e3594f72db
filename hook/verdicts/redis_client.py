"""A minimal Redis client (RESP2 over one socket) for the agent guard, its fold and its ACL set-up.

Why not redis-py: ``import redis`` costs about 250 ms (it imports asyncio), ten times the guard's whole
budget (design §7). The guard needs four things of Redis: ``AUTH``, ``SELECT``, a few reads and one
``XADD``. This client writes every command of a lookup in one ``sendall`` and then reads the replies, so
a verdict costs one round trip after the connection is up.

Every socket operation gets the time left before one deadline, so the budget covers connecting,
authenticating and reading alike; `TimeoutError` when it runs out. (Name resolution is the resolver's:
give the guard an address or an ``/etc/hosts`` name.) Plain ``redis://`` uses the `_socket` C module
directly: the `socket` wrapper costs 9 ms of imports (enum) for nothing the guard uses.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Protocol

    class _Socket(Protocol):
        def settimeout(self, value: float | None, /) -> None: ...
        def sendall(self, data: bytes, /) -> None: ...
        def recv(self, size: int, /) -> bytes: ...
        def close(self) -> None: ...


DEFAULT_PORT = 6379


class RedisError(Exception):
    """A protocol error, or an error reply where the caller needed success (e.g. a failed AUTH)."""


class ReplyError:
    """An error reply (``-ERR ...``) inside a pipeline: returned in place, not raised."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"ReplyError({self.message!r})"


class RedisURL:
    __slots__ = ("ca_file", "db", "host", "password", "port", "tls", "username")

    def __init__(
        self,
        host: str,
        port: int = DEFAULT_PORT,
        *,
        username: str | None = None,
        password: str | None = None,
        db: int = 0,
        tls: bool = False,
        ca_file: str | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.db = db
        self.tls = tls
        self.ca_file = ca_file

    def __repr__(self) -> str:
        # Never the password.
        return f"RedisURL({self.host!r}, {self.port}, username={self.username!r}, db={self.db})"


def unquote(text: str) -> str:
    """Percent-decoding of a URL part (user, password, a query value); `hook.verdicts.sentinel` reads
    its URLs with it too."""
    if "%" not in text:
        return text
    out = bytearray()
    i = 0
    raw = text.encode("utf-8")
    while i < len(raw):
        if raw[i] == 0x25 and i + 2 < len(raw):
            try:
                out.append(int(raw[i + 1 : i + 3], 16))
                i += 3
                continue
            except ValueError:
                pass
        out.append(raw[i])
        i += 1
    return out.decode("utf-8", "replace")


def parse_redis_url(url: str) -> RedisURL:
    """``redis[s]://[[user]:password@]host[:port][/db][?db=N&ssl_ca_certs=PATH]``, as redis-py reads it."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("redis", "rediss"):
        raise RedisError("not a redis:// or rediss:// URL")
    rest, _, query = rest.partition("?")
    rest, _, _fragment = rest.partition("#")
    authority, _, path = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    if not at:
        userinfo, hostport = "", authority
    username: str | None = None
    password: str | None = None
    if userinfo:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    if hostport.startswith("["):
        host, _, tail = hostport[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = hostport.partition(":")
    params = dict(part.partition("=")[::2] for part in query.split("&") if part)
    db_text = path.strip("/") or params.get("db", "0")
    try:
        port = int(port_text) if port_text else DEFAULT_PORT
        db = int(db_text or "0")
    except ValueError:
        raise RedisError("bad port or database number in the Redis URL") from None
    if not host:
        raise RedisError("no host in the Redis URL")
    ca_file = params.get("ssl_ca_certs")
    return RedisURL(
        host,
        port,
        username=username,
        password=password,
        db=db,
        tls=scheme == "rediss",
        ca_file=unquote(ca_file) if ca_file else None,
    )


def encode(args: Sequence[str | bytes | int]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode("utf-8")
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class Connection:
    """One connection, opened on the first `pipeline` call; ``AUTH``/``SELECT`` ride in that first write."""

    def __init__(self, url: RedisURL, *, timeout_s: float) -> None:
        self.url = url
        self.deadline = time.monotonic() + timeout_s
        self._sock: _Socket | None = None
        self._buffer = b""

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("Redis did not answer within the time budget")
        return left

    def _open(self) -> _Socket:
        url = self.url
        if url.tls:
            return self._open_tls()
        import _socket

        error: Exception = RedisError(f"cannot resolve {url.host}")
        # A str host goes through the IDNA codec, which imports `re` and `unicodedata` (7 ms); an ASCII
        # name or address needs no IDNA.
        host: str | bytes = url.host.encode("ascii") if url.host.isascii() else url.host
        for family, kind, proto, _name, address in _socket.getaddrinfo(
            host, url.port, 0, _socket.SOCK_STREAM
        ):
            sock = _socket.socket(family, kind, proto)
            try:
                sock.settimeout(self._left())
                sock.connect(address)
                sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
        raise error

    def _open_tls(self) -> _Socket:
        import socket
        import ssl

        context = ssl.create_default_context(cafile=self.url.ca_file)
        raw = socket.create_connection((self.url.host, self.url.port), timeout=self._left())
        try:
            raw.settimeout(self._left())
            return context.wrap_socket(raw, server_hostname=self.url.host)
        except BaseException:
            raw.close()
            raise

    def _handshake(self) -> list[list[str | bytes | int]]:
        url = self.url
        commands: list[list[str | bytes | int]] = []
        if url.password is not None:
            commands.append(["AUTH", url.username, url.password] if url.username else ["AUTH", url.password])
        if url.db:
            commands.append(["SELECT", url.db])
        return commands

    def pipeline(self, commands: Sequence[Sequence[str | bytes | int]]) -> list[object]:
        """Send ``commands`` in one write and return their replies; error replies come back as `ReplyError`."""
        prefix: list[list[str | bytes | int]] = []
        if self._sock is None:
            self._sock = self._open()
            prefix = self._handshake()
        sock = self._sock
        sock.settimeout(self._left())
        sock.sendall(b"".join(encode(c) for c in [*prefix, *commands]))
        for command in prefix:
            reply = self._read_reply()
            if isinstance(reply, ReplyError):
                raise RedisError(f"{command[0]!r} refused: {reply.message}")
        return [self._read_reply() for _ in commands]

    def call(self, *args: str | bytes | int) -> object:
        return self.pipeline([args])[0]

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading replies -------------------------------------------------------------------------

    def _fill(self) -> None:
        assert self._sock is not None
        self._sock.settimeout(self._left())
        chunk = self._sock.recv(65536)
        if not chunk:
            raise RedisError("Redis closed the connection")
        self._buffer += chunk

    def _line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
                return line
            self._fill()

    def _exact(self, size: int) -> bytes:
        while len(self._buffer) < size + 2:
            self._fill()
        data, self._buffer = self._buffer[:size], self._buffer[size + 2 :]
        return data

    def _read_reply(self) -> object:
        line = self._line()
        kind, body = line[:1], line[1:]
        try:
            if kind == b"+":
                return body
            if kind == b"-":
                return ReplyError(body.decode("utf-8", "replace"))
            if kind == b":":
                return int(body)
            if kind == b"$":
                size = int(body)
                return None if size < 0 else self._exact(size)
            if kind == b"*":
                count = int(body)
                return None if count < 0 else [self._read_reply() for _ in range(count)]
        except ValueError:
            pass
        raise RedisError(f"unexpected reply from Redis: {line[:40]!r}")


def connect(url: str, *, timeout_s: float) -> Connection:
    return Connection(parse_redis_url(url), timeout_s=timeout_s)
