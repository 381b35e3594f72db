"""Reading a PR's holds from GitHub's history: first sight of a PR, state lost, `reconcile --rebuild`.

Webhooks only tell what happens after merge-hold sees a PR. A PR first met through anything but its
`opened` event (the App was installed later, or Redis lost its state) may carry `/hold` comments and
change requests from before, so its comments and reviews are replayed, in their own time order,
through the same rules the webhooks use, and joined with the live state (`core.prstate.merge_states`).
(This was `sync.py`; "sync" now means one thing only: bringing a freeze ruleset in step with the holds,
`workers.publishing.freeze_rulesets.sync` and its job in `workers.publishing.freeze_sync`.)
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from core.comment_rules import apply_comment, apply_review
from core.holds import from_iso
from core.permissions import Permission, permission_from_association
from core.prstate import EPOCH, REVIEW_REF, PullState, merge_states, record_facts
from core.repo_config import DEFAULT_CONFIG, RepoConfig
from state import store
from workers.github.gateway import NotFound
from workers.github.pulls import facts_from_pull
from workers.runtime import Runtime


def history_state(rt: Runtime, repo: str, pull: dict[str, Any], config: RepoConfig) -> PullState:
    """A PR's state from scratch: its facts, then its comments and reviews in their own order."""
    number = int(pull["number"])
    author = (pull.get("user") or {}).get("login")
    state = record_facts(PullState(repo=repo, number=number), facts_from_pull(pull))
    events: list[tuple[datetime, int, str, dict[str, Any]]] = []
    for comment in rt.github.list_comments(repo, number):
        if edited(comment):
            continue
        events.append((from_iso(comment.get("created_at")) or EPOCH, int(comment["id"]), "comment", comment))
    for review in rt.github.list_reviews(repo, number):
        events.append((from_iso(review.get("submitted_at")) or EPOCH, int(review["id"]), "review", review))
    permissions: dict[str, Permission] = {}
    for at, ref, kind, item in sorted(events, key=lambda e: (e[0], e[1])):
        login = (item.get("user") or {}).get("login", "")
        if login not in permissions:
            settled = permission_from_association(item.get("author_association"))
            permissions[login] = settled if settled is not None else rt.github.permission(repo, login)
        if kind == "review":
            review_state = str(item.get("state", "")).lower()
            if review_state == "dismissed":
                # A dismissed review still says what it was; GitHub's REST list shows only DISMISSED.
                state, _ = apply_review(state, reviewer=login, review_state="changes_requested",
                                        review_id=str(ref), at=at, origin=item.get("html_url", ""), config=config,
                                        permission=permissions[login])
            state, _ = apply_review(state, reviewer=login, review_state=review_state, review_id=str(ref), at=at,
                                    origin=item.get("html_url", ""), config=config, permission=permissions[login])
        body = item.get("body") or ""
        if body:
            state, _ = apply_comment(state, body, actor=login, permission=permissions[login],
                                     is_author=login == author, at=at,
                                     # Review ids do not order against comment ids (core.prstate).
                                     ref=f"{REVIEW_REF}{ref}" if kind == "review" else str(ref),
                                     origin=item.get("html_url", ""), config=config)
    return replace(state, synced=True)


def edited(comment: dict[str, Any]) -> bool:
    """A comment edited after it was made. Its first body, the one that carried the command when it
    was created, is gone (REST shows only the current one), and the README's rule is that edited
    comments are ignored: an edit cannot place or lift a hold. So a rebuild skips it — replaying the new
    body, at its creation time or at the edit's, would let the edit do exactly that. The live path
    agrees: only `created` comment events are applied."""
    created, updated = from_iso(comment.get("created_at")), from_iso(comment.get("updated_at"))
    return created is not None and updated is not None and updated > created


def replay_history(rt: Runtime, state: PullState, config: RepoConfig | None) -> PullState:
    """Join the live state with the PR's history on GitHub, once; returns the stored result."""
    try:
        pull = rt.github.get_pull(state.repo, state.number)
    except NotFound:
        if state.facts is None:
            return state
        pull = None
    if pull is None:
        rebuilt = replace(PullState(repo=state.repo, number=state.number), synced=True)
    else:
        rebuilt = history_state(rt, state.repo, pull, config or DEFAULT_CONFIG)
    new_state, _ = store.update_pull(rt.redis, state.repo, state.number, partial(merge_states, other=rebuilt))
    return new_state
