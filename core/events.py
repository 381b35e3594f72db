"""The GitHub webhook events the service answers, and the actions of each that matter: one table (design §4).

Every list of events reads this table, so that they cannot drift apart (issue 17: `converted_to_draft`
was handled by the workers and dropped before them by a second list): the receiver queues only these
events (`queued`), the intake pump drops the other actions
(`core.deliveries.ignore_reason`), the workers have one handler per queued event (`workers.events.dispatch.HANDLERS`,
a test holds the two together), `/metrics` counts each under its own name (`metric_label`), and `doctor`
and the App manifest require the App to subscribe to those GitHub does not send unasked
(`core.readiness.REQUIRED_EVENTS`). Adding an event is one row here plus its handler.

Pure: no I/O, standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Event:
    """One event: the actions that matter (None: every action; GitHub sends some events without one),
    why the App must subscribe to it (None: GitHub sends it to every App, or the App never needs to ask),
    and whether the workers handle it (``ping`` is answered by the receiver itself)."""

    actions: frozenset[str] | None
    subscribe_for: str | None
    queued: bool = True


def _only(*actions: str) -> frozenset[str]:
    return frozenset(actions)


_EVENTS: dict[str, Event] = {
    # Answered by the receiver (200 with GitHub's zen); nothing is queued.
    "ping": Event(None, None, queued=False),
    "issue_comment": Event(_only("created"), "/hold comments"),
    "pull_request": Event(
        _only("opened", "reopened", "synchronize", "edited", "ready_for_review", "converted_to_draft",
              "labeled", "unlabeled", "closed"),
        "heads, bases, labels"),
    "pull_request_review": Event(_only("submitted", "dismissed"), "review holds"),
    "push": Event(None, "heads and config reloads"),
    "merge_group": Event(_only("checks_requested"), "merge queue groups"),
    # Sent to every App without a subscription. Every action goes to the workers, which know what
    # suspend, unsuspend and new_permissions_accepted mean.
    "installation": Event(None, None),
    "installation_repositories": Event(None, None),
    "status": Event(None, "forged-status detection"),
    "repository": Event(_only("renamed", "transferred"), "renames and transfers move a repo's holds"),
    "issues": Event(_only("closed"), "/hold-for waiting on an issue"),
    "check_run": Event(_only("completed", "requested_action", "rerequested"),
                       "the tree closer; the buttons of merge-hold's check run (requested_action, rerequested)"),
    "check_suite": Event(_only("completed"), "the tree closer"),
    # The tamper watch: every action may change whether a branch still requires merge-hold.
    "branch_protection_rule": Event(None, "the tamper watch (protection changed)"),
    "branch_protection_configuration": Event(None, "the tamper watch (protection switched off)"),
    "repository_ruleset": Event(None, "the tamper watch (rulesets changed)"),
    # Deploys freeze too (workers/events/deployments.py): merge-hold answers as a deployment protection rule.
    "deployment_protection_rule": Event(_only("requested"), "deploys freeze too (freeze_deployments)"),
}

EVENTS: Mapping[str, Event] = MappingProxyType(_EVENTS)
"""``X-GitHub-Event`` -> its row, read-only (a caller cannot grow the table at run time)."""

QUEUED: tuple[str, ...] = tuple(name for name, row in _EVENTS.items() if row.queued)
"""The events the receiver queues for the workers, in table order."""


def queued(event: str) -> bool:
    """Whether any delivery of this event goes to the workers."""
    row = _EVENTS.get(event)
    return row is not None and row.queued


def action_matters(event: str, action: object) -> bool:
    """Whether a queued event's ``action`` field is one that matters (any, for an event without a list).
    An ``action`` that is no string (a list, an object: not GitHub's) matters to no event with a list."""
    row = _EVENTS.get(event)
    if row is None or not row.queued:
        return False
    return row.actions is None or (isinstance(action, str) and action in row.actions)


def metric_label(event: str | None) -> str:
    """The ``event`` label of `/metrics`: the table's name, ``none`` without a header, ``other`` for
    anything else (a sender must not be able to grow the label set)."""
    if not event:
        return "none"
    return event if event in _EVENTS else "other"


def repo_name(payload: Mapping[str, Any]) -> str | None:
    """The ``owner/name`` a delivery is about (None for an installation's own events)."""
    name = (payload.get("repository") or {}).get("full_name")
    return str(name) if name else None


def installation_id(payload: Mapping[str, Any]) -> int | None:
    """The App installation a delivery came through."""
    inst = (payload.get("installation") or {}).get("id")
    return int(inst) if inst else None
