"""Our own `merge-hold` statuses versus forged ones (design §4, invariant 6), and the slug check.

A `status` event for our context is *ours* when its sender is our App, or — whatever the sender — when
it equals what we last posted (or are about to post: the verdict record is written before the POST) on
that SHA: a PR's head, or a merge group's commit (`workers.publishing.merge_groups`), guarded the same way. Trusting the
sender alone made a wrong `MERGE_HOLD_APP_SLUG` turn every own status into a "forgery" that was
re-posted, in a loop up to GitHub's 1,000-statuses cap. Anything else is forged: it is audited and put
back **once per verdict** (`core.keys.forged_overwrite`, `forged_group_overwrite`), so a forger
re-posting forever costs one write per real verdict change, never a loop.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime
from typing import Any

from github import GithubException

from core import keys
from core.events import repo_name
from core.status import CONTEXT
from foundation.settings import SettingsError
from state import audit, posted_status, store
from state.decoding import maybe_text
from workers.events import tamper, treecloser
from workers.github.gateway import AppGateway
from workers.publishing import (
    GROUP_TTL,
    bucket_of,
    drain_outbox,
    enqueue_merge_group,
    request_recompute,
    wanted_group_status,
)
from workers.runtime import Runtime

log = logging.getLogger(__name__)

FORGED_MARK_TTL = 7 * 24 * 3600
"""How long "already put back once for this verdict" is remembered: longer than a PR stays unchanged
under an active forger is not needed, since a new verdict (or head) starts a new mark anyway."""


SLUG_CHECK_WAIT = 3.0
"""Seconds the worker waits for `GET /app` at start (it answers in well under one). A GitHub slower
than that does not hold the worker back: the check is skipped with a warning, since a status equal to
our last post is ours whatever the slug says."""


def check_app_slug(rt: Runtime, wait: float = SLUG_CHECK_WAIT) -> None:
    """At worker start: MERGE_HOLD_APP_SLUG must be this App's slug (`GET /app`). A mismatch is a start-up
    error naming both values; unset, or no App credentials (dry run), there is nothing to check.
    GitHub failing or slow is not a verdict on the slug: logged, and the worker starts."""
    configured = rt.settings.app_slug
    gateway = rt.github
    if not configured or not isinstance(gateway, AppGateway):
        return
    answer: list[str | Exception | None] = []

    def ask() -> None:
        try:
            answer.append(gateway.fetch_app_slug(timeout=wait))
        except (GithubException, OSError) as exc:
            answer.append(exc)

    # A thread, so that a GitHub that accepts the connection and then stalls cannot stall the start.
    asking = threading.Thread(target=ask, name="merge-hold-slug-check", daemon=True)
    asking.start()
    asking.join(wait)
    if not answer or isinstance(answer[0], Exception):
        why = answer[0] if answer else f"no answer within {wait:g}s"
        log.warning("cannot check MERGE_HOLD_APP_SLUG=%r against GET /app: %s", configured, why)
        return
    actual = answer[0]
    if actual and actual.lower() != configured.lower():
        raise SettingsError(
            f"MERGE_HOLD_APP_SLUG: set to {configured!r}, but GitHub says this App's slug is {actual!r} "
            f"(GET /app with GITHUB_APP_ID={rt.settings.github_app_id}); set it to {actual!r} or unset it")


def _same(record: dict[str, Any] | None, sha: str, state: Any, description: Any, sha_field: str) -> bool:
    return (record is not None and record.get(sha_field) == sha and record.get("state") == state
            and (record.get("description") or "") == (description or ""))


def is_ours(rt: Runtime, repo: str, number: int, payload: dict[str, Any]) -> bool:
    """The status equals our last post on the PR's head, or the verdict we are about to post."""
    sha, state, description = str(payload.get("sha", "")), payload.get("state"), payload.get("description")
    posted = posted_status.on_pr(rt.redis, repo, number)
    if _same(posted, sha, state, description, "sha"):
        return True
    return _same(store.load_verdict(rt.redis, repo, number), sha, state, description, "head_sha")


def _group_of(rt: Runtime, repo: str, sha: str, numbers: list[int]) -> int | None:
    """The PR whose merge group has ``sha`` as its head (``0``: a group we posted on that names no PR);
    None when ``sha`` is no group of ours."""
    with rt.redis.pipeline(transaction=False) as pipe:
        for number in numbers:
            pipe.hexists(keys.merge_groups(repo, number), sha)
        found = pipe.execute()
    for number, grouped in zip(numbers, found, strict=True):
        if grouped:
            return number
    return 0 if rt.redis.exists(keys.group_posted(repo, sha)) else None


