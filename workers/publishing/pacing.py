"""A write pacer shared by every worker: GitHub's secondary limit counts content-creating requests per
installation (no more than 80 a minute and 500 an hour), whichever worker process sends them.

The pacer is a token bucket kept in Redis (GCRA: one "theoretical arrival time"): ``rate_per_minute``
writes a minute sustained, with up to ``burst`` writes at once after a quiet spell, across all workers
and machines. So an isolated change — or a handful at once — is written at once, while a sustained
stream (a fan-out, a storm of events) is paced at the rate; in any minute at most ``burst + rate``
writes go out (defaults 10 + 60 < 80). GitHub also counts an hour (500): the pacer keeps that window
too (``hourly``, default 450, leaving room for comments and reactions), and low-priority writes leave
`HOURLY_RESERVE` of it to the writes that change what may merge. Ruleset writes (`GATE`) have a share of
both windows no other write takes (`GATE_MINUTE_RESERVE`, `GATE_HOURLY_RESERVE`), and every active
ruleset keeps its thaw's write of the hour back from every other write (`Pacer.owe`; an activation the
hour has no room for, with its thaw's write, is refused rather than waited for: the caller schedules it).
Slots are handed out by a Lua script
that reads the clock with Redis ``TIME``: workers on hosts with skewed clocks still agree. A worker
*reserves* a slot and sleeps until it; reserved slots of a worker that dies are simply lost (the pace
errs on the slow side).

When GitHub answers a write with a rate limit anyway (403/429; PyGithub's retry has already waited
``retry-after`` a few times by then), the writer pauses the pacer for the whole installation
(`rate_limit_wait` reads GitHub's advice, `Pacer.pause` applies it), so the other workers stop writing
too instead of each running into the limit on its own. The bucket
starts empty at the end of a pause: no burst right after GitHub said stop.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from github import GithubException
from redis import Redis
from requests.exceptions import RetryError

from core import keys
from foundation.settings import Settings

DEFAULT_PAUSE = 60.0
"""GitHub's advice when a secondary-limit answer carries no ``retry-after``: wait at least a minute."""

_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local max_wait = tonumber(ARGV[2])
local tau = tonumber(ARGV[3])
local hourly = tonumber(ARGV[4])
local peek = ARGV[5] == '1'
local minute_cap = tonumber(ARGV[6])
local gate = ARGV[7] == '1'
local hour = 3600000
if hourly > 0 and ARGV[10] == '1' then
  hourly = hourly - redis.call('SCARD', KEYS[4])
  if hourly < 1 then
    if ARGV[11] == '1' then
      return {0, hour}
    end
    hourly = 1
  end
end
if ARGV[8] == '1' then
  local urgent = redis.call('PTTL', KEYS[3])
  if urgent > 0 then
    return {0, math.min(urgent, tonumber(ARGV[9]))}
  end
end
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused_until') or '0')
local tat = math.max(tonumber(redis.call('HGET', KEYS[1], 'tat') or '0'), now, paused + tau)
local slot = math.max(now, tat - tau)
if gate then
  slot = math.max(now, paused)
end
local gcra_slot = slot
local function settle(window, cap)
  local n = redis.call('ZCOUNT', KEYS[2], slot - window + 1, '+inf')
  if n >= cap then
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[2], slot - window + 1, '+inf', 'WITHSCORES', 'LIMIT', n - cap, 1)
    slot = math.max(slot, tonumber(oldest[2]) + window)
    return true
  end
  return false
end
if hourly > 0 or minute_cap > 0 then
  if not peek then
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - hour)
  end
  for _ = 1, 4 do
    local moved = false
    if minute_cap > 0 and settle(60000, minute_cap) then moved = true end
    if hourly > 0 and settle(hour, hourly) then moved = true end
    if not moved then break end
  end
end
local wait = slot - now
if peek or (max_wait >= 0 and wait > max_wait) then
  return {0, wait}
end
local granted = redis.call('HINCRBY', KEYS[1], 'granted', 1)
if slot > gcra_slot and not gate then
  tat = slot + tau
end
redis.call('HSET', KEYS[1], 'tat', tat + interval)
redis.call('PEXPIRE', KEYS[1], tat + interval - now + hour)
if hourly > 0 or minute_cap > 0 then
  redis.call('ZADD', KEYS[2], slot, slot .. ':' .. granted)
  redis.call('PEXPIRE', KEYS[2], slot - now + hour)
