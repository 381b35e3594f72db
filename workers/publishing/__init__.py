"""From "this PR may have changed" to its status on GitHub: steps 6 to 9 of a delivery's path
(docs/architecture.md: request, in-delivery recompute, write, and outbox and drain when no write slot is
free), with pacing, locks, merge groups and the freeze ruleset and marks; behind them the fan-out over a
repo's open PRs, a scope's republish and the freeze ruleset's sync job. The modules import one way:
outbox <- request <- write <- drain <- recompute (`outbox.py` says how).

This package's body is its front door: everything outside `workers/publishing/` imports these names
from here, never a module inside (tests/test_layers.py). The modules behind it import one another, never
this body's names, so it adds no cycle; a name here is never a module's name (`republish_scope`, not
`republish`), or an import of it would read as an import of that module.
"""

from workers.publishing.check_runs import hold_seen as check_run_hold_seen
from workers.publishing.check_runs import note as note_check_run
from workers.publishing.check_runs import number_of as check_run_number
from workers.publishing.drain import LEASE_SECONDS as DRAIN_LEASE_SECONDS
from workers.publishing.drain import drain as drain_outbox
from workers.publishing.fanout import repos_in_scope, request_fanout, request_repo_fanout
from workers.publishing.freeze_rulesets import request_sync
from workers.publishing.freeze_rulesets import sync as sync_freeze_ruleset
from workers.publishing.freeze_sync import sync_scope
from workers.publishing.group_status import GROUP_TTL
from workers.publishing.group_status import wanted as wanted_group_status
from workers.publishing.history_replay import history_state
from workers.publishing.in_delivery import InDelivery, after_delivery, open_delivery, recompute_in_delivery
from workers.publishing.locks import break_locks_of
from workers.publishing.merge_groups import checks_requested
from workers.publishing.merge_groups import enqueue as enqueue_merge_group
from workers.publishing.outbox import bucket_of, enqueue_drain, stranded_outboxes
from workers.publishing.recompute import record_locked, run_in_delivery
from workers.publishing.republish import republish as republish_scope
from workers.publishing.request import request_recompute

__all__ = [
    "DRAIN_LEASE_SECONDS",
    "GROUP_TTL",
    "InDelivery",
    "after_delivery",
    "break_locks_of",
    "bucket_of",
    "check_run_hold_seen",
    "check_run_number",
    "checks_requested",
    "drain_outbox",
    "enqueue_drain",
    "enqueue_merge_group",
    "history_state",
    "note_check_run",
    "open_delivery",
    "recompute_in_delivery",
    "record_locked",
    "repos_in_scope",
    "republish_scope",
    "request_fanout",
    "request_recompute",
    "request_repo_fanout",
    "request_sync",
    "run_in_delivery",
    "stranded_outboxes",
    "sync_freeze_ruleset",
    "sync_scope",
    "wanted_group_status",
]

