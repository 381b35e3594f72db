"""Credentials and budgets: App JWTs, installation tokens, primary and secondary rate limits."""

from __future__ import annotations

import math
import secrets
import string
from collections import deque
from functools import cache
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from tests.emulator.identity import APP_ID, private_key_pem
from tests.emulator.state import Bucket, Token
from tests.emulator.wire import Principal
from tests.emulator.world import World

JWT_MAX_LIFETIME = 600
"""GitHub refuses App JWTs whose `exp` is more than 10 minutes out."""
CLOCK_SKEW = 60
"""Leeway for clock drift, the margin GitHub's docs suggest backdating `iat` by."""
TOKEN_LIFETIME = 3600
ANONYMOUS_LIMIT = 60
WINDOW = 3600
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
_TOKEN_ALPHABET = string.ascii_letters + string.digits

BAD_JWT = "A JSON web token could not be decoded"
JWT_EXPIRED = ("'Expiration time' claim ('exp') must be a numeric value representing the future time at "
               "which the assertion expires")
JWT_TOO_LONG = "'Expiration time' claim ('exp') is too far in the future"
JWT_BAD_IAT = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
JWT_BAD_ISS = "'Issuer' claim ('iss') must be an Integer"
NO_APP = "Integration not found"


@cache
def _public_key() -> RSAPublicKey:
    key = load_pem_private_key(private_key_pem().encode(), password=None)
    public = key.public_key()
    assert isinstance(public, RSAPublicKey)
    return public


def identify(world: World, authorization: str | None) -> Principal:
    """Who the Authorization header says is calling; `error` set when GitHub would answer 401."""
    if not authorization:
        return Principal("none")
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() not in ("token", "bearer") or not credential:
        return Principal("none", error="Bad credentials")
    if credential.count(".") == 2:
        return Principal("jwt", error=jwt_error(world, credential))
    login = world.user_tokens.get(credential)
    if login is not None:
        return Principal("user", login=login)
    token = world.tokens.get(credential)
    if token is None or token.expires_at <= world.clock():
        return Principal("token", error="Bad credentials")
    return Principal("token", token.installation_id, token.repos)


def jwt_error(world: World, credential: str) -> str | None:
    """None when the JWT is one GitHub would accept for this App, else GitHub's complaint."""
    try:
        claims: dict[str, Any] = jwt.decode(
            credential, _public_key(), algorithms=["RS256"],
            options={"verify_exp": False, "verify_iat": False, "verify_nbf": False,
                     "require": ["iat", "exp", "iss"]})
    except jwt.PyJWTError:
        return BAD_JWT
    now = world.clock()
    iat, exp, iss = claims["iat"], claims["exp"], claims["iss"]
    if not isinstance(iat, int) or iat > now + CLOCK_SKEW:
        return JWT_BAD_IAT
    if not isinstance(exp, int) or exp <= now - CLOCK_SKEW:
        return JWT_EXPIRED
    # PyGithub backdates iat by 60 s and may ask for a 600 s expiry: 660 s apart, which GitHub accepts
    # because it measures `exp` against its own clock; the skew allowance keeps that working here.
    if exp - iat > JWT_MAX_LIFETIME + CLOCK_SKEW or exp > now + JWT_MAX_LIFETIME + CLOCK_SKEW:
        return JWT_TOO_LONG
    if not str(iss).isdigit():
        return JWT_BAD_ISS
    return None if int(iss) == APP_ID else NO_APP


def mint(world: World, installation_id: int, repos: frozenset[str] | None) -> Token:
    token = Token("ghs_" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(36)), installation_id,
                  world.clock() + TOKEN_LIFETIME, repos)
    world.tokens[token.token] = token
    world.mints[installation_id] = world.mints.get(installation_id, 0) + 1
    return token


def bucket(world: World, key: str) -> Bucket:
    """The principal's current window, opened afresh an hour after the previous one began."""
    now = world.clock()
    found = world.buckets.get(key)
    if found is None or now >= found.reset:
        limit = ANONYMOUS_LIMIT if key == "anonymous" else world.rate_limits.get(key, world.rate_limit_per_hour)
        found = world.buckets[key] = Bucket(limit, limit, float(math.ceil(now + WINDOW)))
    return found


def charge(world: World, key: str) -> bool:
    """Spend one request of the primary budget; False when none is left."""
    current = bucket(world, key)
    if current.remaining <= 0:
        return False
    current.remaining -= 1
    return True


def rate_headers(world: World, key: str) -> dict[str, str]:
    current = bucket(world, key)
    return {"x-ratelimit-limit": str(current.limit), "x-ratelimit-remaining": str(current.remaining),
            "x-ratelimit-used": str(current.limit - current.remaining),
            "x-ratelimit-reset": str(int(current.reset)), "x-ratelimit-resource": "core"}


def pace_write(world: World, method: str, path: str, installation_id: int | None = None) -> int | None:
    """Seconds to wait when this content-creating request breaks a secondary write limit of its
    installation (``writes_per_minute`` in any 60 s, ``writes_per_hour`` in any hour), else None (and
    the write is counted). Refusals are counted too (``refused_writes``): a well-paced client has none."""
    per_minute, per_hour = world.write_limits.get(installation_id, (world.writes_per_minute, world.writes_per_hour))
    if (per_minute is None and per_hour is None) or method not in WRITE_METHODS or path.startswith("/app/"):
        return None
    now = world.clock()
    recent = world.recent_writes.setdefault(installation_id, deque())
    while recent and recent[0] <= now - WINDOW:
        recent.popleft()
    waits = []
    if per_minute is not None:
        minute = [t for t in recent if t > now - 60]
        if len(minute) >= per_minute:
            waits.append(minute[len(minute) - per_minute] + 60 - now)
    if per_hour is not None and len(recent) >= per_hour:
        waits.append(recent[len(recent) - per_hour] + WINDOW - now)
    if waits:
        world.refused_writes += 1
        world.refused_by[installation_id] = world.refused_by.get(installation_id, 0) + 1
        return max(1, math.ceil(max(waits)))
    recent.append(now)
    return None
