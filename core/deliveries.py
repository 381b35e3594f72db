"""A GitHub webhook delivery on its way in: which ones can matter, and how one is kept in the intake list.

The receiver (`app/webhooks.py`) does the least it can before the 2xx: verify the signature, look at the
``X-GitHub-Event`` header (`core.events.queued`), and push the raw body to the intake list in one Redis
round trip. The intake pump (`workers/intake/pump.py`) parses it, drops what cannot matter (`ignore_reason`)
and creates the rq jobs. Which events and actions can matter is `core.events`' table; the few payload
fields judged here are the rest. Pure functions only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import json_text
from core.events import action_matters, queued
from core.status import CONTEXT
from core.treecloser import status_may_matter


def ignore_reason(event: str, payload: Any) -> str | None:
    """Why a delivery cannot matter, judged from a few top-level fields; None when it may matter."""
    if not queued(event):
        return "event not handled"
    if not isinstance(payload, dict):
        return "body is not a JSON object"
    if not action_matters(event, payload.get("action")):
        return "action not handled"
    if event == "issue_comment":
        issue = payload.get("issue")
        if not isinstance(issue, dict) or not issue.get("pull_request"):
            return "comment on an issue, not a pull request"
    elif event == "pull_request" and payload.get("action") == "edited":
        changes = payload.get("changes")
        if not isinstance(changes, dict) or "base" not in changes:
            return "edit without a base change"
    elif event == "push":
        ref = payload.get("ref")
        if isinstance(ref, str) and not ref.startswith("refs/heads/"):
            return "not a branch push"
    elif event == "status" and payload.get("context") != CONTEXT and not status_may_matter(payload):
        return "another status context"
    return None


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery_id: str
    body: bytes

    def payload(self) -> Any:
        """The parsed body; raises ValueError when it is not JSON (UnicodeDecodeError is one) or nests
        deeper than `core.json_text.MAX_DEPTH`."""
        return json_text.loads(self.body)


_SEP = b"\n"


def pack(event: str, delivery_id: str, body: bytes) -> bytes:
    """One intake entry: ``event\\ndelivery_id\\nbody``. Neither header can hold a newline (the receiver
    checks both against narrow alphabets), so the first two newlines split it back."""
    return event.encode() + _SEP + delivery_id.encode() + _SEP + body


def headers(entry: bytes) -> tuple[bytes, bytes]:
    """The event and delivery id of anything on the intake list, unchecked (``b""`` for a part it lacks):
    what a dead letter names of an entry `unpack` may refuse."""
    event, _, rest = entry.partition(_SEP)
    return event, rest.partition(_SEP)[0]


def unpack(entry: bytes) -> Delivery:
    """The inverse of `pack`; raises ValueError on an entry that is not one."""
    event, sep1, rest = entry.partition(_SEP)
    delivery_id, sep2, body = rest.partition(_SEP)
    if not (sep1 and sep2 and event):
        raise ValueError("not an intake entry")
    return Delivery(event.decode(), delivery_id.decode(), body)
