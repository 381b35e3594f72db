"""Every rq job this service queues, one row each: its address and what rq keeps of it.

A job's address is an on-disk format: a job stored in Redis names its function by this dotted path, so
a worker of a later release must still import it (a job function that moves keeps an import at its
old path until no stored job can name it). The rows are plain data, no rq: the web tier and the core
read them too, and `state.queueing.options` turns a row into rq's keyword arguments.

Footprint (design §7, ≤ 2 KB of Redis per tracked PR): most jobs keep nothing of a success
(``result_ttl=0``) and keep a failure a bounded time, for `rq requeue` and for reading its traceback.
``None`` in a field means rq's own default (timeout 180 s, result 500 s, failure a year), kept where a
job has always run with it. A new job is one function plus one row here; a test imports every
address, and another fails on a ``"workers.…"`` address spelled anywhere else in the product.
"""

from __future__ import annotations

from dataclasses import dataclass

DAY = 24 * 3600

WORK = "work"
"""Queue role: the queue named in the settings (``MERGE_HOLD_QUEUE``)."""
BULK = "bulk"
"""Queue role: the bulk queue of the installation the job works for (`state.queueing.bulk_queue`; beside
the ``MERGE_HOLD_QUEUE`` queue, served after it, round robin between installations). Bootstraps,
fan-outs, outbox drains (statuses, freeze marks, check runs) and the reconcile: work that runs in slices
and gives way."""
SUBSCRIBER = "subscriber"
"""Queue role: the queue a chat subscription or an outgoing webhook endpoint recorded (the subscribing or
registering server's ``MERGE_HOLD_QUEUE``; `state.outgoing.delivery_queue` for the endpoints)."""


@dataclass(frozen=True)
class Job:
    address: str
    """The job function's dotted path, as stored with every queued job."""
    queue: str = WORK
    timeout: int | None = None
    """Seconds a run may take before rq kills its work-horse."""
    result_ttl: int | None = 0
    failure_ttl: int | None = DAY
    retry: tuple[int, ...] = ()
    """Pauses before each retry of a failed run (as many retries as pauses); empty: none."""


DELIVERY = Job("workers.events.dispatch.handle_delivery", failure_ttl=3 * DAY, retry=(2, 10, 60, 300, 900))
"""One GitHub webhook delivery: ``(event, delivery_id, raw JSON body)``. Transient failures (GitHub
5xx, a Redis blip) are retried with growing pauses within the hour; a failure (its body included)
stays three days, GitHub's own redelivery window. Finished ones keep nothing: at 50 deliveries/s ten
minutes of finished jobs with their 20 KB bodies held hundreds of MB only to remember successes."""

RECOMPUTE = Job("workers.publishing.recompute.recompute_job", timeout=180, retry=(1, 2, 5, 10, 20, 30, 60, 120))
"""One PR's verdict: it syncs at most one PR's history and drains one slice, PyGithub's own retries
included. GitHub or Redis trouble runs it again within seconds, then backs off (the reconcile catches
anything left once the retries are spent). Also the clock's wake-ups (timed holds, freeze edges)."""

OUTBOX_DRAIN = Job("workers.publishing.drain.drain_job", queue=BULK, timeout=180, retry=(0, 2, 5, 10, 20, 30, 60, 120))
"""The status writes of one installation's outbox. A drain whose work-horse died runs again at once
(under its job id, so it takes over its own lease); GitHub's trouble backs off."""

FANOUT = Job("workers.publishing.fanout.fanout_job", queue=BULK, timeout=900, result_ttl=600, failure_ttl=7 * DAY,
             retry=(0, 10, 60, 300, 900))
"""A repo's fan-out, one slice per run: a slice plus the longest one PR's record may take (its history
read, PyGithub's own retries). A work-horse killed mid-slice is retried at once (same run token: it
resumes at the cursor); GitHub or Redis failures back off. A failure is kept a week, a success ten
minutes (for watching a long fan-out go by)."""

