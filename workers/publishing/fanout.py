"""Fan-out: after a room hold on a repo, a branch glob or an org is placed or lifted, record the verdict of
every open PR it may touch at once, and hand their status writes to the outbox (`workers.publishing.outbox`:
paced under the write rate, most-mergeable first).

The hook and the API read verdict records, not GitHub: so the records are what must not lag. A pass
records every PR within seconds (one PR's lock at a time, no GitHub write), putting each whose posted
status differs on its installation's outbox in plan order; the outbox's drain then posts them, paced.
An org freeze over 1,000 PRs is therefore "held" for the hook and the API at once, while GitHub sees
the statuses arrive at the configured rate.

Progress lives in Redis (``keys.fanout``), so the work survives a worker's death:

- ``want`` counts requests; a *pass* serves every request made before it started. A request made
  while a pass runs makes the running job start a new pass at once (requests coalesce: however many
  arrive, one more pass runs). Every record reads the latest holds under the PR's lock, so the last
  pass leaves no stale verdict behind.
- A pass lists the repo's open PRs (100 a page), records their facts, and stores the ordered numbers
  (``keys.fanout_plan``) and a ``cursor``. A re-run resumes at the cursor without listing again.
- The job works in slices of `SLICE_SECONDS` and re-enqueues itself on its installation's bulk queue
  (`state.queueing.bulk_queue`), so a long fan-out (PRs whose history must be read first) never hogs a
  worker nor outlives rq's job timeout; a slice ends early, after one PR at least, as soon as
  interactive jobs wait (they go first, then every other installation's bulk work takes its turn). One run token
  (``keys.fanout_lease``) passes from slice to slice; a job that rq retries after its work-horse died
  carries the same token and takes over at once, while a second job finds the lease taken and leaves
  the work to its owner.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass
from functools import partial

from github import GithubException
from redis import Redis, WatchError
from redis.client import Pipeline
from redis.exceptions import LockError

from core import jobs, keys
from core.prstate import record_facts
from core.scopes import scope_repo
from state import audit, store
from state.decoding import as_text
from state.queueing import bulk_queue, create_job, request_deploy_recheck
from workers.github.dry_run import DryRunGateway
from workers.github.gateway import NotFound
from workers.github.pulls import facts_from_pull
from workers.publishing.locks import release_lease, take_lease
from workers.publishing.outbox import bucket_of, enqueue_drain
from workers.publishing.recompute import mergeability, record_locked
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

SLICE_SECONDS = 30.0
"""Work done by one job before it re-enqueues itself, letting webhook jobs in between (a slice records
at least one PR, whatever its length)."""
LEASE_SECONDS = 120
"""How long a dead run keeps others off before its lease lapses; renewed as the run progresses."""
QUEUED_TTL = 600
CHUNK = 50
"""PRs recorded between two progress writes (and looks for a newer request): a crash records at most
this many again, which changes nothing (a record is idempotent; only a differing status is queued)."""
PLAN_FRESH_SECONDS = 120.0
"""A pass started by a request made during another pass reuses that pass's listing when it is this
recent: PRs opened since then are published by their own `pull_request` event."""



@dataclass(frozen=True)
class Progress:
    want: int = 0
    gen: int = 0
    done: int = 0
    cursor: int = 0
    total: int = 0
    queued: int = 0
    listed_at: float = 0.0
    bootstrap: bool = False
    """The repo's bootstrap asked for a pass: its writes go most-recently-active first."""

    @classmethod
    def read(cls, redis: Redis, repo: str) -> Progress:
        raw = {as_text(k): as_text(v) for k, v in redis.hgetall(keys.fanout(repo)).items()}

        def number(name: str) -> int:
            return int(raw.get(name) or 0)

        return cls(want=number("want"), gen=number("gen"), done=number("done"), cursor=number("cursor"),
                   total=number("total"), queued=number("queued"), listed_at=float(raw.get("listed_at") or 0),
                   bootstrap=bool(number("bootstrap")))




def repos_in_scope(redis: Redis, scope: str) -> list[str]:
    """The managed repos a scope reaches: its own repo, or every managed repo of an org."""
    repo = scope_repo(scope)
    if repo is not None:
        return [repo.lower()]
    owner = scope.lower()
    return sorted(r for r in (as_text(m) for m in redis.smembers(keys.MANAGED_REPOS))
                  if r.split("/", 1)[0] == owner)


def request_fanout(rt: Runtime, scope: str) -> list[str]:
    """Republish every open PR that a hold on ``scope`` may touch; returns the repos fanned out."""
    repos = repos_in_scope(rt.redis, scope)
    for repo in repos:
        request_repo_fanout(rt, repo)
    return repos