def on_status(rt: Runtime, repo: str, payload: dict[str, Any]) -> str:
    """A `merge-hold` status on ``repo``: ours (ignored), or forged (audited, put back once per verdict)
    — on a PR's head or on a merge group's commit alike."""
    sender = (payload.get("sender") or {}).get("login")
    if sender and sender == rt.bot_login:
        return "own-event"
    sha = str(payload.get("sha", ""))
    numbers = store.open_numbers(rt.redis, repo)
    for number in numbers:
        if store.load_pull(rt.redis, repo, number).head_sha != sha:
            continue
        if is_ours(rt, repo, number, payload):
            return "own status"
        return _forged(rt, repo, number, sha, sender, payload)
    group = _group_of(rt, repo, sha, sorted(numbers))
    if group is not None:
        return _forged_group(rt, repo, group or None, sha, sender, payload)
    return "no open PR at that sha"


def _forged_group(rt: Runtime, repo: str, number: int | None, sha: str, sender: str | None,
                  payload: dict[str, Any]) -> str:
    """A status on a merge group's commit: ours when it equals our last post there or the one the PR's
    verdict asks for; else forged, put back once per verdict (a mark of its own, so a forger alternating
    between the PR's head and the group's commit cannot make the two marks a loop)."""
    state, description = payload.get("state"), payload.get("description")
    posted = posted_status.on_group(rt.redis, repo, sha)
    status, _form = wanted_group_status(rt.redis, repo, number, sha)
    if _same(posted, sha, state, description, "sha") or _same({**status, "sha": sha}, sha, state, description, "sha"):
        return "own merge group status"
    verdict = (store.load_verdict(rt.redis, repo, number) if number else None) or {}
    mark = str(verdict.get("version", 0))
    previous = rt.redis.set(keys.forged_group_overwrite(repo, sha), mark, ex=GROUP_TTL, get=True)
    overwrite = maybe_text(previous) != mark
    audit.record(rt.redis, repo, "status.forged", number=number, sha=sha, sender=sender, state=state,
                description=description, overwritten=overwrite, merge_group=True, at=datetime.now(UTC).isoformat())
    if not overwrite:
        log.warning("%s: forged merge-hold status on merge group %s again (sender %s); already put back once "
                    "for this verdict, left alone to avoid a loop", repo, sha[:7], sender)
        return f"forged status on merge group {sha[:7]} left (already overwritten once for this verdict)"
    # Forget what we posted, so the drain writes the group's status again though it did not change.
    rt.redis.delete(keys.group_posted(repo, sha))
    enqueue_merge_group(rt, repo, number, sha)
    return f"forged status on merge group {sha[:7]} overwritten; drain {drain_outbox(rt, bucket_of(rt.redis, repo))}"


def _forged(rt: Runtime, repo: str, number: int, sha: str, sender: str | None, payload: dict[str, Any]) -> str:
    verdict = store.load_verdict(rt.redis, repo, number) or {}
    mark = f"{sha}:{verdict.get('version', 0)}"
    previous = rt.redis.set(keys.forged_overwrite(repo, number), mark, ex=FORGED_MARK_TTL, get=True)
    overwrite = maybe_text(previous) != mark
    audit.record(rt.redis, repo, "status.forged", number=number, sha=sha, sender=sender,
                state=payload.get("state"), description=payload.get("description"), overwritten=overwrite,
                at=datetime.now(UTC).isoformat())
    if not overwrite:
        log.warning("%s#%s: forged merge-hold status at %s again (sender %s); already put back once for "
                    "this verdict, left alone to avoid a loop", repo, number, sha[:7], sender)
        return f"forged status on #{number} left (already overwritten once for this verdict)"
    # Forget what we posted, so the recompute posts the verdict again even though it did not change.
    rt.redis.delete(keys.posted(repo, number))
    request_recompute(rt, repo, number)
    # A forgery opens only a gate not pinned to this App: the repo's gates are read again.
    return f"forged status on #{number} overwritten; gates: {tamper.on_forged(rt, repo, number, sender)}"


def on_status_event(rt: Runtime, payload: dict[str, Any]) -> str:
    """A `merge-hold` status we did not post is forged: record it and put ours back, once per verdict."""
    treecloser.on_status(rt, payload)
    repo = repo_name(payload)
    if repo is None or payload.get("context") != CONTEXT:
        return "ignored"
    return on_status(rt, repo, payload)
