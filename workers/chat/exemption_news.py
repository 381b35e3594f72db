"""Telling the grantor that a push ended an exemption (`core.jobs.EXEMPTION_NEWS`, queued by
`workers.publishing.exemption_ends`).

- An exemption granted from chat: one message in the room it came from — Slack through the bot
  (``chat.postMessage``, SLACK_BOT_TOKEN), Mattermost through the channel's incoming webhook when the
  channel has one (``/hold subscribe … WEBHOOK-URL``). A room already subscribed to the repo or its org
  hears it with its notifications, and gets no second message.
- An exempt label: one reply on the PR (unless its repo config says ``feedback: off``), once per head.
- From the API or the page: nothing more than the audit log, the PR's page and subscribed rooms.
"""

from __future__ import annotations

import logging
from typing import Any

from core import exemptions, keys
from core.notices import Notice
from state import subscriptions as subs
from state.config_file import repo_config
from state.store import load_repo
from workers.chat.notify import NotifyError, post_mattermost, post_slack
from workers.events.pr_replies import post_once
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)


def tell(rt: Runtime, repo: str, number: int, news: dict[str, Any]) -> str:
    """Deliver one end's news; returns what was done (for the job's result and the tests)."""
    pr = f"{repo}#{number}"
    text = exemptions.ended_by_push(pr, str(news.get("by") or "?"), news.get("granted_head"), news.get("head"),
                                    str(news.get("reason") or ""))
    if news.get("kind") == "label":
        config, _error = repo_config(load_repo(rt.redis, repo))
        if config is not None and config.feedback == "off":
            return "not answered: feedback off"
        body = exemptions.label_ended_by_push(str(news.get("label")), str(news.get("by") or "?"),
                                              news.get("granted_head"), news.get("head"))
        marker = keys.answered(repo, f"label-ended:{number}:{news.get('label')}:{news.get('head')}")
        return post_once(rt, repo, number, marker, body)
    channel = str(news.get("channel") or "")
    platform, _, rest = channel.partition(":")
    team, _, channel_id = rest.partition(":")
    if not channel_id:
        return "no room to tell"
    hearing = subs.subscribers(rt.redis, Notice(repo.split("/", 1)[0].lower(), repo.lower(), "").targets)
    if channel in hearing:
        return "told with the room's notifications"
    try:
        if platform == "slack":
            post_slack(rt.settings, channel_id, text)
        else:
            sub = subs.channel_subscription(rt.redis, subs.channel_key(platform, team, channel_id))
            if sub is None or not sub.webhook:
                log.info("exemption end of %s not told in %s: the channel has no incoming webhook", pr, channel)
                return "no webhook for the room"
            post_mattermost(rt.settings, sub.webhook, text)
    except NotifyError as exc:  # not configured: retrying would not help
        log.warning("exemption end of %s not told in %s: %s", pr, channel, exc)
        return f"not told: {exc}"
    return "told the room"


def exemption_news_job(repo: str, number: int, news: dict[str, Any]) -> str:
    return tell(current(), repo, number, news)
