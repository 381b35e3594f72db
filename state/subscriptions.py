"""Which chat channels hear about which repos and orgs, and each channel's pending lines. Redis and rq only.

Shared by the web tier (``/hold subscribe`` writes a subscription; the hook-events endpoint notes
blocked merges) and every writer of the audit log (`state.audit.record` calls `note`). Noting only
appends a line to the channel's pending list and, for the first line of a batch, queues one post job
(`workers.chat.notify.post_job`) a few seconds later: the verdict path never talks to Slack or
Mattermost, never waits on them, and never fails because of them.

Keys: ``notify:subs:{target}`` hash channel -> subscription (target a lower-cased repo or org);
``notify:channel:{channel}`` the channel's latest subscription (where to post); ``notify:out:{channel}``
the pending lines; ``notify:armed:{channel}`` set while a post job is queued.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from redis import Redis
from rq import Queue

from core import jobs, keys
from core.notices import Notice, freed, hook_notice, notice, remembered
from state.decoding import as_text
from state.queueing import enqueue_after

log = logging.getLogger(__name__)

BATCH_SECONDS = 5
"""A post waits this long after the first line, so a burst (a freeze reaching every PR) is one message."""
INTERVAL_SECONDS = 20
"""At most one message per channel this often (Slack allows about one a second per channel; people
want far fewer): lines arriving meanwhile wait for the next message."""
PENDING_MAX = 500
"""Lines kept per channel while its chat is down; older ones are dropped (the audit log has them all)."""
ARMED_TTL = 6 * 3600
"""Covers a post job's retries; should one be lost, the next line queues a new one after this."""
HELD_BY_TTL = 8 * 86400
"""What a held PR was held by is forgotten after this (a PR closed while held never goes free)."""


@dataclass(frozen=True)
class Subscription:
    platform: str  # "slack" | "mattermost"
    team_id: str
    channel_id: str
    channel_name: str
    webhook: str
    """Mattermost's incoming webhook URL (under MATTERMOST_URL); empty for Slack."""
    queue: str
    """The rq queue post jobs go to (the subscribing server's MERGE_HOLD_QUEUE)."""
    by: str

    @property
    def channel(self) -> str:
        return channel_key(self.platform, self.team_id, self.channel_id)


def channel_key(platform: str, team_id: str, channel_id: str) -> str:
    return f"{platform}:{team_id}:{channel_id}"


def subscribe(redis: Redis, target: str, sub: Subscription) -> bool:
    """Subscribe the channel to ``target``; False when it already was (its record is refreshed)."""
    raw = json.dumps(asdict(sub), separators=(",", ":"))
    with redis.pipeline() as pipe:
        pipe.hset(keys.notify_subscriptions(target), sub.channel, raw)
        pipe.set(keys.notify_channel(sub.channel), raw)
        added, _ = pipe.execute()
    return bool(added)


def unsubscribe(redis: Redis, target: str, channel: str) -> bool:
    return bool(redis.hdel(keys.notify_subscriptions(target), channel))


def channel_subscription(redis: Redis, channel: str) -> Subscription | None:
    raw = redis.get(keys.notify_channel(channel))
    return Subscription(**json.loads(raw)) if raw else None


def subscribers(redis: Redis, targets: tuple[str, ...]) -> dict[str, Subscription]:
    """Channel -> subscription, for every channel subscribed to any of ``targets``."""
    with redis.pipeline(transaction=False) as pipe:
        for target in targets:
            pipe.hgetall(keys.notify_subscriptions(target))
        found = pipe.execute()
    merged: dict[str, Subscription] = {}
    for table in found:
        for channel, raw in table.items():
            name = as_text(channel)
            merged[name] = Subscription(**json.loads(raw))
    return merged


def work_queue(redis: Redis, sub: Subscription) -> Queue:
    return Queue(sub.queue, connection=redis)


def arm(redis: Redis, sub: Subscription, delay: float) -> None:
    """Queue the channel's post job unless one is queued already."""
    if not redis.set(keys.notify_armed(sub.channel), "1", nx=True, ex=ARMED_TTL):
        return
    queue_post(redis, sub, delay)


def queue_post(redis: Redis, sub: Subscription, delay: float) -> None:
    """Queue the channel's post job ``delay`` seconds from now (the caller holds the armed flag)."""
    enqueue_after(work_queue(redis, sub), jobs.NOTIFY_POST, sub.channel, delay=delay,
                  description=f"notify {sub.channel}")


def deliver(redis: Redis, found: Notice) -> int:
    """Append the line to every subscribed channel's pending list; returns how many channels."""
    channels = subscribers(redis, found.targets)
    for sub in channels.values():
        with redis.pipeline(transaction=False) as pipe:
            pipe.rpush(keys.notify_pending(sub.channel), found.text)
            pipe.ltrim(keys.notify_pending(sub.channel), -PENDING_MAX, -1)
            pipe.execute()
        arm(redis, sub, BATCH_SECONDS)
    return len(channels)


def _verdict_change(redis: Redis, event: str, data: dict[str, Any]) -> Notice | None:
    """Freezes ending and holds expiring show only as a PR's verdict going free: remember, when a PR
    goes held, its freeze and timed holds (one hash field per PR, only in repos someone hears), and
    tell what ended when it goes free."""
    repo, number = data.get("repo"), data.get("number")
    if not isinstance(repo, str) or number is None:
        return None
    key, field = keys.notify_held_by(repo), str(number)
    if event == "verdict.held":
        kept = remembered(list(data.get("holds") or []))
        if kept and subscribers(redis, Notice(repo.split("/", 1)[0].lower(), repo.lower(), "").targets):
            redis.hset(key, field, json.dumps(kept))
            redis.expire(key, HELD_BY_TTL)
        return None
    raw = redis.hget(key, field)
    if raw is None:
        return None
    redis.hdel(key, field)
    return freed(repo, int(number), json.loads(raw), datetime.now(UTC))


def note(redis: Redis, event: str, data: dict[str, Any]) -> None:
    """The audit log's hook: queue the event's line for the channels that hear it. Never raises: a
    notification must not fail the write that caused it (the failure is logged)."""
    try:
        found = notice(event, data)
        if event in ("verdict.held", "verdict.free"):
            found = _verdict_change(redis, event, data) or found
        if found is not None:
            deliver(redis, found)
    except Exception:
        log.exception("could not queue the chat notification for %s", event)


def note_hook_records(redis: Redis, items: list[dict[str, Any]]) -> None:
    """Blocked agent merges among the hook's records (`POST /api/v1/hook-events`)."""
    for item in items:
        found = hook_notice(item)
        if found is None:
            continue
        try:
            deliver(redis, found)
        except Exception:
            log.exception("could not queue the chat notification for a hook record")