def request_repo_fanout(rt: Runtime, repo: str, *, slice_seconds: float = SLICE_SECONDS,
                        bootstrap: bool = False) -> bool:
    """Ask for one more pass over ``repo``; False when a job is already waiting to start (coalesced).
    The request, the ``queued`` flag and the job are one EXEC: no flag without its job. A ``bootstrap``
    pass orders its writes by the PRs' last activity, newest first, and is audited as the bootstrap."""
    queued = keys.fanout_queued(repo)
    with rt.redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(queued)  # type: ignore[no-untyped-call]
                waiting = bool(pipe.exists(queued))
                pipe.multi()
                pipe.hincrby(keys.fanout(repo), "want", 1)
                if bootstrap:
                    pipe.hset(keys.fanout(repo), "bootstrap", 1)
                if not waiting:
                    pipe.set(queued, "1", ex=QUEUED_TTL)
                    _enqueue(rt, repo, uuid.uuid4().hex, fresh=True, slice_seconds=slice_seconds, pipeline=pipe)
                pipe.execute()
                return not waiting
            except WatchError:
                continue


def _ensure_queued(rt: Runtime, repo: str, slice_seconds: float) -> bool:
    """Queue a fresh run unless one waits (a request that found the lease taken, served at release)."""
    queued = keys.fanout_queued(repo)
    with rt.redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(queued)  # type: ignore[no-untyped-call]
                if pipe.exists(queued):
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.set(queued, "1", ex=QUEUED_TTL)
                _enqueue(rt, repo, uuid.uuid4().hex, fresh=True, slice_seconds=slice_seconds, pipeline=pipe)
                pipe.execute()
                return True
            except WatchError:
                continue


def _enqueue(rt: Runtime, repo: str, token: str, *, fresh: bool, slice_seconds: float,
             pipeline: Pipeline | None = None) -> None:
    """On the repo's installation's bulk queue: after interactive jobs, round robin with the others'."""
    queue = bulk_queue(rt.queue, bucket_of(rt.redis, repo), pipeline)
    job = create_job(queue, jobs.FANOUT, (repo, token, fresh, slice_seconds), description=f"fan-out {repo}")
    queue.enqueue_job(job, pipeline=pipeline)


def fanout_job(repo: str, token: str, fresh: bool = True, slice_seconds: float = SLICE_SECONDS) -> str:
    """The rq job: one slice of the repo's fan-out under run token ``token``. A fresh job answers a
    request; a continuation (``fresh=False``) carries on its run. rq's retry of either keeps the token,
    so it takes over the lease its dead predecessor left."""
    rt = current()
    if fresh:
        rt.redis.delete(keys.fanout_queued(repo))
        request_deploy_recheck(rt.redis, rt.queue, repo)  # a hold changed: a waiting deployment may be free now
    if not _take_lease(rt.redis, repo, token):
        return "busy: another run owns this fan-out and will serve the request"
    rt.redis.hset(keys.fanout(repo), mapping={"pid": os.getpid(), "host": socket.gethostname()})
    fan = FanOut(rt, repo, token)
    outcome = fan.run(time.monotonic() + slice_seconds)
    if fan.queued:
        enqueue_drain(rt, bucket_of(rt.redis, repo))  # the writes, paced; a drain already running takes them
    if outcome == "continued":
        _take_lease(rt.redis, repo, token)
        _enqueue(rt, repo, token, fresh=False, slice_seconds=slice_seconds)
        progress = Progress.read(rt.redis, repo)
        return f"continued at {progress.cursor}/{progress.total}"
    release_lease(rt.redis, keys.fanout_lease(repo), token)
    # A request that came in after our last look but before the release found the lease taken and
    # left: serve it.
    progress = Progress.read(rt.redis, repo)
    if progress.want > progress.done:
        _ensure_queued(rt, repo, slice_seconds)
    return outcome


def _installation(redis: Redis, repo: str) -> int | None:
    meta = store.load_repo(redis, repo)
    return meta.installation_id if meta is not None else None


def _take_lease(redis: Redis, repo: str, token: str) -> bool:
    return take_lease(redis, keys.fanout_lease(repo), token, LEASE_SECONDS)