BOOTSTRAP = Job("workers.events.bootstrap.bootstrap_job", queue=BULK, timeout=300, failure_ttl=7 * DAY,
                retry=(10, 60, 300))
"""One repo adopted by an installation: its config read, then its fan-out asked for (a bootstrap pass),
on the installation's bulk queue. GitHub's trouble backs off; the reconcile is behind it anyway."""

FREEZE_MARKS = Job("workers.publishing.freeze_marks.marks_job", queue=BULK, timeout=180)
"""Queued by releases before issue 31 only (freeze marks are outbox members now, written by its drain): it
moves the marks such a release left on their own sorted set onto the outbox and asks for a drain."""

FREEZE_SYNC = Job("workers.publishing.freeze_sync.freeze_sync_job", timeout=300)
"""A repo's freeze ruleset brought in step, then its PRs republished. Not retried: the run clears its
"queued" flag first, so the next recompute that asks queues another try."""

RECHECK_DEPLOYS = Job("workers.events.deployments.recheck_job", failure_ttl=None, retry=(5, 30, 120, 600, 1800))
"""A repo's waiting deployments re-checked once its freeze lifts. GitHub or Redis trouble backs off;
the reconcile sweep is behind it anyway."""

TAMPER_ANSWERS = Job("workers.events.tamper.answer_job")
"""The held PRs a gate change leaves to tell, paced a minute apart (GitHub allows about 80
content-creating requests a minute); each run queues the next."""

RECONCILE = Job("workers.ops.reconcile.reconcile_job", queue=BULK, timeout=900)
"""The periodic reconcile of every repo: five recomputes' worth of time. It hands on to a fresh run
between two repos when interactive jobs wait (its arguments: the last repo done, the statuses queued)."""

REDELIVERY_SWEEP = Job("workers.intake.redeliver.sweep_job", result_ttl=None, failure_ttl=None)
"""Asks GitHub to redeliver what failed; keeps itself scheduled every few minutes under fixed ids."""

NOTIFY_POST = Job("workers.chat.notify.post_job", queue=SUBSCRIBER, retry=(10, 60, 300, 900, 3600))
"""One chat channel's pending lines as one message. A failed post (chat down, 5xx, rate limited) is
retried with growing pauses, then kept in rq's failed registry; its lines stay pending."""

CHAT_COMMAND = Job("workers.chat.rooms.chat_command_job", result_ttl=600, failure_ttl=7 * DAY)
"""A slash command the web tier queued by name (it never imports workers); its reply goes to the
room's response URL."""

REPUBLISH = Job("workers.chat.rooms.republish_job", failure_ttl=7 * DAY)
"""Republish the PRs a scope reaches after a hold placed or lifted outside a chat job (API, dashboard)."""

DASHBOARD_COMMAND = Job("workers.dashboard.commands.dashboard_command_job", failure_ttl=7 * DAY)
"""A hold or lift made on a PR's page, queued by the web tier (it never imports workers)."""

WEBHOOK_DELIVERY = Job("workers.outgoing.deliver.deliver_job", queue=SUBSCRIBER, timeout=120, failure_ttl=7 * DAY,
                       retry=(10, 60, 300))
"""One org endpoint's outgoing webhooks, oldest first, one POST at a time (each at most
`workers.outgoing.post.TIMEOUT`). Its own retry schedule is per endpoint, not rq's: a failed POST records
the attempt and queues the job again after the next pause of `core.outgoing.RETRY_SCHEDULE` (the Standard
Webhooks specification's, up to a day apart), so a dead endpoint is asked once per pause however many
messages wait. rq's retries here only cover the job itself failing (Redis gone)."""

FREEZE_CLOCK = Job("workers.outgoing.clock.clock_job", queue=SUBSCRIBER, timeout=120, retry=(10, 60, 300))
"""An org's freeze windows and timed freezes looked at when one begins or ends (it schedules its own
next run): records ``freeze.started``/``freeze.ended`` for outgoing webhooks. Only for orgs with an
endpoint that wants them."""

