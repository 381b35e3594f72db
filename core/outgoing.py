"""Outgoing webhooks, pure: the event types an org may register for, the one table that turns an audit
event into one, the message every endpoint receives, and the retry schedule.

Events are read off the audit log (`state.audit.record` calls `state.outgoing.note`), like chat news: what
an endpoint hears is always in the history too, and no code path tells it separately. The freeze clock
(`workers.outgoing.clock`) records the changes nothing else records — a freeze window beginning or ending
(``window.started``, ``window.ended``), a timed room hold running out (``room.expired``) — as audit events,
and they reach the endpoints the same way.

Messages follow the Standard Webhooks specification: a JSON body ``{"type", "timestamp", "data"}``
(``timestamp`` is when the event happened, ISO 8601 UTC), sent as ``POST`` with ``webhook-id`` (the same
for every attempt and redelivery: the receiver's idempotency key), ``webhook-timestamp`` (this attempt)
and ``webhook-signature`` (``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body`` under the endpoint's
``whsec_`` secret; signed in `workers.outgoing.deliver`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.scopes import scope_repo

TYPES: dict[str, str] = {
    "hold.placed": "a pull request held: a `/hold` comment, a changes-requested review, a room hold on the PR "
                   "(chat, API, dashboard)",
    "hold.lifted": "a pull request's hold lifted: `/unhold`, `/hold cancel`, a room hold on the PR lifted or "
                   "run out",
    "freeze.started": "a repo, branch or org frozen: a room hold on it placed, a freeze window begun, the tree "
                      "closer closing a branch",
    "freeze.ended": "a freeze over: its room hold lifted or expired, its window ended, the tree open again",
    "exemption.granted": "one pull request let through room holds and freezes",
    "exemption.ended": "an exemption ended (lifted by hand)",
    "incident.recorded": "a pull request merged while merge-hold held it",
    "gate.weakened": "a branch stopped requiring merge-hold (protection or ruleset changed, App suspended), "
                     "or someone forged merge-hold's status",
}
"""Event type -> what it means (the page and docs/api.md list them). The closed set an endpoint picks from."""

RETRY_SCHEDULE: tuple[int, ...] = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
"""Seconds before each retry after a failed attempt: the Standard Webhooks specification's example schedule
(5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h). The endpoint backs off as a whole: one failed
attempt holds its queue back until the next step, however many messages wait, so a dead endpoint gets
one request per step and never a storm."""
GIVE_UP_AFTER = timedelta(seconds=sum(RETRY_SCHEDULE))
"""A message not delivered this long (about three days) after it was made, or redelivered, fails: the
delivery log shows it, and the page's Redeliver button sends it again."""
MAX_RETRY_AFTER = 86400
"""A ``Retry-After`` longer than a day is read as a day."""
JITTER = 0.1
"""Each pause is stretched or shrunk by up to this fraction (the specification recommends jitter, so
retries of many endpoints that failed together do not arrive together)."""


def retry_delay(streak: int, retry_after: float | None = None, spread: float = 0.5) -> float:
    """Seconds to wait after the ``streak``-th failed attempt in a row; ``spread`` in [0, 1) picks the
    jitter (0.5: none); the receiver's ``Retry-After`` is honoured when it asks for longer."""
    base = RETRY_SCHEDULE[min(max(streak, 1), len(RETRY_SCHEDULE)) - 1]
    delay = base * (1 + JITTER * (2 * spread - 1))
    if retry_after is not None and retry_after > delay:
        delay = min(retry_after, MAX_RETRY_AFTER)
    return delay


@dataclass(frozen=True)
class Outgoing:
    """One event to send: its type, the org whose endpoints hear it, and its ``data``."""

    type: str
    org: str
    data: dict[str, Any]


def _org(data: dict[str, Any]) -> str:
    where = str(data.get("repo") or data.get("scope") or "")
    return where.split("/", 1)[0].split("#", 1)[0].split("@", 1)[0].lower()


def _base(data: dict[str, Any]) -> dict[str, Any]:
    """What every message's ``data`` starts with: where it happened."""
    repo = data.get("repo")
    found: dict[str, Any] = {"org": _org(data), "repo": repo}
    if data.get("number") not in (None, ""):
        found["number"] = data["number"]
    found["scope"] = str(data.get("scope") or (f"{repo}#{data['number']}" if "number" in found else repo or ""))
    return found


def _pick(data: dict[str, Any], *names: str, **renamed: str) -> dict[str, Any]:
    """``names`` as they are, ``renamed`` as new=old; absent ones are null (every type has a fixed shape)."""
    return {**{n: data.get(n) for n in names}, **{new: data.get(old) for new, old in renamed.items()}}


