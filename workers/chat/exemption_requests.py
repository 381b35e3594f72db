"""Telling a freeze's room that someone asked for an exemption from the PR's Checks tab (`core.jobs.EXEMPTION_REQUEST`,
queued by `workers.events.check_actions`).

One message per room that placed a hold the exemption would pass (``slack:TEAM/#channel`` as the hold's
origin says): Slack through the bot (``chat.postMessage``, SLACK_BOT_TOKEN), Mattermost through the
incoming webhook of that channel's subscription to the repo or its org. The message names the PR, the
clicker and the holder, and says how to grant it. A hold from the page or the API has no room: the request
is in the audit log, the PR's history and the rooms subscribed to the repo.
"""

from __future__ import annotations

import logging
from typing import Any

from core.holds import named
from core.notices import Notice
from state import subscriptions as subs
from workers.chat.notify import NotifyError, post_mattermost, post_slack
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)


def message(repo: str, number: int, request: dict[str, Any], hold: dict[str, Any]) -> str:
    reason = f" ({hold.get('reason')})" if hold.get("reason") else ""
    return (f"@{request.get('actor')} asks, from the PR's Checks tab, for {repo}#{number} to be exempted from "
            f"{named(str(hold.get('holder') or ''))}'s hold on {hold.get('scope')}{reason}: {request.get('pr_url')} — "
            f"grant it with `/hold exempt {repo}#{number} REASON`")


def _room(origin: str) -> tuple[str, str, str] | None:
    """``slack:acme/#ops`` -> (``slack``, ``acme``, ``#ops``)."""
    platform, _, rest = origin.partition(":")
    team, _, channel = rest.partition("/")
    if platform not in ("slack", "mattermost") or not channel.startswith("#"):
        return None
    return platform, team, channel


def _mattermost_room(rt: Runtime, repo: str, name: str) -> subs.Subscription | None:
    """The Mattermost channel of that name subscribed to the repo or its org (only a subscription knows its
    incoming webhook; the hold's origin names the channel, not its id)."""
    heard = subs.subscribers(rt.redis, Notice(repo.split("/", 1)[0].lower(), repo.lower(), "").targets)
    return next((sub for sub in heard.values() if sub.platform == "mattermost" and sub.channel_name == name), None)


def tell(rt: Runtime, repo: str, number: int, request: dict[str, Any]) -> str:
    told: list[str] = []
    seen: set[str] = set()
    for hold in request.get("holds") or []:
        origin = str(hold.get("origin") or "")
        room = _room(origin)
        if room is None or origin in seen:
            continue
        seen.add(origin)
        platform, _team, channel = room
        text = message(repo, number, request, hold)
        try:
            if platform == "slack":
                post_slack(rt.settings, channel, text)
            else:
                sub = _mattermost_room(rt, repo, channel.lstrip("#"))
                if sub is None or not sub.webhook:
                    log.info("exemption request for %s#%s not told in %s: no incoming webhook", repo, number, origin)
                    continue
                post_mattermost(rt.settings, sub.webhook, text)
        except NotifyError as exc:  # not configured: retrying would not help
            log.warning("exemption request for %s#%s not told in %s: %s", repo, number, origin, exc)
            continue
        told.append(origin)
    return f"told {', '.join(told)}" if told else "no room to tell"


def exemption_request_job(repo: str, number: int, request: dict[str, Any]) -> str:
    return tell(current(), repo, number, request)