EXEMPTION_NEWS = Job("workers.chat.exemption_news.exemption_news_job", failure_ttl=7 * DAY, retry=(10, 60, 300))
"""Tell the grantor that a push ended an exemption: the chat room it was granted from, or, for an exempt
label, the PR. Queued by the recompute that found it ended (never posted from the verdict path); a chat
or GitHub outage is retried a few times, then kept as failed (the audit log and the PR page have it)."""

CHECK_RUNS = Job("workers.publishing.check_runs.check_runs_job", queue=BULK, timeout=180)
"""Queued by releases before issue 31 only (check runs are outbox members now, written by its drain): it
moves the runs such a release left on their own sorted set onto the outbox and asks for a drain."""

EXEMPTION_REQUEST = Job("workers.chat.exemption_requests.exemption_request_job", failure_ttl=7 * DAY,
                        retry=(10, 60, 300))
"""Tell a freeze's room that someone asked, from the PR's Checks tab, for the PR to be exempted (queued by
the click's delivery, which never posts to chat itself); a chat outage is retried a few times."""

ALL: tuple[Job, ...] = (DELIVERY, RECOMPUTE, OUTBOX_DRAIN, FANOUT, BOOTSTRAP, FREEZE_MARKS, FREEZE_SYNC,
                        RECHECK_DEPLOYS, TAMPER_ANSWERS, RECONCILE, REDELIVERY_SWEEP, NOTIFY_POST, CHAT_COMMAND,
                        REPUBLISH, DASHBOARD_COMMAND, WEBHOOK_DELIVERY, FREEZE_CLOCK, EXEMPTION_NEWS, CHECK_RUNS,
                        EXEMPTION_REQUEST)
"""The closed set: every job any part of the product queues."""

MOVED: dict[str, Job] = {
    "workers.events.handle_delivery": DELIVERY,
    "workers.publish.recompute_job": RECOMPUTE,
    "workers.funnel.drain_job": OUTBOX_DRAIN,
    "workers.fanout.fanout_job": FANOUT,
    "workers.freeze_marks.marks_job": FREEZE_MARKS,
    "workers.freeze_sync.freeze_sync_job": FREEZE_SYNC,
    "workers.deployments.recheck_job": RECHECK_DEPLOYS,
    "workers.tamper.answer_job": TAMPER_ANSWERS,
    "workers.reconcile.reconcile_job": RECONCILE,
    "workers.redeliver.sweep_job": REDELIVERY_SWEEP,
    "workers.notify.drain_job": NOTIFY_POST,
    "workers.rooms.chat_command_job": CHAT_COMMAND,
    "workers.rooms.republish_job": REPUBLISH,
    "workers.dashboard_holds.dashboard_command_job": DASHBOARD_COMMAND,
    # Moved by issue 31 (resolved by the package the old module was in).
    "workers.chat.dashboard_holds.dashboard_command_job": DASHBOARD_COMMAND,
    "workers.events.fanout.fanout_job": FANOUT,
    "workers.events.freeze_sync.freeze_sync_job": FREEZE_SYNC,
    "workers.chat.notify.drain_job": NOTIFY_POST,  # "drain" is the outbox's word since issue 31
}
"""Addresses of the flat `workers/` layout (up to December 2026) and of modules moved since, which jobs
queued, scheduled or failed by a worker of that release still name: `workers`, `workers.events` and
`workers.chat` resolve them to the row's function (rq imports the longest importable module of an
address, then asks it for the rest). Kept until no stored job can name them: a failed job is kept a
week at most, a scheduled one (a timed hold's wake-up) until its moment, which can be months ahead."""


def moved(package: str, name: str) -> Job | None:
    """The row an old address ``package.name`` (``name`` may hold dots: ``funnel.drain_job``) names."""
    return MOVED.get(f"{package}.{name}")