def _is_pr(data: dict[str, Any]) -> bool:
    return "#" in str(data.get("scope") or "")


def _comment(kind: str) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None]:
    def build(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        message = str(data.get("message") or "")
        # Every approval and dismissal clears its reviewer's register, held or not: not a lift to tell.
        if kind == "hold.lifted" and (message.endswith(" approved") or " dismissed" in message):
            return None
        return kind, {"source": "pull_request", **_pick(data, "reason", "message", actor="actor", holder="target")}
    return build


def _room(data: dict[str, Any], placed: bool) -> tuple[str, dict[str, Any]]:
    if placed:
        kind = "hold.placed" if _is_pr(data) else "freeze.started"
        return kind, {"source": "room", **_pick(data, "reason", "origin", "expires_at", actor="holder",
                                                holder="holder")}
    kind = "hold.lifted" if _is_pr(data) else "freeze.ended"
    return kind, {"source": "room", **_pick(data, "origin", "holders", actor="actor"), "ended": "lifted"}


def _window(kind: str, ended: str | None) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]:
    def build(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        extra = _pick(data, "name", "reason", "branches", "ends_at")
        return kind, {"source": "window", **extra, **({"ended": ended} if ended else {})}
    return build


def _expired(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = "hold.lifted" if _is_pr(data) else "freeze.ended"
    return kind, {"source": "room", **_pick(data, "origin", "holders", "expires_at"), "actor": None,
                  "ended": "expired"}


TABLE: dict[str, Callable[[dict[str, Any]], tuple[str, dict[str, Any]] | None]] = {
    "hold.held": _comment("hold.placed"),
    "hold.lifted": _comment("hold.lifted"),
    "hold.lifted_all": _comment("hold.lifted"),
    "room.held": lambda d: _room(d, placed=True),
    "room.lifted": lambda d: _room(d, placed=False),
    "room.exempted": lambda d: ("exemption.granted", _pick(d, "reason", "origin", "expires_at", actor="by")),
    "room.unexempted": lambda d: ("exemption.ended", _pick(d, "origin", "reason", actor="actor", granted_by="by")),
    "exemption.granted": lambda d: ("exemption.granted", _pick(d, "reason", "origin", "expires_at", actor="by")),
    "exemption.ended": lambda d: ("exemption.ended", _pick(d, "origin", "reason", "cause", actor="actor",
                                                           granted_by="by")),
    "tree.closed": lambda d: ("freeze.started", {"source": "tree", **_pick(d, "reason")}),
    "tree.opened": lambda d: ("freeze.ended", {"source": "tree", "ended": "opened"}),
    "window.started": _window("freeze.started", None),
    "window.ended": _window("freeze.ended", "window ended"),
    "room.expired": _expired,
    "incident.recorded": lambda d: ("incident.recorded", _pick(d, "merged_by", "kinds", "reason")),
    "gate.unenforced": lambda d: ("gate.weakened", {"cause": "unenforced", **_pick(d, "branch", "actor", "detail",
                                                                                     "fix")}),
    "app.suspended": lambda d: ("gate.weakened", {"cause": "app_suspended", **_pick(d, "actor", "installation_id")}),
    "status.forged": lambda d: ("gate.weakened", {"cause": "status_forged", **_pick(d, "sha", "sender", "state",
                                                                                      "description", "overwritten")}),
}
"""Audit event -> its outgoing type and data, or None when it is not news for endpoints. The one place:
`state.outgoing.note` reads only this. ``exemption.*`` rows let a writer record those names directly."""

EVENTS_READ = frozenset(TABLE)
"""The audit events the table reads; any other costs `state.outgoing.note` nothing (no Redis read)."""


def translate(event: str, data: dict[str, Any]) -> Outgoing | None:
    """The outgoing event an audit event makes, or None."""
    row = TABLE.get(event)
    made = row(data) if row is not None else None
    if made is None:
        return None
    kind, extra = made
    base = _base(data)
    if not base["org"]:
        return None
    return Outgoing(kind, base["org"], {**base, **extra, "audit_event": event})


def message_body(kind: str, timestamp: str, data: dict[str, Any]) -> str:
    """The JSON body (compact, keys sorted: the bytes signed are the bytes sent)."""
    return json.dumps({"type": kind, "timestamp": timestamp, "data": data}, separators=(",", ":"),
                      sort_keys=True, default=str)


def scope_org(scope: str) -> str:
    repo = scope_repo(scope)
    return (repo or scope).split("/", 1)[0].lower()
