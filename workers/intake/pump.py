"""Step 3 of a delivery's path (docs/architecture.md): the intake pump turns the receiver's intake list
into rq jobs, in batches, without losing an entry.

The receiver acknowledges a delivery once its raw body is in the intake list (one LPUSH, design §4
invariant 4); everything rq needs — pickling, the job hash, the queue entry — happens here, in the
workers, off the request path. Every `merge-hold worker` runs one pump in a thread; several pumps share
one intake safely.

Nothing is lost on a crash. A pump first *moves* entries from the intake to its own ``taken`` list
(LMOVE, atomic), then creates their jobs and deletes ``taken`` in one MULTI/EXEC: either the jobs exist
and ``taken`` is empty, or ``taken`` still holds the entries. A pump re-queues its own leftovers after a
Redis error; the leftovers of a pump that died are moved back to the intake by any other pump once the
dead one's heartbeat has expired (a Lua script, so a pump that is merely slow is never robbed). A
delivery queued twice this way runs twice and the second run is a no-op (`handle_delivery` skips a
delivery id it has seen).

Nothing stops it either. An entry that cannot be a job — not JSON, nested deeper than
`core.json_text.MAX_DEPTH`, fields of the wrong type — is moved to the dead-letter list with its reason
in the same MULTI/EXEC (`state.dead_letters`: counted in `/metrics`, shown by `merge-hold doctor`), and
the pump goes on with the next; an error that is no entry's is logged and the pump carries on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from datetime import UTC, datetime

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import RedisError
from rq import Queue

from core import keys
from core.deliveries import Delivery, ignore_reason, pack, unpack
from state import dead_letters
from state.dead_letters import DeadLetter
from state.decoding import as_text
from state.queueing import enqueue_deliveries

log = logging.getLogger(__name__)

BATCH = 200
"""Entries turned into jobs per MULTI/EXEC: one round trip for a burst instead of one per delivery."""
BLOCK_SECONDS = 1.0
"""How long an idle pump waits on the intake before its housekeeping (heartbeat, reclaiming)."""
ALIVE_TTL = 15
"""Seconds a pump's heartbeat lasts; a pump silent that long is dead and its taken entries go back."""
HEARTBEAT_EVERY = 5.0

_TAKE = """
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local entry = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
  if not entry then break end
  out[#out + 1] = entry
end
return out
"""
"""Move up to ARGV[1] entries, oldest first, from the intake (KEYS[1]) to a pump's taken list (KEYS[2])."""

_RECLAIM = """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local moved = 0
while redis.call('LMOVE', KEYS[2], KEYS[1], 'LEFT', 'RIGHT') do moved = moved + 1 end
redis.call('SREM', KEYS[4], ARGV[1])
return moved
"""
"""Unless the pump's heartbeat (KEYS[3]) lives: put its taken entries (KEYS[2]) back at the intake's
(KEYS[1]) taking end, oldest nearest, and forget the pump (SREM from KEYS[4])."""


