"""The workers' own keys: the intake list, fan-outs, wake-ups, outboxes and their leases, the watchdog,
the reconcile and redelivery slots, the pacer, the freeze ruleset's records and marks."""

from __future__ import annotations

from core.keys.base import PREFIX, repo_prefix


def intake(queue: str) -> str:
    """List of verified, not yet queued webhook deliveries (`core.deliveries.pack`): the receiver pushes
    on the left, the intake pump takes from the right. One per rq queue, so deployments sharing a Redis
    under different queue names never take each other's deliveries."""
    return f"{PREFIX}:intake:{queue}"


def intake_taken(queue: str, pump: str) -> str:
    """List: the entries one pump has taken from the intake and not yet turned into rq jobs."""
    return f"{PREFIX}:intake:{queue}:taken:{pump}"


def intake_pumps(queue: str) -> str:
    """Set of pump names that may hold taken entries (a dead pump's are put back by the others)."""
    return f"{PREFIX}:intake:{queue}:pumps"


def intake_dead(queue: str) -> str:
    """List of JSON records, newest first: intake entries the pump could not parse or queue, each with
    its reason and (up to `state.dead_letters.KEEP_BYTES`) the entry itself; capped at
    `state.dead_letters.KEEP` records. No TTL: an operator reads them (`merge-hold doctor`) and deletes the key."""
    return f"{PREFIX}:intake:{queue}:dead"


def intake_dead_total(queue: str) -> str:
    """Integer: how many intake entries were ever set aside as dead letters (the metric's counter)."""
    return f"{PREFIX}:intake:{queue}:dead:total"


def intake_alive(queue: str, pump: str) -> str:
    """Expiring heartbeat of one pump; when it is gone the pump's taken entries go back to the intake."""
    return f"{PREFIX}:intake:{queue}:alive:{pump}"


def fanout(repo: str) -> str:
    """Hash: the repo's fan-out progress (generations wanted/done, the pass and its cursor)."""
    return f"{repo_prefix(repo)}:fanout"


def fanout_plan(repo: str) -> str:
    """List: the open PR numbers of the current fan-out pass, most-mergeable first."""
    return f"{repo_prefix(repo)}:fanout:plan"


def fanout_lease(repo: str) -> str:
    """The run token of the fan-out working on the repo (expires if its worker dies)."""
    return f"{repo_prefix(repo)}:fanout:lease"


def fanout_queued(repo: str) -> str:
    return f"{repo_prefix(repo)}:fanout:queued"


def wake(job_id: str) -> str:
    """Set NX once a clock-driven recompute (``wake-…`` job) is scheduled, so it is scheduled once."""
    return f"{PREFIX}:wake:{job_id}"


def outbox(bucket: str) -> str:
    """Sorted set of the paced GitHub writes still to make for one installation (`core.outbox`: ``repo#number``
    whose status differs from their verdict, merge groups, freeze marks), most-mergeable first."""
    return f"{PREFIX}:outbox:{bucket}"


def outbox_lease(bucket: str) -> str:
    """The run token of the worker draining an outbox (expires if that worker dies)."""
    return f"{PREFIX}:outbox:{bucket}:lease"


OUTBOXES = f"{PREFIX}:outboxes"
"""Set of the outbox buckets that may hold pending writes (the watchdog looks at each)."""


def outbox_drain_queued(bucket: str) -> str:
    """A fresh drain job of this outbox is waiting to start (set with the job, deleted when it starts,
    expires after a day): one waiting drain per outbox, however many writes ask for one."""
    return f"{PREFIX}:outbox:{bucket}:drain-queued"


def outbox_mark_wait(bucket: str) -> str:
    """The run token of a drain that keeps the outbox's lease only to wait for a freeze mark's or a check
    run's slot (the pacer's lowest priority may be far): a status arriving meanwhile takes the lease over."""
    return f"{PREFIX}:outbox:{bucket}:mark-wait"


def bulk_queues(queue: str) -> str:
    """Set of the per-installation bulk rq queue names beside the interactive queue ``queue``: the
    workers listen to each (`state.queueing.bulk_queue`), round robin after the interactive one."""
    return f"{PREFIX}:bulk-queues:{queue}"


