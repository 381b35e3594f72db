"""Step 7 of a delivery's path (docs/architecture.md): a delivery job runs the recomputes it asked for
itself, at once (the in-delivery recompute).

The delivery scope is explicit: `workers.events.dispatch` opens an `InDelivery` (`open_delivery`) on the
Runtime its handler gets, and when the handler returns runs what it collected
(`workers.publishing.recompute.run_in_delivery`), then closes it: `InDelivery.close` runs the replies
deferred until then (`after_delivery`). It rides on the Runtime rather than as a handler parameter so
that every handler keeps the one signature of the events table (`Handler`: runtime, payload) and the
helpers between a handler and the request (`apply_change`, `request_recompute`) need no extra argument;
every job but a delivery has ``rt.delivery`` None.

Why: a recompute asked for by a delivery was an rq job at the back of the queue, behind every delivery
queued meanwhile, and each rq job costs its own bookkeeping (a dozen Redis round trips). At 50
deliveries/s on two workers that doubled the jobs and put every status behind the backlog (design §7:
delivery -> status p50 <= 100 ms; measured before: p50 seconds, half the flips never posted in time).

Nothing of the publishing path's safety is given up (design §4 invariant 7). The recompute job is still written
in the same EXEC as the state change — as a *backstop*, scheduled `BACKSTOP_SECONDS` ahead instead of
queued (so an idle worker does not take it and wait on the PR's lock meanwhile). The delivery job runs
the same recompute in-process and only *after* it has finished cancels the backstop (`cancel_backstop`: off
the scheduled registry, or the queue if it is due already, and its hash deleted, in one Lua call). So:

- a worker killed at any point before the cancel leaves the backstop, which rq's scheduler queues
  within seconds (the watchdog also re-runs the delivery, which finds nothing new to record);
- a recompute that fails in-process (GitHub or Redis trouble) is logged and left to the backstop, queued at
  once (`queue_backstop_now`), which runs with its own retries;
- a PR whose lock is busy (another worker writing it) is left to the backstop rather than waited for.

Only the first `MAX_INLINE` PRs a delivery asks for are run in place: a repo-wide event (a config push, an
installation) queues the rest at once, where every worker shares them. Work that may wait — answering
the comment with a reaction — is run after the recomputes (`after_delivery`), so the status goes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from redis import WatchError
from rq import Queue

from state.recompute_requests import RecomputeRequest
from workers.runtime import Runtime

MAX_INLINE = 4
"""PRs one delivery recomputes itself; recomputes of more PRs are queued as usual."""
LOCK_WAIT = 0.5
"""How long an in-delivery recompute waits for the PR's lock before it leaves the work to its backstop."""
BACKSTOP_SECONDS = 5.0
"""How far ahead an in-delivery recompute's backstop job is scheduled (rq's scheduler queues it then)."""


@dataclass(frozen=True)
class Asked:
    """A recompute to run in place: its backstop job (to cancel once done), or none (`rerun_in_place`)."""

    queue: str
    repo: str
    number: int
    job_id: str


_CANCEL = """
local removed = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('LREM', KEYS[2], 0, ARGV[1])
if removed > 0 then
  redis.call('DEL', KEYS[3])
  return 1
end
return 0
"""
"""Take job ARGV[1] off the scheduled registry KEYS[1] (or queue KEYS[2]) and delete its hash KEYS[3]
— only if it was still waiting in one of them (not taken by a worker)."""


