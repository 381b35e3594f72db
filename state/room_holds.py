"""Room holds and exemptions as stored in Redis: placed, found, lifted, audited. No GitHub, no queue.

Shared by the chat job (`workers.chat.rooms`) and the web tier's API and dashboard, which place and lift
room holds themselves and then queue `core.chat_request.REPUBLISH_JOB`: one way to record a room
hold, whatever door it came in by. A hold's id is ``room:{holder id}:{scope}`` (one hold per holder
and scope); scopes never contain ``:`` (git forbids it in branch names), so the id's last field is
its scope.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime, timedelta

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import WatchError

from core import keys
from core.holds import Exemption, Hold, Source
from core.scopes import scope_repo
from state import audit, store


def _pr(scope: str) -> dict[str, int]:
    """``number`` for a PR scope: the PR's page shows history entries that name it."""
    number = scope.partition("#")[2]
    return {"number": int(number)} if number.isdigit() else {}


def scope_key(scope: str) -> str:
    repo = scope_repo(scope)
    return keys.room_holds(repo) if repo else keys.org_room_holds(scope)


def place_hold(redis: Redis, scope: str, *, holder: str, holder_id: str, reason: str, origin: str,
               now: datetime, duration: timedelta | None = None, paths: tuple[str, ...] = ()) -> Hold:
    """Record (or renew) ``holder``'s room hold on ``scope``. ``holder_id`` is the stable chat identity
    (``slack:T123:U456``): one hold per holder and scope (a new one replaces it, ``paths`` included).
    ``paths`` (checked by the caller, `core.paths.check`) scopes it to PRs changing matching files."""
    hold = Hold(id=f"room:{holder_id}:{scope}", source=Source.ROOM, scope=scope, holder=holder, reason=reason,
                created_at=now, expires_at=now + duration if duration else None, origin=origin, paths=paths)
    redis.hset(scope_key(scope), hold.id, json.dumps(hold.to_dict()))
    audit.record(redis, scope_repo(scope), "room.held", scope=scope, holder=holder, holder_id=holder_id,
                reason=reason, origin=origin, expires_at=hold.to_dict()["expires_at"], **_pr(scope),
                **({"paths": list(paths)} if paths else {}))
    return hold


def room_holds_on(redis: Redis, scope: str) -> list[Hold]:
    """The room holds placed on exactly ``scope`` (not those that reach it from a wider one)."""
    return [h for h in holds_in(redis, scope_key(scope)) if h.scope == scope and h.source is Source.ROOM]


def lift_holds(redis: Redis, scope: str, *, actor: str, origin: str,
               only: Collection[str] | None = None) -> list[Hold]:
    """Lift the room holds on exactly this scope: those whose ids are in ``only`` (the caller judged who may
    lift which, `core.hold_rights.may_lift`), or all of them."""
    key = scope_key(scope)
    lifted = [h for h in room_holds_on(redis, scope) if only is None or h.id in only]
    if lifted:
        redis.hdel(key, *(h.id for h in lifted))
        audit.record(redis, scope_repo(scope), "room.lifted", scope=scope, actor=actor, origin=origin,
                    holders=[h.holder for h in lifted], **_pr(scope))
    return lifted


def place_exemption(redis: Redis, pr_scope: str, *, by: str, reason: str, origin: str, now: datetime,
                    head_sha: str | None, duration: timedelta | None = None, sticky: bool = False,
                    channel: str = "") -> Exemption:
    """Record (or replace) the PR's exemption. It covers ``head_sha`` (the head the granter saw) unless
    ``sticky``; ``channel`` (``slack:T123:C456``) is the chat room told when a push ends it. Who may
    grant it the caller checked (`core.exemptions.refusal`)."""
    repo, _, number = pr_scope.partition("#")
    exemption = Exemption(pr_scope=pr_scope, by=by, reason=reason, created_at=now,
                          expires_at=now + duration if duration else None, origin=origin, head_sha=head_sha,
                          sticky=sticky, channel=channel)
    redis.hset(keys.exemptions(repo), number, json.dumps(exemption.to_dict()))
    audit.record(redis, repo, "room.exempted", number=int(number), by=by, reason=reason, origin=origin,
                expires_at=exemption.to_dict()["expires_at"], head_sha=head_sha, sticky=sticky)
    return exemption