end
return {1, wait}
"""
"""Two windows. The minute: GCRA — ``tat`` runs ahead of the clock by one interval per write; a write
may go once ``tat`` is at most ``tau`` (ARGV[3] = (burst - 1) x interval) ahead. After a pause ``tat``
starts at its end plus ``tau``: an empty bucket. The hour: a log of the slots handed out (KEYS[2]); a
slot goes only where fewer than ARGV[4] slots lie in the hour before it, else it moves to when the
oldest of those leaves the hour (GitHub counts a sliding hour too). A slot the hour moved later
starts the minute's bucket empty, as a pause does. ARGV[5] = 1 only looks. A `GATE` write (ARGV[7])
skips the bucket's smoothing but not the windows: the log also caps any sliding minute at ARGV[6]
(burst + rate, what the bucket allows anyway), so a freeze's ruleset writes go at once, never past
what GitHub takes; each still costs the bucket a slot, slowing the writes that follow. ARGV[8] = 1: a
low-priority write, refused (for at most ARGV[9] ms, then asked again) while urgent writes wait (KEYS[3]).
ARGV[10] = 1: the hour's cap is lowered by the thaw writes owed (KEYS[4], `core.keys.freeze_owed`); with
ARGV[11] = 1 (a ruleset activation, which owes one more) a cap spent that way refuses for an hour."""

_PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local until_ms = now + tonumber(ARGV[1])
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused_until') or '0')
if until_ms > paused then
  redis.call('HSET', KEYS[1], 'paused_until', until_ms)
  redis.call('HINCRBY', KEYS[1], 'pauses', 1)
end
redis.call('PEXPIRE', KEYS[1], math.max(until_ms, paused) - now + 3600000)
return math.max(until_ms, paused) - now
"""

_PAUSED_FOR = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = tonumber(redis.call('HGET', KEYS[1], 'paused_until') or '0')
return math.max(paused - now, 0)
"""


URGENT = 0
"""A write that changes whether something may merge: a verdict's status, an exemption's mark."""
GATE = 2
"""A freeze's ruleset write: one per repository decides for every PR in it, so it goes at once, within
the minute's and the hour's caps but ahead of the bucket's smoothing."""
LOW_PRIORITY = 1
"""Paced bulk work for people to read (a frozen PR's `merge-hold/freeze` failure under a ruleset freeze,
check runs): never in the part of either window kept for the writes that change what may merge."""
HOURLY_RESERVE = 100
"""Slots of the hour that low-priority writes leave to urgent ones, so that a thaw or a new hold never
waits behind an hour of descriptions."""
GATE_HOURLY_RESERVE = 30
"""Slots of the hour (at most a tenth of it) that only `GATE` writes take: a freeze's or a thaw's
rulesets never wait for the hour a bootstrap or a fan-out of statuses spent."""
GATE_MINUTE_RESERVE = 10
"""Slots of the sliding minute (at most a quarter of ``rate + burst``) that only `GATE` writes take:
with the defaults (60 + 10) other writes keep their sustained rate and lose only the burst, and a
freeze on a busy installation binds its first ten repos at once, the rest as the minute's oldest
writes leave it (no other write takes those slots while gate writes wait)."""
URGENT_SECONDS = 30.0
"""How long a `Pacer.yield_low_priority` lasts unless renewed or ended: a writer that dies does not
stop the low-priority writes for longer."""
YIELD_RECHECK = 2.0
"""Seconds after which a low-priority writer refused for urgent writes asks again."""


