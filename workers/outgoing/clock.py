"""The freeze clock: what begins or ends by the clock alone, recorded so that outgoing webhooks hear it.

A freeze window beginning or ending, and a timed room hold running out, change no stored state: the
verdicts notice them one PR at a time. For an org with an endpoint that wants ``freeze.*`` or
``hold.lifted`` (`state.outgoing.wants_clock`), this job looks at the org's repos' windows (as
`core.freeze` reads them: time zones, DST) and its remembered timed holds, records ``window.started``,
``window.ended`` and ``room.expired`` in the audit log — from where `state.outgoing.note` sends them, like
any other event — and schedules itself for the next moment anything could change. It drives to the
desired state: what it announced is kept (`core.keys.webhook_windows`), so a run twice, late, or after a
config change announces each beginning and end once. The first look only remembers (a window already
running when an endpoint is registered did not just begin).
"""

from __future__ import annotations

from datetime import UTC, datetime

from redis import Redis

from core import keys
from core.freeze import active_interval, next_transition
from core.holds import to_iso
from core.scopes import scope_repo
from state import audit, outgoing, room_holds, store
from state.config_file import repo_config
from state.decoding import as_text
from workers.runtime import current

SEEDED = "_seeded"
LOCK_SECONDS = 60


def clock_job(org: str) -> str:
    return run(current().redis, org, datetime.now(UTC))


def run(redis: Redis, org: str, now: datetime) -> str:
    if not outgoing.wants_clock(redis, org):
        redis.delete(keys.webhook_windows(org), keys.webhook_timed(org))
        return "nobody listens"
    with redis.lock(keys.webhook_clock_lock(org), timeout=LOCK_SECONDS, blocking_timeout=LOCK_SECONDS):
        moments, told = _windows(redis, org, now)
        told += _expiries(redis, org, now)
        first_timed = redis.zrange(keys.webhook_timed(org), 0, 0, withscores=True)
        if first_timed:
            moments.append(datetime.fromtimestamp(float(first_timed[0][1]), UTC))
    later = [m for m in moments if m > now]
    if later:
        outgoing.schedule_clock(redis, org, min(later))
    return f"{told} told; next look {to_iso(min(later)) if later else 'when something changes'}"


def _windows(redis: Redis, org: str, now: datetime) -> tuple[list[datetime], int]:
    key = keys.webhook_windows(org)
    announced = {as_text(f): as_text(v) for f, v in redis.hgetall(key).items()}
    seeded = SEEDED in announced
    announced.pop(SEEDED, None)
    active: dict[str, str] = {}
    moments: list[datetime] = []
    told = 0
    for repo in outgoing.org_repos(redis, org):
        config, _error = repo_config(store.load_repo(redis, repo))
        if config is None:
            # Unreadable: what was announced stays announced (never "ended" on doubt); looked at again later.
            active.update({f: v for f, v in announced.items() if f.split("\x00", 1)[0] == repo})
            continue
        turn = next_transition(config, now)
        if turn is not None:
            moments.append(turn)
        for window in config.freeze_windows:
            interval = active_interval(window, now)
            if interval is None:
                continue
            field = f"{repo}\x00{window.name}"
            active[field] = to_iso(interval[1]) or ""
            if seeded and field not in announced:
                audit.record(redis, repo, "window.started", scope=repo, name=window.name,
                             branches=list(window.branches), ends_at=active[field],
                             reason=f"freeze window {window.name}")
                told += 1
    for field in announced:
        if field not in active and seeded:
            repo, _, name = field.partition("\x00")
            audit.record(redis, repo, "window.ended", scope=repo, name=name, reason=f"freeze window {name}")
            told += 1
    with redis.pipeline() as pipe:
        pipe.delete(key)
        pipe.hset(key, SEEDED, "1")
        for field, end in active.items():
            pipe.hset(key, field, end)
        pipe.execute()
    return moments, told


def _expiries(redis: Redis, org: str, now: datetime) -> int:
    """Timed room holds whose end has come: told once none is left active on their scope."""
    key = keys.webhook_timed(org)
    told = 0
    for member in redis.zrangebyscore(key, "-inf", now.timestamp()):
        scope = as_text(member)
        left = [h for h in room_holds.holds_in(redis, room_holds.scope_key(scope)) if h.scope == scope
                and h.active(now)]
        if not left:
            redis.zrem(key, scope)
            number = scope.partition("#")[2]
            audit.record(redis, scope_repo(scope), "room.expired", scope=scope,
                         **({"number": int(number)} if number.isdigit() else {}))
            told += 1
        elif any(h.expires_at is None for h in left):
            redis.zrem(key, scope)  # held on until lifted by hand: that lift is the news
        else:
            latest = max(h.expires_at for h in left if h.expires_at is not None)
            redis.zadd(key, {scope: latest.timestamp()})
    return told

