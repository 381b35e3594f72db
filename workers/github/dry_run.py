"""The gateway of a dry run (no App credentials, `merge-hold dev`): statuses are recorded in Redis and
printed, nothing reaches GitHub; reads answer from what the events carried."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from core import keys
from core.permissions import Permission
from workers.github.gateway import NotFound


class DryRunGateway:
    """No App credentials: statuses are recorded in Redis (and printed), nothing reaches GitHub.

    Reads answer from what the events carried: no PR fetches, default config, and write access for
    org members and collaborators (their ``author_association``), so a local trial behaves plausibly.
    """

    def __init__(self, redis: Redis, *, echo: bool = True) -> None:
        self.redis = redis
        self.echo = echo

    def post_status(self, repo: str, sha: str, payload: dict[str, Any]) -> None:
        entry = {"repo": repo, "sha": sha, **payload, "at": datetime.now(UTC).isoformat(timespec="seconds")}
        self.redis.lpush(keys.DRY_RUN_STATUSES, json.dumps(entry))
        self.redis.ltrim(keys.DRY_RUN_STATUSES, 0, 999)
        if self.echo:
            print(f"[dry-run] status {payload['context']} on {repo}@{sha[:7]}: {payload['state']} — "
                  f"{payload['description']}", file=sys.stderr, flush=True)

    def get_pull(self, repo: str, number: int) -> dict[str, Any]:
        raise NotFound(f"dry run: cannot fetch {repo}#{number}")

    def list_open_pulls(self, repo: str) -> Iterator[dict[str, Any]]:
        return iter(())

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        return None

    def permission(self, repo: str, login: str) -> Permission:
        return Permission.WRITE

    def installation_for(self, repo: str) -> int:
        return 0

    def installation_repos(self, installation_id: int) -> list[dict[str, Any]]:
        return []

    def list_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return []

    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        return []

    def pull_files(self, repo: str, number: int, limit: int) -> list[dict[str, Any]]:
        # A dry run cannot list them: a path-scoped hold then holds (never success on doubt).
        raise NotFound(f"dry run: cannot list the files of {repo}#{number}")

    def app_slug(self) -> str | None:
        return None

    def failed_deliveries(self, since: datetime) -> list[dict[str, Any]]:
        return []

    def redeliver(self, delivery_id: int) -> None:
        return None

    def react(self, repo: str, comment_id: int, content: str) -> None:
        if self.echo:
            print(f"[dry-run] reaction {content} on {repo} comment {comment_id}", file=sys.stderr, flush=True)

    def reply(self, repo: str, number: int, body: str) -> None:
        if self.echo:
            print(f"[dry-run] reply on {repo}#{number}: {body}", file=sys.stderr, flush=True)

    def get_answer(self, repo: str, path: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
        # Nothing can be read in a dry run: whatever asks (the tamper watch) learns it could not see.
        return 0, {"message": "dry run: GitHub is not read"}

    def send(self, repo: str, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return 0, {"message": "dry run: nothing is written to GitHub"}

    def get_issue(self, repo: str, number: int) -> dict[str, Any]:
        # Taken as open: a dry run cannot ask, and an open dependency keeps the hold (fails closed).
        return {"number": number, "state": "open"}

    def branch_head(self, repo: str, branch: str) -> str | None:
        return None  # a dry run cannot ask: heads come from `push` events only

    def review_deployment(self, repo: str, run_id: int, body: dict[str, Any]) -> bool:
        if self.echo:
            print(f"[dry-run] deployment of run {run_id} in {repo} to {body.get('environment_name')}: "
                  f"{body.get('state', 'report')} — {body.get('comment', '')}", file=sys.stderr, flush=True)
        return True