def bootstrap(installation_id: int | str) -> str:
    """Hash of an installation's latest bootstrap: ``started`` (epoch seconds) and ``repos`` adopted;
    kept a week after its last start (doctor, /setup, the dashboard)."""
    return f"{PREFIX}:bootstrap:{installation_id}"


def bootstrap_repos(installation_id: int | str) -> str:
    """Set of the repos an installation's bootstrap adopts (its progress counts their open PRs); kept as
    long as `bootstrap`."""
    return f"{PREFIX}:bootstrap:{installation_id}:repos"


BOOTSTRAPS = f"{PREFIX}:bootstraps"
"""Set of the installation ids with a bootstrap record (doctor, /setup and the dashboard list them)."""


def worker_alive(name: str) -> str:
    """Refreshed every second by a live `merge-hold worker`; its absence means the worker is gone."""
    return f"{PREFIX}:worker:{name}:alive"


def dequeued_seen(queue: str, job_id: str) -> str:
    """When the watchdog first saw a job dequeued and not started (rq's intermediate list)."""
    return f"{PREFIX}:dequeued:{queue}:{job_id}"


WATCHED_WORKERS = f"{PREFIX}:workers"
"""Set of `merge-hold worker` names that keep an alive key: only their jobs are rescued (a plain rq
worker's are left to rq's own abandoned-job handling)."""


WATCHDOG_LOCK = f"{PREFIX}:watchdog"
"""One worker at a time rescues the jobs of dead workers."""


def reconcile_slot(slot: int) -> str:
    """Set NX by the one worker that enqueues the scheduled reconcile of period ``slot``."""
    return f"{PREFIX}:reconcile:{slot}"


def redelivery_asked(guid: str) -> str:
    """Set NX once a failed delivery's redelivery was asked of GitHub."""
    return f"{PREFIX}:redelivered:{guid}"


def sweep_slot(slot: int) -> str:
    """Set NX by the one worker that schedules the redelivery sweep of period ``slot``."""
    return f"{PREFIX}:sweep:{slot}"


APP_SLUG = f"{PREFIX}:app:slug"
"""Our App's slug as `GET /app` answered it (cached a day)."""


def pacer(bucket: str) -> str:
    """Hash: the shared write pacer of one GitHub installation (token bucket and pause)."""
    return f"{PREFIX}:pace:{bucket}"


def pacer_urgent(bucket: str) -> str:
    """String with a TTL: urgent writes of one installation are waiting (a freeze's or a thaw's
    rulesets); while it lives its pacer hands no slot to a low-priority write."""
    return f"{PREFIX}:pace:{bucket}:urgent"


def pacer_hour(bucket: str) -> str:
    """Sorted set: the write slots one installation's pacer handed out in the last hour (score: ms)."""
    return f"{PREFIX}:pace:{bucket}:hour"


def freeze_ruleset(repo: str) -> str:
    """JSON: the state of the repo's `merge-hold freeze` ruleset as last written to GitHub (``id``,
    ``enforcement``, ``include``, ``at``); what `core.freeze_gate.binds` reads."""
    return f"{repo_prefix(repo)}:freeze-ruleset"


def freeze_fallback(repo: str) -> str:
    """String: why the repo's ruleset could not be written (a missing permission): its freezes go
    through statuses until a ruleset write succeeds."""
    return f"{repo_prefix(repo)}:freeze-fallback"


def freeze_sync_lock(repo: str) -> str:
    """Lock: one sync of the repo's freeze ruleset at a time (read, write, record)."""
    return f"{repo_prefix(repo)}:freeze-sync-lock"


def freeze_sync_queued(repo: str) -> str:
    """Flag: a ruleset sync of the repo is queued (coalesces the requests of a burst of recomputes)."""
    return f"{repo_prefix(repo)}:freeze-sync-queued"


def freeze_marks(bucket: str) -> str:
    """Sorted set of ``repo#number`` whose `merge-hold/freeze` status needs writing: urgent ones
    (score rank 0: an exemption, a stale success) before the descriptions (rank 1), then by age. Written
    by releases before issue 31 only: marks wait on the outbox now, and the old job moves these there."""
    return f"{PREFIX}:freeze-marks:{bucket}"


def posted_mark(repo: str, number: int) -> str:
    """JSON: the `merge-hold/freeze` status last posted on the PR (sha, state, description)."""
    return f"{repo_prefix(repo)}:pr:{number}:posted-mark"
