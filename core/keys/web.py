"""The web tier's and the chat's keys, and the global sets and streams: sessions, chat links, the
managed repos, the audit log, the hook's records, the dry run's statuses."""

from __future__ import annotations

from core.keys.base import PREFIX


def web_session(sid: str) -> str:
    """JSON: a dashboard user signed in with GitHub (login and their user access token), with a TTL."""
    return f"{PREFIX}:web:session:{sid}"


def user_repos(login: str) -> str:
    """JSON list: the repos a signed-in GitHub user may read (lower-cased), cached at most 10 minutes."""
    return f"{PREFIX}:web:repos:{login.lower()}"


CHAT_LINK_TTL = 600
"""Seconds a `/hold link` code lives (10 minutes): long enough to open the page and sign in, short enough
that a code pasted somewhere by mistake is soon worth nothing."""


def chat_link_code(code: str) -> str:
    """JSON of the chat identity (platform, team, user id and name) a one-time `/hold link` code names;
    expires after `CHAT_LINK_TTL`, deleted when used. Under the tag of `CHAT_LINKS`: one transaction
    consumes the code and writes the link."""
    return f"{PREFIX}:{{chat-links}}:code:{code}"


CHAT_LINKS = f"{PREFIX}:{{chat-links}}:links"
"""Hash, no TTL: ``github:LOGIN`` (lower-cased) -> JSON of the chat identity linked to that GitHub login,
``chat:PLATFORM:TEAM:USER`` -> the login (the way back, so a new link of either side replaces the old),
``pending:PLATFORM:TEAM:USER`` -> the identity's one outstanding code (a new `/hold link` or
`/hold unlink` voids it). Both ways are written in one transaction (`state.chat_links`)."""


MANAGED_REPOS = f"{PREFIX}:repos"
"""Set of every managed repo (lower-cased ``owner/repo``)."""


AUDIT = f"{PREFIX}:audit"
"""Stream of all audit events across repos (the API's ``/api/v1/events``)."""


HOOK_EVENTS = f"{PREFIX}:hook-events"
"""Stream the agent hook appends ``hook.gate.fired`` records to (record only, never consulted)."""


DRY_RUN_STATUSES = f"{PREFIX}:dry-run:statuses"
"""List of statuses the dry-run GitHub client would have posted (newest first)."""


def notify_subscriptions(target: str) -> str:
    """Hash: channel (``PLATFORM:TEAM:CHANNEL``) -> JSON subscription, for one repo or org (lower-cased)."""
    return f"{PREFIX}:notify:subs:{target.lower()}"


def notify_channel(channel: str) -> str:
    """JSON: the subscribed channel's record (where and how to post), kept while it has a subscription."""
    return f"{PREFIX}:notify:channel:{channel}"


def notify_pending(channel: str) -> str:
    """List: the channel's lines waiting to be posted as one message (trimmed to the newest)."""
    return f"{PREFIX}:notify:out:{channel}"


def notify_armed(channel: str) -> str:
    """Set NX with a TTL while a post job for the channel is queued (one at a time)."""
    return f"{PREFIX}:notify:armed:{channel}"


def notify_sent(channel: str) -> str:
    """Set with a TTL of the channel's posting interval after each message: the chat's rate limit."""
    return f"{PREFIX}:notify:sent:{channel}"


def notify_held_by(repo: str) -> str:
    """Hash: PR number -> JSON of the freeze and timed holds it went held with (only in repos someone hears,
    with a TTL), so the chat line can say what ended when it goes free (lower-cased repo)."""
    return f"{PREFIX}:notify:held-by:{repo.lower()}"


SETUP_TOKEN = f"{PREFIX}:setup:token"
"""The one-time token `/setup` shows in the server's log (set NX by the first web worker to start, deleted
once the App is registered): every gunicorn worker shows the same page."""


def setup_state(state: str) -> str:
    """Set with a TTL while a `/setup` manifest flow's ``state`` is unanswered; deleted when GitHub's
    redirect brings it back (once)."""
    return f"{PREFIX}:setup:state:{state}"
