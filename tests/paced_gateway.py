"""A GitHub gateway whose status writes are paced by a `Pacer`, for tests that drive the pacer through
a gateway (the workers pace in the drain instead: `workers.publishing.drain`).

A caller that expects a write takes its slot first, outside its locks, and says so (``prepaid``); any
other write waits at most ``max_wait`` seconds for a slot or raises `SlotTooFar`. A rate-limit answer
pauses the pacer and raises `RateLimited`, so the caller retries that write later.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from core.permissions import Permission
from workers.github.gateway import GitHubGateway
from workers.publishing.pacing import DEFAULT_PAUSE, Pacer, rate_limit_wait

MAX_WAIT_IN_LOCK = 10.0
"""A paced write waits at most this long for its slot."""


class RateLimited(Exception):
    """GitHub refused a write for its rate limit; the pacer is paused for ``seconds``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"GitHub rate limit: writes paused for {seconds:.0f}s")
        self.seconds = seconds



class PacedGateway:
    """A GitHub gateway with status writes paced by a `Pacer` (reads pass straight through)."""

    def __init__(self, inner: GitHubGateway, pacer: Pacer, *, max_wait: float = MAX_WAIT_IN_LOCK,
                 default_pause: float = DEFAULT_PAUSE) -> None:
        self.inner = inner
        self.pacer = pacer
        self.max_wait = max_wait
        self.default_pause = default_pause
        self.writes = 0
        self.rate_limited = 0
        self.prepaid = 0
        """Slots the caller already waited for (outside its locks); a write uses one before asking."""

    def post_status(self, repo: str, sha: str, payload: dict[str, Any]) -> None:
        if self.prepaid > 0:
            self.prepaid -= 1
        else:
            self.pacer.acquire(self.max_wait)
        try:
            self.inner.post_status(repo, sha, payload)
        except Exception as exc:
            wait = rate_limit_wait(exc, default=self.default_pause)
            if wait is None:
                raise
            self.rate_limited += 1
            raise RateLimited(self.pacer.pause(wait)) from exc
        self.writes += 1

    # --- reads: unpaced ------------------------------------------------------------------------

    def get_pull(self, repo: str, number: int) -> dict[str, Any]:
        return self.inner.get_pull(repo, number)

    def list_open_pulls(self, repo: str) -> Iterator[dict[str, Any]]:
        return self.inner.list_open_pulls(repo)

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        return self.inner.get_file(repo, path, ref)

    def permission(self, repo: str, login: str) -> Permission:
        return self.inner.permission(repo, login)

    def installation_for(self, repo: str) -> int:
        return self.inner.installation_for(repo)

    def installation_repos(self, installation_id: int) -> list[dict[str, Any]]:
        return self.inner.installation_repos(installation_id)

    def list_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self.inner.list_comments(repo, number)

    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self.inner.list_reviews(repo, number)

    def pull_files(self, repo: str, number: int, limit: int) -> list[dict[str, Any]]:
        return self.inner.pull_files(repo, number, limit)

    def app_slug(self) -> str | None:
        return self.inner.app_slug()

    def failed_deliveries(self, since: datetime) -> list[dict[str, Any]]:
        return self.inner.failed_deliveries(since)

    def redeliver(self, delivery_id: int) -> None:
        self.inner.redeliver(delivery_id)

    def react(self, repo: str, comment_id: int, content: str) -> None:
        self.inner.react(repo, comment_id, content)

    def reply(self, repo: str, number: int, body: str) -> None:
        self.inner.reply(repo, number, body)

    def get_issue(self, repo: str, number: int) -> dict[str, Any]:
        return self.inner.get_issue(repo, number)

    def get_answer(self, repo: str, path: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
        return self.inner.get_answer(repo, path, params)

    def send(self, repo: str, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        return self.inner.send(repo, method, path, body)