class SlotTooFar(Exception):
    """The next write slot is more than the allowed wait away (taken outside the caller's lock)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"next write slot in {seconds:.1f}s")
        self.seconds = seconds


class Pacer:
    """At most ``rate_per_minute`` writes a minute for one bucket (a GitHub installation), shared
    through Redis by every process that builds a `Pacer` with the same bucket."""

    def __init__(self, redis: Redis, rate_per_minute: float, bucket: str = "global", *, burst: int = 1,
                 hourly: int = 0, sleep: Callable[[float], None] = time.sleep) -> None:
        if rate_per_minute <= 0:
            raise ValueError("rate_per_minute must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.redis = redis
        self.rate_per_minute = rate_per_minute
        self.burst = burst
        self.hourly = max(hourly, 0)
        """Writes in any hour (0: no hourly cap); `LOW_PRIORITY` writes leave `HOURLY_RESERVE` of them."""
        self.key = keys.pacer(bucket)
        self.hour_key = keys.pacer_hour(bucket)
        self.urgent_key = keys.pacer_urgent(bucket)
        self.owed_key = keys.freeze_owed(bucket)
        self.sleep = sleep
        self._reserve = redis.register_script(_RESERVE)
        self._pause = redis.register_script(_PAUSE)
        self._paused_for = redis.register_script(_PAUSED_FOR)
        self.waited = 0.0
        """Seconds this instance spent sleeping for slots (for reports and the benchmark)."""

    @classmethod
    def of(cls, redis: Redis, settings: Settings, bucket: str) -> Pacer:
        """The pacer of ``bucket`` at the configured rate, burst and hourly cap (MERGE_HOLD_WRITE_RATE,
        _BURST, _HOURLY)."""
        return cls(redis, settings.write_rate_per_minute, bucket, burst=max(settings.write_burst, 1),
                   hourly=settings.write_hourly)

    @property
    def interval(self) -> float:
        """Seconds between two writes."""
        return 60.0 / self.rate_per_minute

    def _hourly_for(self, priority: int, binds: bool = False) -> int:
        """The hour's cap for a write of ``priority`` (before the owed thaw writes are taken off)."""
        if not self.hourly:
            return 0
        if priority == GATE:
            return self.hourly - 1 if binds else self.hourly  # an activation keeps its own thaw's slot
        if priority == LOW_PRIORITY:
            return max(self.hourly - min(HOURLY_RESERVE, self.hourly // 2), 1)
        return max(self.hourly - min(GATE_HOURLY_RESERVE, self.hourly // 10), 1)

    def minute_cap(self, priority: int = URGENT) -> int:
        """Writes of ``priority`` in any sliding minute: ``rate + burst`` (what the bucket allows anyway)
        for `GATE` writes, `GATE_MINUTE_RESERVE` fewer for the rest."""
        cap = int(min(self.rate_per_minute + self.burst, 10**9))
        return cap if priority == GATE else max(cap - min(GATE_MINUTE_RESERVE, cap // 4), 1)

    def _run(self, max_wait: float | None, priority: int, peek: bool, binds: bool = False) -> tuple[bool, float]:
        limit = -1 if max_wait is None else max(int(max_wait * 1000), 0)
        interval_ms = max(int(self.interval * 1000), 1)
        # A thaw (a gate write that binds nothing) may spend what is owed to it; every other write leaves it.
        owes = priority != GATE or binds
        granted, wait_ms = self._reserve([self.key, self.hour_key, self.urgent_key, self.owed_key], [
            interval_ms, limit, (self.burst - 1) * interval_ms, self._hourly_for(priority, binds), int(peek),
            self.minute_cap(priority), int(priority == GATE), int(priority == LOW_PRIORITY),
            int(YIELD_RECHECK * 1000), int(owes), int(priority == GATE and binds)])
        return bool(int(granted)), int(wait_ms) / 1000

    def yield_low_priority(self, seconds: float = URGENT_SECONDS) -> None:
        """Urgent writes are about to go one after another (a freeze's or a thaw's rulesets over many
        repos): low-priority writes take no slot for ``seconds`` (renew it, or `end_yield`). Without
        it they would take every other slot of the minute's rate, and a thaw over 50 repos would wait
        behind as many descriptions."""
        self.redis.set(self.urgent_key, "1", px=max(int(seconds * 1000), 1))

    def end_yield(self) -> None:
        self.redis.delete(self.urgent_key)

    def reserve(self, max_wait: float | None = None, *, priority: int = URGENT,
                binds: bool = False) -> float | None:
        """Take the next slot; the seconds until it (0: now). ``None``, and nothing taken, when the
        slot lies further than ``max_wait`` seconds away. ``binds``: a `GATE` write that activates a
        ruleset, so owes its thaw one write of the hour (`owe`); it leaves the owed writes and its own."""
        granted, wait = self._run(max_wait, priority, False, binds)
        return wait if granted else None

    def acquire(self, max_wait: float | None = None, *, priority: int = URGENT, binds: bool = False) -> float:
        """Wait for a slot of our own. Raises `SlotTooFar` (taking nothing) when it is further away
        than ``max_wait``, or for a low-priority write while urgent ones wait
        (`yield_low_priority`); returns the seconds waited."""
        waited = 0.0
        while True:
            wait = self.reserve(max_wait, priority=priority, binds=binds)
            if wait is None:
                raise SlotTooFar(self.next_slot_in(priority=priority, binds=binds))
            if wait > 0:
                self.sleep(wait)
                waited += wait
            # A pause that began while we slept for a slot reserved before it: take a later slot. A
            # low-priority write also gives way to urgent writes that began meanwhile (the next
            # reserve refuses it): the slot it slept for is lost, not written into a thaw.
            yielding = priority == LOW_PRIORITY and bool(self.redis.exists(self.urgent_key))
            if self.paused_for() <= 0 and not yielding:
                self.waited += waited
                return waited

    def next_slot_in(self, *, priority: int = URGENT, binds: bool = False) -> float:
        """Seconds until a slot would be free (without taking it)."""
        return max(self._run(None, priority, True, binds)[1], 0.0)

    def owe(self, ruleset: str, owed: bool) -> None:
        """Record that ``ruleset`` (``owner/repo`` or ``org:owner``) is active, so its thaw needs one
        write (or, ``owed`` False, that it is not): the hour keeps that many slots back."""
        if owed:
            self.redis.sadd(self.owed_key, ruleset)
        else:
            self.redis.srem(self.owed_key, ruleset)

    def owed(self) -> int:
        return int(self.redis.scard(self.owed_key))

    def hour_room_in(self, writes: int) -> float:
        """Seconds until the sliding hour has room for ``writes`` more activations, each keeping its thaw's
        write (2 x ``writes`` slots beyond the owed ones); 0 when it has now, or with no hourly cap."""
        if not self.hourly or writes <= 0:
            return 0.0
        now_s, now_us = self.redis.time()
        now_ms = int(now_s) * 1000 + int(now_us) // 1000
        listed: list[tuple[Any, float]] = self.redis.zrangebyscore(self.hour_key, now_ms - 3600_000 + 1, "+inf",
                                                                   withscores=True)  # type: ignore[assignment]
        scores = [int(score) for _member, score in listed]
        room = self.hourly - self.owed() - len(scores)
        short = 2 * writes - room
        if short <= 0:
            return 0.0
        if short > len(scores):
            return 3600.0
        return max(scores[short - 1] + 3600_000 - now_ms, 0) / 1000

    def pause(self, seconds: float) -> float:
        """No slot is handed out for ``seconds`` from now (or longer, if already paused longer)."""
        left = self._pause([self.key], [max(int(seconds * 1000), 0)])
        return int(left) / 1000

    def paused_for(self) -> float:
        return int(self._paused_for([self.key])) / 1000

    def counters(self) -> dict[str, int]:
        """Slots granted and pauses taken since the bucket was last idle for an hour."""
        granted, pauses = self.redis.hmget(self.key, ["granted", "pauses"])
        return {"granted": int(granted or 0), "pauses": int(pauses or 0)}


def slot_now(redis: Redis, settings: Settings, bucket: str) -> Pacer | None:
    """The bucket's pacer with a slot taken for a write now; None, with nothing taken, when none is free."""
    pacer = Pacer.of(redis, settings, bucket)
    return pacer if pacer.reserve(0) is not None else None


_RETRIED_LIMIT = re.compile(r"too many (?:403|429) error responses")


def rate_limit_wait(exc: BaseException, *, now: float | None = None,
                    default: float = DEFAULT_PAUSE) -> float | None:
    """How long GitHub asks us to stop writing, if ``exc`` is a rate-limit answer; else ``None``.

    PyGithub's retry waits ``retry-after`` itself; when its attempts run out it raises requests'
    ``RetryError`` (no headers left: pause ``default``), and a primary limit beyond its patience raises
    ``RateLimitExceededExceedsMaxWait`` (a `GithubException` with the headers).
    """
    if isinstance(exc, RetryError):
        # urllib3's reason names the status ("too many 502 error responses"); the rest of the message
        # holds the host, port and URL, which may well contain "403" or "429".
        if not _RETRIED_LIMIT.search(str(exc)):
            return None
        # GitHub's last `Retry-After`, kept by `workers.github.gateway._Retry` (its own attempts waited the rest).
        advised = str(getattr(exc.args[0] if exc.args else None, "retry_after", None) or "").strip()
        return float(advised) if advised.isdigit() and int(advised) > 0 else default
    if not isinstance(exc, GithubException) or exc.status not in (403, 429):
        return None
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    if headers.get("retry-after", "").strip().isdigit():
        return float(headers["retry-after"].strip())
    if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
        clock = time.time() if now is None else now
        return max(float(headers["x-ratelimit-reset"]) - clock, 1.0)
    wait = getattr(exc, "wait", None)
    if isinstance(wait, (int, float)):
        return float(wait)
    message = str((exc.data or {}).get("message", "")) if isinstance(exc.data, dict) else str(exc.data or "")
    return default if exc.status == 429 or "rate limit" in message.lower() else None
