"""`merge-hold reconcile`: republish verdicts, and with `--rebuild` re-read the holds from GitHub.

Republishing is cheap and safe at any time (a status is posted only where it differs). Rebuilding
is for state lost in Redis: it replays every comment and review of every open PR, in their own time
order, through the same rules the webhooks use.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from core import keys
from core.comment_rules import apply_comment, apply_review
from core.holds import from_iso
from core.permissions import Permission, permission_from_association
from core.prstate import EPOCH, PullState, record_facts
from core.repo_config import DEFAULT_CONFIG
from workers import store
from workers.publish import publish, repo_config
from workers.pulls import facts_from_pull
from workers.repos import load_repo_config
from workers.runtime import Runtime


def rebuild_pull(rt: Runtime, repo: str, pull: dict[str, Any]) -> PullState:
    """A PR's state from scratch: its facts, then its comments and reviews in their own order."""
    number = int(pull["number"])
    config = repo_config(store.load_repo(rt.redis, repo))[0] or DEFAULT_CONFIG
    author = (pull.get("user") or {}).get("login")
    state = record_facts(PullState(repo=repo, number=number), facts_from_pull(pull))
    events: list[tuple[datetime, str, str, dict[str, Any]]] = []
    for comment in rt.github.list_comments(repo, number):
        events.append((from_iso(comment.get("created_at")) or EPOCH, str(comment["id"]), "comment", comment))
    for review in rt.github.list_reviews(repo, number):
        events.append((from_iso(review.get("submitted_at")) or EPOCH, str(review["id"]), "review", review))
    permissions: dict[str, Permission] = {}
    for at, ref, kind, item in sorted(events, key=lambda e: (e[0], e[1])):
        login = (item.get("user") or {}).get("login", "")
        if login not in permissions:
            settled = permission_from_association(item.get("author_association"))
            permissions[login] = settled if settled is not None else rt.github.permission(repo, login)
        if kind == "review":
            review_state = str(item.get("state", "")).lower()
            state, _ = apply_review(state, reviewer=login, review_state=review_state, review_id=ref, at=at,
                                    origin=item.get("html_url", ""), config=config)
        body = item.get("body") or ""
        if body:
            state, _ = apply_comment(state, body, actor=login, permission=permissions[login],
                                     is_author=login == author, at=at, ref=ref,
                                     origin=item.get("html_url", ""), config=config)
    return state


def reconcile_repo(rt: Runtime, repo: str, *, rebuild: bool) -> dict[str, int]:
    counts = {"prs": 0, "posted": 0}
    if rebuild:
        meta = store.load_repo(rt.redis, repo)
        load_repo_config(rt, repo, previous=meta, default_branch=meta.default_branch if meta else None)
        for pull in rt.github.list_open_pulls(repo):
            state = rebuild_pull(rt, repo, pull)
            store.update_pull(rt.redis, repo, state.number, lambda _old, new=state: new)  # type: ignore[misc]
            rt.redis.sadd(keys.open_prs(repo), state.number)
    now = datetime.now(UTC)
    for number in store.open_numbers(rt.redis, repo):
        counts["prs"] += 1
        if publish(rt, repo, number, now) == "posted":
            counts["posted"] += 1
    store.audit(rt.redis, repo, "repo.reconciled", rebuild=rebuild, **counts)
    return counts


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="merge-hold reconcile",
        description="Republish every managed PR's verdict (a status is posted only where it differs). "
        "With --rebuild, first re-read comments, reviews and labels from GitHub (for lost Redis state).",
    )
    p.add_argument("--repo", action="append", metavar="O/R", help="only this repo (repeatable)")
    p.add_argument("--rebuild", action="store_true", help="re-read holds from GitHub before republishing")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from merge_hold.settings import SettingsError, from_env
    from workers import runtime

    try:
        rt = runtime.install(runtime.build(from_env()))
    except SettingsError as exc:
        print(f"merge-hold reconcile: {exc}", file=sys.stderr)
        return 78
    repos = args.repo or sorted(r.decode() if isinstance(r, bytes) else r for r in rt.redis.smembers(keys.MANAGED_REPOS))
    for repo in repos:
        counts = reconcile_repo(rt, repo, rebuild=args.rebuild)
        print(f"{repo}: {counts['prs']} open PRs, {counts['posted']} statuses posted")
    return 0