class FanOut:
    """One slice of work on one repo, under the run's lease: records, no GitHub writes."""

    def __init__(self, rt: Runtime, repo: str, token: str) -> None:
        self.rt = rt
        self.repo = repo
        self.token = token
        self.key = keys.fanout(repo)
        self.lease_renewed = time.monotonic()
        self.queued = 0
        """PRs this slice put on the outbox (a drain is asked for when the slice ends)."""

    def run(self, deadline: float) -> str:
        """Work until the passes asked for are done ("done") or the slice is used up ("continued")."""
        redis = self.rt.redis
        recorded = 0
        while True:
            progress = Progress.read(redis, self.repo)
            if progress.want > progress.gen:
                self.start_pass(progress)
                continue
            if progress.cursor >= progress.total:
                if progress.done < progress.gen:
                    redis.hset(self.key, "done", progress.gen)
                    audit.record(redis, self.repo, "fanout.done", generation=progress.gen,
                                prs=progress.total, queued=progress.queued)
                    if progress.bootstrap and redis.hdel(self.key, "bootstrap"):
                        audit.record(redis, self.repo, "repo.bootstrapped", open_prs=progress.total,
                                     installation_id=_installation(redis, self.repo))
                return "done"
            if recorded and self.give_way(deadline):
                return "continued"
            chunk = redis.lrange(keys.fanout_plan(self.repo), progress.cursor, progress.cursor + CHUNK - 1)
            done = queued = 0
            for raw in chunk:
                if (recorded or done) and self.give_way(deadline):
                    break
                queued += self.record_one(int(raw), progress.bootstrap) == "pending"
                done += 1
                self.renew_lease()
            with redis.pipeline(transaction=False) as pipe:
                # A plan shorter than its total (never written whole): the pass is over.
                pipe.hincrby(self.key, "cursor", done if chunk else progress.total - progress.cursor)
                pipe.hincrby(self.key, "queued", queued)
                pipe.execute()
            self.queued += queued
            recorded += done

    def give_way(self, deadline: float) -> bool:
        """The slice ends: its time is used up, or interactive jobs wait (deliveries, chat commands)."""
        return time.monotonic() >= deadline or self.rt.interactive_waiting()

    def start_pass(self, progress: Progress) -> None:
        """A new pass serving every request so far: list the open PRs (unless a listing is fresh)."""
        redis = self.rt.redis
        fresh = progress.gen > 0 and time.time() - progress.listed_at < PLAN_FRESH_SECONDS
        listed_at = progress.listed_at if fresh else time.time()
        if not fresh:
            self.list_and_plan()
        total = int(redis.llen(keys.fanout_plan(self.repo)))
        redis.hset(self.key, mapping={"gen": progress.want, "cursor": 0, "total": total, "queued": 0,
                                      "listed_at": listed_at})
        log.info("fan-out %s: pass %s over %s open PRs", self.repo, progress.want, total)

    def list_and_plan(self) -> None:
        redis = self.rt.redis
        ranked: list[tuple[int, float, int]] = []
        if isinstance(self.rt.github, DryRunGateway):
            # Dry run lists nothing from GitHub: the PRs our records know are all there is.
            for number in store.open_numbers(redis, self.repo):
                state = store.load_pull(redis, self.repo, number)
                at = state.facts.at.timestamp() if state.facts else 0.0
                ranked.append((mergeability(state), -at, -number))
        for pull in self.rt.github.list_open_pulls(self.repo):
            number = int(pull["number"])
            facts = facts_from_pull(pull)
            state, _ = store.update_pull(redis, self.repo, number, partial(record_facts, facts=facts))
            redis.sadd(keys.open_prs(self.repo), number)
            ranked.append((mergeability(state), -facts.at.timestamp(), -number))
        ranked.sort()
        with redis.pipeline() as pipe:
            pipe.delete(keys.fanout_plan(self.repo))
            if ranked:
                pipe.rpush(keys.fanout_plan(self.repo), *(-n for _, _, n in ranked))
            pipe.execute()
        self.renew_lease()

    def record_one(self, number: int, bootstrap: bool = False) -> str:
        """Record one PR's verdict under its lock (the latest holds win); "pending" when its status is now
        on the outbox. The plan's order is the outbox's order within a mergeability rank."""
        try:
            outcome = record_locked(self.rt, self.repo, number, by_activity=bootstrap)
            if outcome is None:
                raise LockError(f"{self.repo}#{number}: the PR's lock stayed taken")  # rq retries the slice
            return outcome
        except (GithubException, NotFound) as refused:
            status = getattr(refused, "status", 404)
            if not 400 <= status < 500:
                raise  # GitHub's own trouble: rq retries the slice with backoff
            # This PR alone cannot be recorded (gone, its history unreadable...): its own events will
            # record it; the fan-out goes on with the others.
            log.warning("fan-out %s: skipped #%s: GitHub answered %s", self.repo, number, status)
            audit.record(self.rt.redis, self.repo, "fanout.skipped", number=number, status=status)
            return "skipped"

    def renew_lease(self) -> None:
        if time.monotonic() - self.lease_renewed > LEASE_SECONDS / 4:
            if not _take_lease(self.rt.redis, self.repo, self.token):
                raise LeaseLost(self.repo)
            self.lease_renewed = time.monotonic()


class LeaseLost(Exception):
    """Our run token expired and another run took the fan-out over (we were stalled too long)."""
