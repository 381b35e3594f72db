"""What a ``pull_request`` delivery does to a PR's state: its facts recorded (head, base, draft, labels,
open or merged), the hold label added or removed, an exempt label's grant; and what a repo's rename does
to it. Rules the state write applies under its WATCH (`state.store.update_pull`), so a writer hands data
down, not a callback (the other writers' rules: `core.prstate`'s ``record_*``, `merge_states`,
`keep_dashboard`; `core.comment_rules`).

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from core.exempt_labels import LabelGrant, record_grant
from core.prstate import Facts, PullState, record_facts, record_label


def apply_pull_event(state: PullState, *, facts: Facts, opened: bool, hold_label: tuple[str, bool] | None = None,
                     grant: tuple[str, LabelGrant] | None = None) -> PullState:
    """``facts`` recorded; ``opened``: met at its opening, the PR has no history to read (synced);
    ``hold_label``: (name, added) when the delivery labeled or unlabeled the hold label; ``grant``:
    (label, grant) when it added or removed an exempt label."""
    state = record_facts(replace(state, synced=state.synced or opened), facts)
    if hold_label is not None:
        state = record_label(state, hold_label[0], facts.at, hold_label[1])
    if grant is not None:
        state = replace(state, grants=record_grant(state.grants, grant[0], grant[1]))
    return state


def rename_repo(state: PullState, *, repo: str) -> PullState:
    """The PR's state under its repo's new name ``repo`` (unchanged when it has it already)."""
    return state if state.repo == repo else replace(state, repo=repo)
