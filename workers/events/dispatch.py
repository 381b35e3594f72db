"""Step 4 of a delivery's path (docs/architecture.md): apply one GitHub webhook delivery to the hold
state, then run the affected PRs' recomputes in place (step 7): the delivery job and its table of
handlers, one module per event family beside it (`comments`, `pull_requests`, `pushes`, `installations`,
`forged_status`, `repo_renames`, `holdfor`, `treecloser`, `tamper`, `deployments`).

Each handler translates an event into "record this in the state, then recompute PR X" — the rules
themselves live in `core/`. Handlers are idempotent: a duplicate delivery records nothing new, and
an unchanged verdict posts nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from core import json_text, keys
from core.events import action_matters, repo_name
from workers.events import (
    check_actions,
    comments,
    deployments,
    forged_status,
    holdfor,
    installations,
    pull_requests,
    pushes,
    repo_renames,
    treecloser,
)
from workers.events.tamper import on_gate_event
from workers.publishing import open_delivery, run_in_delivery
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

DELIVERY_SEEN_TTL = 3600
"""A delivery processed once is skipped for an hour: it covers GitHub's retry of a 503 and our redelivery
sweep (every 10 minutes). Later duplicates are still harmless, since every handler is idempotent (design
§4 invariant 2); the marker only saves the work. Three days of markers at 50 deliveries/s were ~1 GB."""

Handler = Callable[[Runtime, dict[str, Any]], str]


def handle_delivery(event: str, delivery_id: str, body: bytes | str | dict[str, Any]) -> str:
    """The rq job for one webhook delivery (the raw JSON body as received, or its parsed payload).
    Returns what happened (kept as the job's result)."""
    rt = current()
    payload: dict[str, Any] = body if isinstance(body, dict) else json_text.loads(body)  # depth bounded
    if event != "status" and _is_own(rt, payload):
        return "own-event"
    handler = HANDLERS.get(event)
    # The pump's table (`core.events`) again, for jobs queued past it: handlers keep no action lists.
    if handler is None or not action_matters(event, payload.get("action")):
        return "ignored"
    repo = repo_name(payload) if event not in ("installation", "installation_repositories") else None
    with rt.redis.pipeline(transaction=False) as pipe:  # one round trip for both checks
        pipe.exists(keys.delivery_seen(delivery_id or "-"))
        pipe.exists(keys.repo_dropped(repo or "-/-"))
        seen, dropped = pipe.execute()
    if delivery_id and seen:
        return "duplicate"
    if repo is not None and dropped:
        return "dropped repo"  # a late or redelivered event of a repo the App has left
    scope, inside = open_delivery(rt)  # the delivery's scope, handed down to wherever a recompute is asked for
    outcome = handler(inside, payload)
    # The recomputes it asked for run here and now, not behind the queue (their jobs are the backstop);
    # then, the scope closed, the replies it deferred until after them.
    run_in_delivery(rt, scope)
    scope.close()
    if delivery_id:
        rt.redis.set(keys.delivery_seen(delivery_id), "1", ex=DELIVERY_SEEN_TTL)
    return outcome


def _is_own(rt: Runtime, payload: dict[str, Any]) -> bool:
    sender = (payload.get("sender") or {}).get("login")
    return bool(sender) and sender == rt.bot_login


HANDLERS: dict[str, Handler] = {  # one per queued event of `core.events` (tests/test_event_table.py)
    "issue_comment": comments.on_issue_comment,
    "pull_request_review": comments.on_pull_request_review,
    "pull_request": pull_requests.on_pull_request,
    "push": pushes.on_push,
    "merge_group": pull_requests.on_merge_group,
    "installation": installations.on_installation,
    "installation_repositories": installations.on_installation_repositories,
    "status": forged_status.on_status_event,
    "repository": repo_renames.on_repository,
    "issues": holdfor.on_issues,
    "check_run": check_actions.on_check_run,
    "check_suite": treecloser.on_check_suite,
    "branch_protection_rule": on_gate_event,
    "branch_protection_configuration": on_gate_event,
    "repository_ruleset": on_gate_event,
    "deployment_protection_rule": deployments.on_deployment_protection_rule,
}
