"""What every job needs — settings, Redis, the queue, the GitHub gateway — built once per worker process.

`workers.ops.cli.main` builds it before the worker starts, so forked work-horses inherit it. A job run by a
plain `rq worker` (no `main`) builds it from the environment on first use instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from github import GithubException
from redis import Redis
from rq import Queue

from core import keys
from foundation.redis_conn import connect
from foundation.settings import Settings, SettingsError, from_env
from state.decoding import as_text
from state.queueing import bulk_name, bulk_queue, work_queue
from state.recompute_requests import RecomputeRequest
from workers.github.dry_run import DryRunGateway
from workers.github.gateway import AppGateway, GitHubGateway


class DeliveryScope(Protocol):
    """One webhook delivery in hand (`workers.publishing.in_delivery.InDelivery`): `workers.events.dispatch`
    opens it and hands it down on the Runtime it gives the handler (`Runtime.delivery`), so a recompute asked
    for inside the delivery is run in place when the handler returns, and a reply can wait until then. It
    rides on the Runtime, not as a parameter, so every handler keeps the events table's one signature."""

    def ask_in_place(self, queue: Queue, repo: str, number: int) -> RecomputeRequest: ...

    def rerun_in_place(self, queue: Queue, repo: str, number: int) -> None: ...

    def defer(self, work: Callable[[], object]) -> None: ...

    def close(self) -> None: ...


@dataclass
class Runtime:
    settings: Settings
    redis: Redis
    queue: Queue
    github: GitHubGateway
    delivery: DeliveryScope | None = None
    """The delivery this work is part of, when it is (None for every other job and after the delivery)."""

    def bulk(self, bucket: str) -> Queue:
        """The bulk queue of an outbox bucket (an installation's): bootstraps, fan-outs, drains, check runs."""
        return bulk_queue(self.queue, bucket)

    def interactive_waiting(self) -> bool:
        """Whether interactive jobs wait: bulk work then hands on between two slices."""
        return bool(self.queue.count)

    def bulk_waiting(self, bucket: str) -> bool:
        """Whether other jobs of the bucket's bulk queue wait (a lift's fan-out behind a drain)."""
        return bool(self.redis.llen(Queue(bulk_name(self.queue.name, bucket), connection=self.redis).key))

    @property
    def bot_login(self) -> str | None:
        """Our App's `slug[bot]` login: from MERGE_HOLD_APP_SLUG, else asked of GitHub once (`GET /app`)
        and kept in Redis, so telling our own events apart costs no GitHub call per event."""
        if self.settings.bot_login or not isinstance(self.github, AppGateway):
            return self.settings.bot_login
        cached = self.redis.get(APP_SLUG_KEY)
        if cached is None:
            try:
                slug = self.github.app_slug() or ""
                ttl = 86400
            except GithubException:
                # Unknown for now (GET /app refused): nothing is taken for ours; asked again later.
                slug, ttl = "", 300
            self.redis.set(APP_SLUG_KEY, slug, ex=ttl)
        else:
            slug = as_text(cached)
        return f"{slug}[bot]" if slug else None


APP_SLUG_KEY = keys.APP_SLUG
_current: Runtime | None = None


def build(settings: Settings, redis: Redis | None = None) -> Runtime:
    if not settings.redis_url and redis is None:
        raise SettingsError("REDIS_URL: required by the workers but not set")
    conn = redis if redis is not None else connect(str(settings.redis_url), "worker")
    github: GitHubGateway
    if settings.has_app_credentials and not settings.dry_run:
        assert settings.github_app_id is not None and settings.github_private_key is not None
        github = AppGateway(api_url=settings.github_api_url, app_id=settings.github_app_id,
                            private_key=settings.github_private_key, redis=conn)
    else:
        github = DryRunGateway(conn)
    return Runtime(settings, conn, work_queue(conn, settings.queue_name), github)


def install(runtime: Runtime) -> Runtime:
    global _current
    _current = runtime
    return runtime


def current() -> Runtime:
    global _current
    if _current is None:
        _current = build(from_env())
    return _current
