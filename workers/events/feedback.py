"""Answer a PR comment's commands on the PR: reactions, or one reply (what to say: `core.feedback`).

Best effort, after the state is recorded: an answer that cannot be posted (no Issues: write, GitHub
down) is logged and dropped; it never fails the delivery, so the verdict path does not depend on it.
At most one answer per comment: a Redis marker is claimed (SET NX) before posting, so a redelivery of
the same comment, under any delivery id, answers nothing more. Comments by bots are never answered —
ours are already dropped as own events, and answering another bot could start a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from github import GithubException

from core import keys
from core.comment_rules import Outcome
from core.feedback import decide
from core.holds import from_iso
from core.prstate import EPOCH, PullState
from core.repo_config import RepoConfig
from workers.github.gateway import NotFound
from workers.runtime import Runtime

log = logging.getLogger(__name__)

ANSWERED_TTL = 3 * 24 * 3600
"""As long as GitHub may redeliver the comment's event."""


def answer_comment(rt: Runtime, repo: str, number: int, comment: dict[str, Any], outcomes: Sequence[Outcome],
                   before: PullState | None, config: RepoConfig) -> str:
    """React to or reply on one created comment; returns what it did (for the job's result and tests)."""
    user = comment.get("user") or {}
    if user.get("type") == "Bot" or (rt.bot_login and user.get("login") == rt.bot_login):
        return "bot"
    at = from_iso(comment.get("created_at")) or EPOCH
    answer = decide(comment.get("body") or "", outcomes, mode=config.feedback, before=before, at=at)
    if answer.empty:
        return "nothing"
    comment_id = int(comment["id"])
    if not rt.redis.set(keys.answered(repo, comment_id), "1", nx=True, ex=ANSWERED_TTL):
        return "answered already"
    try:
        for content in answer.reactions:
            rt.github.react(repo, comment_id, content)
        if answer.reply:
            rt.github.reply(repo, number, answer.reply)
    except (GithubException, NotFound, OSError) as exc:
        log.warning("could not answer %s comment %s (needs Issues: write): %s", repo, comment_id, exc)
        return "failed"
    return "replied" if answer.reply else "reacted"