def lift_exemption(redis: Redis, pr_scope: str, *, actor: str, origin: str) -> Exemption | None:
    repo, _, number = pr_scope.partition("#")
    found = store.exemption(redis, repo, int(number))
    if found is not None:
        redis.hdel(keys.exemptions(repo), number)
        audit.record(redis, repo, "room.unexempted", number=int(number), actor=actor, origin=origin,
                    by=found.by, reason=found.reason)
    return found


def end_exemption(redis: Redis, repo: str, number: int, ended: Exemption, **why: object) -> bool:
    """Remove the PR's exemption if it is still ``ended`` (not replaced meanwhile by a new grant), and
    audit ``exemption.ended`` with ``why``; False when another worker or a new grant got there first."""
    field = str(number)
    with redis.pipeline() as pipe:
        pipe.watch(keys.exemptions(repo))  # type: ignore[no-untyped-call]
        raw = pipe.hget(keys.exemptions(repo), field)
        if raw is None or Exemption.from_dict(json.loads(raw)) != ended:
            pipe.unwatch()
            return False
        pipe.multi()
        pipe.hdel(keys.exemptions(repo), field)
        try:
            pipe.execute()
        except WatchError:
            return False
    audit.record(redis, repo, "exemption.ended", number=number, by=ended.by, reason=ended.reason,
                origin=ended.origin, granted_head=ended.head_sha, **why)
    return True


def holds_in(redis: Redis, key: str) -> list[Hold]:
    return [Hold.from_dict(json.loads(v)) for v in redis.hvals(key)]


def scoped_holds(redis: Redis, repo: str) -> list[Hold]:
    """Room and freeze holds on the repo (any scope within it) and on its org: what a verdict reads."""
    owner = repo.split("/", 1)[0]
    with redis.pipeline(transaction=False) as pipe:
        pipe.hvals(keys.room_holds(repo))
        pipe.hvals(keys.org_room_holds(owner))
        repo_vals, org_vals = pipe.execute()
    return [Hold.from_dict(json.loads(v)) for v in (*repo_vals, *org_vals)]


def prune_expired(redis: Redis, repo: str, now: datetime) -> int:
    """Delete the room holds of the repo and of its org that have expired (they hold nothing any more:
    `Hold.active`); how many. The reconcile calls it, so no reader deletes while it reads."""
    pruned = 0
    for key in (keys.room_holds(repo), keys.org_room_holds(repo.split("/", 1)[0])):
        gone = [h.id for h in holds_in(redis, key) if not h.active(now)]
        if gone:
            pruned += int(redis.hdel(key, *gone))
    return pruned


def get(redis: Redis, scope: str, hold_id: str) -> Hold | None:
    """The hold with this id under ``scope``'s key (a hold the service places itself: tree closer, hold-for)."""
    raw = redis.hget(scope_key(scope), hold_id)
    return None if raw is None else Hold.from_dict(json.loads(raw))


def put(redis: Redis | Pipeline, hold: Hold) -> None:
    """Store (or replace) a hold the service places itself; the caller audits it, in its own words."""
    redis.hset(scope_key(hold.scope), hold.id, json.dumps(hold.to_dict()))


def remove(redis: Redis, scope: str, hold_ids: list[str]) -> int:
    """Remove holds by id from ``scope``'s key; how many were there (the caller audits)."""
    return int(redis.hdel(scope_key(scope), *hold_ids)) if hold_ids else 0


def find_hold(redis: Redis, hold_id: str) -> Hold | None:
    """The room hold with this id, wherever its scope keeps it; None when there is none."""
    scope = hold_id.rpartition(":")[2]
    if not hold_id.startswith("room:") or not scope:
        return None
    raw = redis.hget(scope_key(scope), hold_id)
    return None if raw is None else Hold.from_dict(json.loads(raw))


def lift_hold(redis: Redis, hold: Hold, *, actor: str, origin: str) -> None:
    """Lift one room hold (by its id), audited like a lift from chat."""
    redis.hdel(scope_key(hold.scope), hold.id)
    audit.record(redis, scope_repo(hold.scope), "room.lifted", scope=hold.scope, actor=actor, origin=origin,
                holders=[hold.holder], hold_id=hold.id, **_pr(hold.scope))
