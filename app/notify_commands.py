"""``/hold subscribe TARGET`` and ``/hold unsubscribe TARGET``: a channel chooses what news it hears.

Who may: the target must lie within the orgs the workspace is bound to (checked before, like every
chat command). A repo may be subscribed by anyone who may hold a single PR from chat (the allow-list,
MERGE_HOLD_CHAT_ALLOWED_USERS; empty: anyone in a bound workspace), since the channel hears only what
its members could already list with ``/holds``; a whole org needs a chat admin (MERGE_HOLD_CHAT_ADMINS),
since it turns one channel into every repo's newsfeed. Unsubscribing follows the same rule, so nobody
silences a channel they could not have subscribed. On Mattermost the command names the channel's
incoming webhook, which must lie under MATTERMOST_URL (like a ``response_url``): the worker POSTs there.

The subscription is written here, in the web tier (one Redis write, well inside Slack's 3 s), not
queued: there is nothing to ask GitHub.
"""

from __future__ import annotations

from redis import Redis

from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, listed, reply_url_allowed
from foundation.settings import Settings
from state import subscriptions

NEEDS_WEBHOOK = ("On Mattermost, name the channel's incoming webhook: `/hold subscribe TARGET "
                 "https://YOUR-MATTERMOST/hooks/ID` (it must be on this server's MATTERMOST_URL).")
ORG_NEEDS_ADMIN = ("Subscribing a channel to a whole organisation needs a merge-hold chat admin "
                   "(MERGE_HOLD_CHAT_ADMINS); a single repo (`owner/repo`) you may subscribe yourself.")
NOT_ALLOWED = "You are not on the list of people who may manage merge-hold from chat."
NO_SLACK_TOKEN = "This server has no SLACK_BOT_TOKEN, so it cannot post to Slack: ask its operator."


def subscription_refusal(settings: Settings, req: ChatRequest, command: ChatCommand, *, admin: bool) -> str | None:
    """Why this user may not (un)subscribe this channel to the command's target, or None."""
    scope = command.scope or ""
    if "/" not in scope and not admin:
        return ORG_NEEDS_ADMIN
    allowed = admin or not settings.chat_allowed_users or listed(
        settings.chat_allowed_users, req.platform, req.team_id, req.user_id, req.channel_id)
    if not allowed:
        return NOT_ALLOWED
    if command.action == "subscribe" and req.platform == "mattermost" and (
            not command.webhook or not reply_url_allowed(command.webhook, settings.mattermost_url)):
        return NEEDS_WEBHOOK
    if command.action == "subscribe" and req.platform == "slack" and not settings.slack_bot_token:
        return NO_SLACK_TOKEN
    return None


def apply_subscription(redis: Redis, settings: Settings, req: ChatRequest, command: ChatCommand) -> str:
    """Record or remove the subscription; the reply for the user."""
    target = (command.scope or "").lower()
    channel = subscriptions.channel_key(req.platform, req.team_id, req.channel_id)
    where = f"#{req.channel_name or req.channel_id}"
    if command.action == "unsubscribe":
        if subscriptions.unsubscribe(redis, target, channel):
            return f"{where} no longer hears about {target}."
        return f"{where} was not subscribed to {target}."
    sub = subscriptions.Subscription(
        platform=req.platform, team_id=req.team_id, channel_id=req.channel_id, channel_name=req.channel_name,
        webhook=command.webhook if req.platform == "mattermost" else "", queue=settings.queue_name,
        by=req.user_name or req.user_id)
    fresh = subscriptions.subscribe(redis, target, sub)
    news = ("holds placed and lifted, exemptions, freezes and a closed tree, held PRs approved or queued, "
            "and agents' merges stopped by the hook")
    return (f"{where} now hears about {target}: {news}." if fresh
            else f"{where} was already subscribed to {target}; its settings are refreshed.")
