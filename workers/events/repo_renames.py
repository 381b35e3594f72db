"""A renamed or transferred repository keeps its holds (design §4, `repository` event).

Every key of a repo lives under its name's hash tag (`core.keys`), so a rename would orphan its holds,
exemptions, room holds, config, indexes and history. `move_repo` renames them to the new name. When a
key already exists under the new name (an event for the new name was handled first), the two are
joined: PR states by `core.prstate.merge_states`, sets by union, hashes keeping the new name's fields,
histories by appending the old entries. Values that spell the name (PR states, room-hold and exemption
scopes) are rewritten; verdicts are then recomputed and republished under the new name.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import partial
from typing import Any

from redis import Redis

from core import keys
from core.events import installation_id, repo_name
from core.holds import Exemption, Hold
from core.prstate import PullState, merge_states
from core.pull_rules import rename_repo
from state import audit, store
from state.decoding import as_text
from workers.publishing import republish_scope
from workers.runtime import Runtime

TRANSIENT = re.compile(r":(?:lock|queued|forged|fanout(?::.*)?|perm:.*|group:[0-9a-f]+:lock)$")
"""Keys not worth moving: locks and queue flags of running work (they expire), permission caches (a
transfer changes who has access), a running fan-out (the republish below starts a new one)."""
STATE = re.compile(r":pr:\d+:state$")


def old_name(payload: dict[str, Any]) -> str | None:
    """The repo's full name before a `renamed` or `transferred` event, from the event's `changes`."""
    repository = payload.get("repository") or {}
    changes = payload.get("changes") or {}
    owner = str((repository.get("owner") or {}).get("login") or str(repository.get("full_name", "")).split("/")[0])
    name = str(repository.get("name") or str(repository.get("full_name", "/")).split("/", 1)[1])
    if payload.get("action") == "renamed":
        before = ((changes.get("repository") or {}).get("name") or {}).get("from")
        return f"{owner}/{before}" if before else None
    if payload.get("action") == "transferred":
        source = (changes.get("owner") or {}).get("from") or {}
        login = (source.get("user") or source.get("organization") or {}).get("login")
        return f"{login}/{name}" if login else None
    return None


def _rescope(scope: str, old: str, new: str) -> str:
    """``old``, ``old@glob`` or ``old#12`` -> the same under ``new`` (names compare case-blind)."""
    if scope.lower() == old.lower() or scope[: len(old) + 1].lower() in (f"{old.lower()}@", f"{old.lower()}#"):
        return new + scope[len(old):]
    return scope


def _join(redis: Redis, source: str, target: str) -> None:
    """Both names have this key: keep the new name's values, add what only the old one knew."""
    kind = as_text(redis.type(source))
    if STATE.search(source):
        mine = PullState.from_dict(json.loads(redis.get(target) or b"{}"))
        theirs = PullState.from_dict(json.loads(redis.get(source) or b"{}"))
        redis.set(target, json.dumps(merge_states(mine, replace(theirs, repo=mine.repo)).to_dict(),
                                     separators=(",", ":")))
    elif kind == "set":
        redis.sunionstore(target, [target, source])
    elif kind == "hash":
        for field, value in redis.hgetall(source).items():
            redis.hsetnx(target, field, value)
    elif kind == "stream":
        for _id, fields in redis.xrange(source) or []:
            if fields:
                entry: dict[Any, Any] = dict(fields)
                redis.xadd(target, entry, maxlen=audit.HISTORY_MAXLEN, approximate=True)
    # Strings other than states (verdicts, posted, indexes, config): the new name's are newer.
    redis.delete(source)


def move_repo(rt: Runtime, old: str, new: str, installation_id: int | None = None) -> int:
    """Move every key of ``old`` to ``new``; returns how many keys moved. Idempotent: a redelivered
    event finds nothing left under the old name."""
    redis = rt.redis
    moved = 0
    if old.lower() != new.lower():
        old_prefix, new_prefix = keys.repo_prefix(old), keys.repo_prefix(new)
        for raw in list(redis.scan_iter(match=keys.repo_keys_pattern(old), count=500)):
            source = as_text(raw)
            if TRANSIENT.search(source):
                redis.delete(source)
                continue
            target = new_prefix + source[len(old_prefix):]
            if not redis.renamenx(source, target):
                _join(redis, source, target)
            moved += 1
    _rewrite_names(redis, old, new)
    meta = store.load_repo(redis, new)
    with redis.pipeline() as pipe:
        pipe.srem(keys.MANAGED_REPOS, old.lower())
        if meta is not None:
            pipe.sadd(keys.MANAGED_REPOS, new.lower())
            pipe.srem(keys.installation_repos(meta.installation_id), old.lower())
        pipe.execute()
    if meta is not None:
        if installation_id is not None and installation_id != meta.installation_id:
            meta = replace(meta, installation_id=installation_id)
        store.save_repo(redis, new, meta)  # sets `managed` and the installation's index under the new name
    return moved


def _rewrite_names(redis: Redis, old: str, new: str) -> None:
    for number in store.open_numbers(redis, new):
        store.update_pull(redis, new, number, partial(rename_repo, repo=new))
    rooms = keys.room_holds(new)
    for hold_id, raw in redis.hgetall(rooms).items():
        hold = Hold.from_dict(json.loads(raw))
        scope = _rescope(hold.scope, old, new)
        # A room hold's id ends with its scope (one hold per holder and scope): renamed with it, so a
        # later `/hold` or `/unhold` on the new name finds it.
        ident = hold.id[: -len(hold.scope)] + scope if hold.id.endswith(hold.scope) else hold.id
        with redis.pipeline() as pipe:
            pipe.hdel(rooms, hold_id)
            pipe.hset(rooms, ident, json.dumps(replace(hold, id=ident, scope=scope).to_dict()))
            pipe.execute()
    exempt = keys.exemptions(new)
    for field, raw in redis.hgetall(exempt).items():
        exemption = Exemption.from_dict(json.loads(raw))
        redis.hset(exempt, field,
                   json.dumps(replace(exemption, pr_scope=_rescope(exemption.pr_scope, old, new)).to_dict()))


def on_repository(rt: Runtime, payload: dict[str, Any]) -> str:
    """A renamed or transferred repo: its holds, exemptions, room holds, config and indexes move to the
    new name, and its PRs are republished under it."""
    new = repo_name(payload)
    old = old_name(payload)
    if new is None or old is None:  # renamed or transferred (`core.events`)
        return "ignored"
    if store.load_repo(rt.redis, old) is None and store.load_repo(rt.redis, new) is None:
        return "not managed"
    moved = move_repo(rt, old, new, installation_id(payload))
    audit.record(rt.redis, new, "repo.moved", old=old, new=new, action=payload.get("action"), keys=moved)
    republish_scope(rt, new)
    return f"moved {moved} keys from {old}, republished"