class InDelivery:
    """The delivery scope (`workers.runtime.DeliveryScope`): the recomputes one delivery asked for, to run
    in place when its handler returns (`workers.publishing.recompute.run_in_delivery`), and the work
    deferred until after them (run by `close`). Once closed, a recompute asked for is queued at once
    and work is run at once."""

    def __init__(self) -> None:
        self.requests: list[RecomputeRequest] = []
        self.reruns: list[Asked] = []
        self.deferred: list[Callable[[], object]] = []
        self.closed = False

    def prs(self) -> set[tuple[str, int]]:
        return {(a.repo.lower(), a.number) for a in self.asked()}

    def backstop_at(self, repo: str, number: int) -> datetime | None:
        """When a recompute of ``repo#number`` asked for now should run if not run in place: None (queue
        it now) once closed, or past `MAX_INLINE` PRs."""
        prs = self.prs()
        if self.closed or ((repo.lower(), number) not in prs and len(prs) >= MAX_INLINE):
            return None
        return datetime.now(UTC) + timedelta(seconds=BACKSTOP_SECONDS)

    def ask_in_place(self, queue: Queue, repo: str, number: int) -> RecomputeRequest:
        """The request a state write carries (`state.recompute_requests`): its job a backstop scheduled
        `BACKSTOP_SECONDS` ahead, which this delivery runs in place if the write commits (the request then
        names its job) — or, closed or past `MAX_INLINE` PRs, a job queued at once."""
        backstop = self.backstop_at(repo, number)
        request = RecomputeRequest(queue, repo, number, backstop_at=backstop)
        if backstop is not None:
            self.requests.append(request)
        return request

    def rerun_in_place(self, queue: Queue, repo: str, number: int) -> None:
        """Recompute ``repo#number`` in place too, with no backstop of its own to cancel: a delivery run
        again after its worker died finds its state recorded and its verdict older, while the first run's
        backstop may wait on rq's scheduler (whose lock can die with that worker for a minute)."""
        if not self.closed:
            self.reruns.append(Asked(queue.name, repo, number, ""))

    def asked(self) -> list[Asked]:
        """The recomputes to run in place, in the order asked: the requests whose job committed (a write
        that found nothing to change, or a recompute already waiting, added none), then the reruns."""
        committed = [Asked(r.queue.name, r.repo, r.number, r.job_id) for r in self.requests if r.job_id]
        return [*committed, *self.reruns]

    def defer(self, work: Callable[[], object]) -> None:
        """Run ``work`` once the delivery's recomputes are done (at once when they are)."""
        if self.closed:
            work()
        else:
            self.deferred.append(work)

    def close(self) -> None:
        """The recomputes ran: from now on nothing waits; the deferred work runs now, in order."""
        self.closed = True
        deferred, self.deferred = self.deferred, []
        for work in deferred:
            work()


def open_delivery(rt: Runtime) -> tuple[InDelivery, Runtime]:
    """A new delivery scope, and the Runtime carrying it that the delivery's handler gets
    (`workers.events.dispatch`)."""
    scope = InDelivery()
    return scope, replace(rt, delivery=scope)


def after_delivery(rt: Runtime, work: Callable[[], object]) -> None:
    """Run ``work`` after the delivery's recomputes (a reply, so the status goes first); at once outside one."""
    if rt.delivery is None:
        work()
    else:
        rt.delivery.defer(work)


def recompute_in_delivery(rt: Runtime, repo: str, number: int) -> None:
    """Also recompute ``repo#number`` in place at the delivery's end (see `InDelivery.rerun_in_place`)."""
    if rt.delivery is not None:
        rt.delivery.rerun_in_place(rt.queue, repo, number)


def cancel_backstop(queue: Queue, job_id: str) -> bool:
    """Remove a still-waiting backstop job and delete it; False when a worker took it already (or no job)."""
    if not job_id:
        return False
    from rq.job import Job

    script = queue.connection.register_script(_CANCEL)
    scheduled = queue.scheduled_job_registry.key
    return bool(script(keys=[scheduled, queue.key, Job.key_for(job_id)], args=[job_id]))


def queue_backstop_now(queue: Queue, job_id: str) -> bool:
    """Queue a backstop now (the in-process run did not happen): off the scheduled registry and onto
    the queue in one MULTI/EXEC; False when it was not waiting there (cancelled, or queued already)."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    if not job_id:
        return False
    registry = queue.scheduled_job_registry.key
    with queue.connection.pipeline() as pipe:
        while True:
            try:
                pipe.watch(registry)  # type: ignore[no-untyped-call]
                if pipe.zscore(registry, job_id) is None:
                    pipe.unwatch()
                    return False
                try:
                    job = Job.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
                except NoSuchJobError:
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.zrem(registry, job_id)
                queue.enqueue_job(job, pipeline=pipe)
                pipe.execute()
                return True
            except WatchError:
                continue
