"""Outgoing webhooks' keys (`state.webhook_endpoints`, `state.outgoing`, `workers.outgoing`), each under
its org's hash tag ``{owner}``: an org's endpoints, each endpoint's pending messages and delivery log, and what the
freeze clock last announced."""

from __future__ import annotations

from core.keys.base import PREFIX


def _org(org: str) -> str:
    return f"{PREFIX}:{{{org.lower()}}}:webhooks"


def webhook_endpoints(org: str) -> str:
    """Hash, no TTL: endpoint id -> JSON of an endpoint the org registered (URL, events, signing secret)."""
    return f"{_org(org)}:endpoints"


def webhook_pending(org: str, endpoint: str) -> str:
    """List: message ids waiting for the endpoint, oldest first (capped; the log keeps what was dropped)."""
    return f"{_org(org)}:out:{endpoint}"


def webhook_log(org: str, endpoint: str) -> str:
    """Hash: message id -> JSON delivery record (the signed body, its attempts, its state), the newest
    `state.outgoing.LOG_MAX` kept (with `webhook_log_order`)."""
    return f"{_org(org)}:log:{endpoint}"


def webhook_log_order(org: str, endpoint: str) -> str:
    """Sorted set: message id -> time it was made (epoch seconds): the delivery log's order, for trimming."""
    return f"{_org(org)}:logorder:{endpoint}"


def webhook_armed(org: str, endpoint: str) -> str:
    """Set NX with a TTL while the endpoint's delivery job is queued or scheduled (one at a time)."""
    return f"{_org(org)}:armed:{endpoint}"


def webhook_health(org: str, endpoint: str) -> str:
    """Hash: ``streak`` (failed attempts in a row), ``last_at``, ``last`` (what the last attempt got): the
    endpoint's backoff, reset by a success."""
    return f"{_org(org)}:health:{endpoint}"


def webhook_windows(org: str) -> str:
    """Hash: ``REPO\\x00WINDOW`` -> end (ISO) of each freeze window the freeze clock announced as started
    and not yet as ended; field ``_seeded`` once the clock has looked (so the first look announces nothing)."""
    return f"{_org(org)}:windows"


def webhook_timed(org: str) -> str:
    """Sorted set: scope -> expiry (epoch seconds) of each timed room hold announced as placed, so that its
    expiry is announced as its end (a lift by hand removes it first)."""
    return f"{_org(org)}:timed"


def webhook_clock(org: str, moment: int) -> str:
    """Set NX with a TTL when the freeze clock's run at ``moment`` (epoch seconds) is scheduled: one job."""
    return f"{_org(org)}:clock:{moment}"


def webhook_clock_lock(org: str) -> str:
    """The org's freeze clock runs under this lock (a redis-py lock with a timeout): one look at a time."""
    return f"{_org(org)}:clock-lock"