class Pump:
    def __init__(self, redis: Redis, queue: Queue, name: str) -> None:
        self.redis = redis
        self.queue = queue
        self.name = name
        self.intake = keys.intake(queue.name)
        self.taken = keys.intake_taken(queue.name, name)
        self.pumps = keys.intake_pumps(queue.name)
        self._take = redis.register_script(_TAKE)
        self._reclaim = redis.register_script(_RECLAIM)
        self._next_beat = 0.0
        self.ignored = 0
        self.queued = 0
        self.dead = 0

    def heartbeat(self) -> None:
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(keys.intake_alive(self.queue.name, self.name), "1", ex=ALIVE_TTL)
            pipe.sadd(self.pumps, self.name)
            pipe.execute()

    def reclaim_dead(self) -> int:
        """Move the taken entries of every pump whose heartbeat expired back to the intake."""
        moved = 0
        for raw in self.redis.smembers(self.pumps):
            other = as_text(raw)
            if other == self.name:
                continue
            alive = keys.intake_alive(self.queue.name, other)
            taken = keys.intake_taken(self.queue.name, other)
            count = int(self._reclaim(keys=[self.intake, taken, alive, self.pumps], args=[other]))
            if count > 0:
                log.warning("intake: %d deliveries taken by dead pump %s put back", count, other)
                moved += count
        return moved

    def _housekeeping(self) -> None:
        now = time.monotonic()
        if now >= self._next_beat:
            self.heartbeat()
            self.reclaim_dead()
            self._next_beat = now + HEARTBEAT_EVERY

    def _queue(self, entries: list[bytes]) -> int:
        """Jobs for ``entries`` (oldest first), dead letters for those that cannot be, and an empty taken
        list, in one MULTI/EXEC. Whatever one entry is — not JSON, nested too deep, fields of the wrong
        type — it is set aside with its reason, and the others go on (`state.dead_letters`)."""
        wanted: list[Delivery] = []
        dead: list[DeadLetter] = []
        for entry in entries:
            try:
                delivery = unpack(entry)
                reason = ignore_reason(delivery.event, delivery.payload())
            except Exception as exc:  # any failure is this entry's, never the pump's
                dead.append(self._dead(entry, exc))
                continue
            if reason is None:
                wanted.append(delivery)
            else:
                self.ignored += 1
        with self.redis.pipeline() as pipe:
            ids = self._jobs(wanted, pipe, dead)
            dead_letters.set_aside(pipe, self.queue.name, dead)
            pipe.delete(self.taken)
            pipe.execute()
        self.queued += len(ids)
        self.dead += len(dead)
        return len(entries)

    def _jobs(self, wanted: list[Delivery], pipe: Pipeline, dead: list[DeadLetter]) -> list[str]:
        """The batch's jobs added to ``pipe``; a delivery that cannot be made into a job (nothing
        reached Redis yet: jobs are built before the pipeline runs) is found alone and set aside."""
        try:
            return enqueue_deliveries(self.queue, wanted, pipe)
        except RedisError:
            raise
        except Exception:
            pipe.reset()  # drop what the failed build added; the MULTI starts afresh
        usable = []
        for delivery in wanted:
            with self.redis.pipeline() as scratch:  # never executed: only to see whether a job can be built
                try:
                    enqueue_deliveries(self.queue, [delivery], scratch)
                except RedisError:
                    raise
                except Exception as exc:
                    dead.append(self._dead(pack(delivery.event, delivery.delivery_id, delivery.body), exc))
                    continue
            usable.append(delivery)
        return enqueue_deliveries(self.queue, usable, pipe)

    def _dead(self, entry: bytes, exc: Exception) -> DeadLetter:
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("intake: set aside an entry of %d bytes as a dead letter: %s", len(entry), reason[:200])
        return DeadLetter(reason, entry, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))

    def flush_taken(self) -> int:
        """Queue what this pump had taken before an error (or, under the same name, before a crash)."""
        entries: list[bytes] = list(self.redis.lrange(self.taken, 0, -1))  # type: ignore[arg-type]
        return self._queue(entries[::-1]) if entries else 0

    def step(self, block: float = 0.0) -> int:
        """Take up to `BATCH` entries (waiting up to ``block`` seconds for the first) and queue them."""
        self._housekeeping()
        entries: list[bytes] = list(self._take(keys=[self.intake, self.taken], args=[BATCH]))
        if not entries and block > 0:
            first: bytes | None = self.redis.blmove(  # type: ignore[assignment]
                self.intake, self.taken, block, "RIGHT", "LEFT")  # type: ignore[arg-type]  # seconds, float ok
            if first is None:
                return 0
            entries = [first, *self._take(keys=[self.intake, self.taken], args=[BATCH - 1])]
        return self._queue(entries) if entries else 0

    def pump_all(self) -> int:
        """Queue everything in the intake now (`merge-hold worker --burst`, tests); returns the count."""
        total = self.flush_taken()
        while moved := self.step():
            total += moved
        return total

    def run(self, stop: threading.Event) -> None:
        """Pump until ``stop`` is set, riding out Redis errors (a restart, a Sentinel failover)."""
        pause = 0.1
        while not stop.is_set():
            try:
                self.flush_taken()
                while not stop.is_set():
                    self.step(BLOCK_SECONDS)
                    pause = 0.1
            except RedisError as exc:
                log.warning("intake: Redis error (%s); retrying in %.1f s", exc, pause)
                stop.wait(pause)
                pause = min(pause * 2, 5.0)
            except Exception:
                # Not an entry's fault (those are dead letters): log it and go on, the taken entries
                # wait in the taken list for the next round. The pump thread never ends on its own.
                log.exception("intake: unexpected error; retrying in %.1f s", pause)
                stop.wait(pause)
                pause = min(pause * 2, 5.0)
        with contextlib.suppress(RedisError):
            self.redis.delete(keys.intake_alive(self.queue.name, self.name))

    def start(self) -> tuple[threading.Thread, threading.Event]:
        """Run the pump in a daemon thread; set the returned event to stop it."""
        stop = threading.Event()
        thread = threading.Thread(target=self.run, args=(stop,), name=f"intake-pump-{self.name}", daemon=True)
        thread.start()
        return thread, stop


def pump_all(redis: Redis, queue: Queue, name: str = "drain") -> int:
    """Queue every waiting delivery at once, from this process (for `--burst` workers and tests). The
    default name is the one earlier releases gave this pump (its liveness key, `core.keys.intake_alive`)."""
    return Pump(redis, queue, name).pump_all()
