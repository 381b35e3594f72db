"""The post job: one channel's pending notification lines posted as one message, rate-limited.

Slack through `slack_sdk`'s Web API (``chat.postMessage`` with SLACK_BOT_TOKEN, at SLACK_API_URL);
Mattermost through the subscription's incoming webhook, which must lie under MATTERMOST_URL (checked
again here: the worker POSTs to it). Each message is escaped for its platform as it is posted
(`core.escaping`): the lines carry reasons and names from outside. A post that fails raises, so rq retries the job
(its row in `core.jobs`); the lines stay pending until a post succeeds.

Not a kind of outbox member (`core.outbox`: the GitHub writes of one installation, paced by its pacer and
written by its one drain). A chat message costs no GitHub write: it is paced per chat channel, by Slack's
limit (about one message a second per channel) and by people's patience (one every
`state.subscriptions.INTERVAL_SECONDS`); its lines wait to be joined into one message, not written one by
one in a rank; one channel hears repos of several installations; and it runs on the subscribing server's
queue, never on an installation's bulk queue, so a chat outage retrying never holds a status back. So each
channel keeps its own pending list (`core.keys.notify_pending`) and this job of its own.
"""

from __future__ import annotations

import json
import logging
import urllib.request
from typing import Any

from redis import Redis
from slack_sdk import WebClient

from core import keys
from core.chat_request import reply_url_allowed
from core.escaping import for_mattermost, for_slack
from core.notices import message
from foundation.settings import Settings
from state import subscriptions as subs
from state.decoding import as_text
from workers.runtime import current

log = logging.getLogger(__name__)

BATCH_LINES = 100
"""Lines taken per message (`core.notices.message` shows the first 20 and counts the rest)."""
POST_TIMEOUT = 10
"""Seconds a post may take: a hung chat server holds one worker this long at most, never a verdict."""


class NotifyError(RuntimeError):
    """A chat platform refused or could not take the message; rq retries the job."""


def post_slack(settings: Settings, channel_id: str, text: str) -> None:
    if not settings.slack_bot_token:
        raise NotifyError("SLACK_BOT_TOKEN is not set: Slack notifications cannot be posted")
    client = WebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url + "/", timeout=POST_TIMEOUT)
    # SlackApiError (ok: false, HTTP errors) propagates: the job fails and is retried. The text is
    # escaped here, on the final message (`core.escaping`): it carries reasons from outside.
    client.chat_postMessage(channel=channel_id, text=for_slack(text), unfurl_links=False, unfurl_media=False,
                            link_names=False)


def post_mattermost(settings: Settings, webhook: str, text: str) -> None:
    if not webhook or not reply_url_allowed(webhook, settings.mattermost_url):
        raise NotifyError("the subscription's webhook is not under MATTERMOST_URL")
    body = {"text": for_mattermost(text)}  # escaped on the final message (`core.escaping`)
    request = urllib.request.Request(webhook, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=POST_TIMEOUT) as response:
        if response.status >= 300:
            raise NotifyError(f"Mattermost answered {response.status}")


def post_pending(redis: Redis, settings: Settings, channel: str) -> str:
    """Post the channel's pending lines as one message, unless one went out less than
    `subscriptions.INTERVAL_SECONDS` ago (then the job comes back when it may)."""
    sub = subs.channel_subscription(redis, channel)
    pending = keys.notify_pending(channel)
    if sub is None:
        redis.delete(pending, keys.notify_armed(channel))
        return "unsubscribed"
    wait_ms = int(redis.pttl(keys.notify_sent(channel)))
    if wait_ms > 0:
        subs.queue_post(redis, sub, wait_ms / 1000)
        return "later"
    lines = [as_text(raw) for raw in redis.lrange(pending, 0, BATCH_LINES - 1)]
    if lines:
        text = message(lines)
        if sub.platform == "slack":
            post_slack(settings, sub.channel_id, text)
        else:
            post_mattermost(settings, sub.webhook, text)
    with redis.pipeline() as pipe:
        pipe.ltrim(pending, len(lines), -1)
        if lines:
            pipe.set(keys.notify_sent(channel), "1", px=max(1, int(subs.INTERVAL_SECONDS * 1000)))
        pipe.delete(keys.notify_armed(channel))
        pipe.execute()
    if redis.llen(pending):
        subs.arm(redis, sub, subs.INTERVAL_SECONDS)  # what came in meanwhile: the next message
    return f"posted {len(lines)}" if lines else "empty"


def post_job(channel: str) -> str:
    rt = current()
    return post_pending(rt.redis, rt.settings, channel)


def __getattr__(name: str) -> Any:
    """``drain_job``, this job's address until issue 31, still names it for jobs queued before (`core.jobs.MOVED`)."""
    from workers import moved_job

    return moved_job(__name__, name)
