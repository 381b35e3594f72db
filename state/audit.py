"""The audit log: every event merge-hold records, in one call — the repo's history (the dashboard's and
the PR page's), the global log (the API's ``/api/v1/events``), the process log, and the chat lines the
event makes for the channels subscribed to it (`state.subscriptions.note`, which never raises: a chat
outage never fails the write that caused the event), and the org's outgoing webhooks
(`state.outgoing.note`, the same way). Chat news and webhooks are read off the audit log, not told
separately, so nothing a subscriber or an endpoint hears is missing from the history.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from core import keys
from state import outgoing, subscriptions

log = logging.getLogger(__name__)

HISTORY_MAXLEN = 2_000
"""Audit events kept per repo (about 300 B each, ~600 KB a repo at most): the dashboard's recent history.
Older events are trimmed from Redis (design §7: ≤ 2 KB per tracked PR); every event is also written to
the process log (logger ``state.audit``, INFO), which is where long-term history lives."""
AUDIT_MAXLEN = 20_000
"""Audit events kept across all repos (the API's ``/api/v1/events``); older ones live in the log only."""


def record(redis: Redis, repo: str | None, event: str, **data: Any) -> None:
    """Append an audit event to the repo's history and the global log, and queue its chat lines."""
    fields: dict[Any, Any] = {"event": event, "data": json.dumps({"repo": repo, **data}, default=str),
              "at": datetime.now(UTC).isoformat(timespec="seconds")}
    log.info("audit %s %s", event, fields["data"])
    with redis.pipeline(transaction=False) as pipe:
        if repo:
            pipe.xadd(keys.history(repo), fields, maxlen=HISTORY_MAXLEN, approximate=True)
        pipe.xadd(keys.AUDIT, fields, maxlen=AUDIT_MAXLEN, approximate=True)
        pipe.execute()
    subscriptions.note(redis, event, {"repo": repo, **data})  # chat news: only appends to a channel's pending lines
    outgoing.note(redis, event, {"repo": repo, **data})  # outgoing webhooks: the same, per org endpoint
