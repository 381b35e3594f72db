"""The verdict of a PR: the active, non-exempt holds that apply to it. Held <=> at least one.

One function decides, for the workers, the API and the reference model of the tests alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from core import freeze
from core.exempt_labels import granted_labels
from core.holds import EXEMPTIBLE, Exemption, Hold, Source, to_iso
from core.paths import NOT_READ, ChangedFiles, matches
from core.prstate import PullState, comment_hold_active
from core.repo_config import RepoConfig
from core.scopes import pr_scope, scope_applies

RECORD_SCHEMA = 1
"""Version of the verdict record's shape (the agent hook refuses records it does not know)."""


@dataclass(frozen=True)
class Verdict:
    repo: str
    number: int
    holds: tuple[Hold, ...]
    head_sha: str | None
    base: str | None
    head_ref: str | None = None
    error: str | None = None
    """Set when the verdict cannot be established (invalid repo config, state lost): never 'free'."""

    @property
    def held(self) -> bool:
        return bool(self.holds)


def pr_holds(state: PullState, config: RepoConfig, now: datetime) -> list[Hold]:
    """The holds a PR carries itself: comments, reviews and the hold label."""
    scope = pr_scope(state.repo, state.number)
    holds = [
        Hold(
            id=f"comment:{holder}",
            source=Source.COMMENT,
            scope=scope,
            holder=reg.name or holder,
            reason=reg.reason,
            created_at=reg.at,
            expires_at=reg.expires_at,
            origin=reg.origin,
        )
        for holder, reg in sorted(state.comments.items())
        if comment_hold_active(state, reg, now)
    ]
    if config.review_holds:
        holds += [
            Hold(
                id=f"review:{reviewer}",
                source=Source.REVIEW,
                scope=scope,
                holder=reg.name or reviewer,
                reason="changes requested",
                created_at=reg.at,
                origin=reg.origin,
            )
            for reviewer, reg in sorted(state.reviews.items())
            if reg.held and reg.ref not in state.dismissed
        ]
    facts = state.facts
    if facts is not None and facts.maybe_labelled(config.hold_label):
        holds.append(
            Hold(
                id=f"label:{config.hold_label}",
                source=Source.LABEL,
                scope=scope,
                holder="",
                reason=f"label {config.hold_label}",
                # When it was added; a PR met without its `labeled` event has only the snapshot's time.
                created_at=state.label_since(config.hold_label) or facts.at,
                origin=f"label:{config.hold_label}",
            )
        )
    return holds


def wide_holds(state: PullState, config: RepoConfig, scoped_holds: Iterable[Hold], now: datetime) -> list[Hold]:
    """The room and freeze holds that reach the PR by scope (its repo, branch, org, or the PR itself),
    before its exemptions and its changed files are asked."""
    facts = state.facts
    if facts is None:
        return []
    holds = [h for h in scoped_holds if h.active(now) and scope_applies(h.scope, state.repo, state.number, facts.base)]
    # A window's own exempt labels pass it; only labels that surely exempt count (`core.exempt_labels`).
    labels = granted_labels(state.grants, facts.sure_labels, state.head_sha)
    return holds + freeze.freeze_holds(config, state.repo, facts.base, labels, now)


def wants_files(state: PullState, config: RepoConfig | None, scoped_holds: Iterable[Hold], now: datetime) -> bool:
    """Whether a hold that reaches the PR is scoped by path: only then are its changed files read."""
    return config is not None and any(h.paths for h in wide_holds(state, config, scoped_holds, now))


def in_paths(holds: Iterable[Hold], files: ChangedFiles) -> list[Hold]:
    """The holds that hold a PR with these changed files: those without ``paths``, those a changed file
    matches (named in the reason), and every path-scoped one when the files are unknown (never success
    on doubt; the reason says why)."""
    kept = []
    for hold in holds:
        if not hold.paths:
            kept.append(hold)
        elif files.paths is None:
            kept.append(replace(hold, reason=f"{hold.reason}; {files.why}"))
        elif (touched := next((p for p in files.paths if matches(hold.paths, p)), None)) is not None:
            kept.append(replace(hold, reason=f"{hold.reason} ({touched})"))
    return kept


def compute_verdict(
    state: PullState,
    *,
    config: RepoConfig | None,
    now: datetime,
    config_error: str | None = None,
    scoped_holds: Iterable[Hold] = (),
    exemption: Exemption | None = None,
    changed_files: ChangedFiles = NOT_READ,
) -> Verdict:
    """The verdict of one PR from its state, its repo's config, the room holds of its repo/org, its
    exemption and the files its head changes (unknown unless read: then path-scoped holds hold)."""
    facts = state.facts
    base = facts.base if facts else None
    head_ref = facts.head_ref if facts else None
    if config is None or config_error:
        return Verdict(state.repo, state.number, (), state.head_sha, base, head_ref,
                       error=config_error or "repo config not loaded")
    holds = pr_holds(state, config, now)
    if facts is not None:
        holds += in_paths(wide_holds(state, config, scoped_holds, now), changed_files)
        # Exempt labels and exemptions count for the head they were granted on (sticky ones for any).
        labels = granted_labels(state.grants, facts.sure_labels, state.head_sha)
        exempt_by_label = any(label in config.exempt_labels for label in labels)
        if exempt_by_label or (exemption is not None and exemption.covers(state.head_sha, now)):
            holds = [h for h in holds if h.source not in EXEMPTIBLE]
    holds.sort(key=lambda h: (h.created_at, h.id))
    return Verdict(state.repo, state.number, tuple(holds), state.head_sha, base, head_ref)


def verdict_record(
    verdict: Verdict, *, version: int, computed_at: datetime, status: dict[str, Any],
    hold_label: str | None = None, default_branch: str | None = None,
) -> dict[str, Any]:
    """The JSON stored under `core.keys.verdict`: what the agent hook and the API read.

    Contract (``schema`` 1): ``held`` is true iff ``holds`` is non-empty and ``error`` is null;
    ``state`` is the posted status state (``success``/``failure``/``pending``/``error``); each hold has
    ``id, source, scope, holder, reason, created_at, expires_at, origin``; times are ISO 8601 UTC.
    ``hold_label`` is the repo's hold label (the hook blocks an agent removing it from a held PR).
    ``default_base`` (present when the repo's ``default_branch`` is known) says whether the PR's base is the
    default branch: when it is not, the PR may sit on another open PR (a stack), and the hook follows the
    chain down through the head index before it lets a merge through (a merge of a stacked PR merges the PRs
    below it too).
    """
    record = {
        "schema": RECORD_SCHEMA,
        "repo": verdict.repo,
        "number": verdict.number,
        "held": verdict.held and verdict.error is None,
        "error": verdict.error,
        "state": status["state"],
        "description": status["description"],
        "target_url": status.get("target_url"),
        "holds": [h.to_dict() for h in verdict.holds],
        "head_sha": verdict.head_sha,
        "base": verdict.base,
        "head_ref": verdict.head_ref,
        "hold_label": hold_label,
        "computed_at": to_iso(computed_at),
        "version": version,
    }
    if default_branch is not None:
        record["default_base"] = verdict.base == default_branch
    return record
