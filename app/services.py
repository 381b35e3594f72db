"""What every blueprint of one app shares: settings, the Redis client, the work queue, tokens, metrics.

Built once in `create_app` and stored on the app (``app.extensions["merge_hold"]``), so that two apps
in one process (tests, `merge-hold dev`) never share state through module globals.

A leaf: the only `app` modules it names (for the checker) are leaves too, `app.token_store` and
`app.metrics`, so every blueprint may import it at the top and no import of any kind makes a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Flask, current_app
from redis import Redis

from foundation.redis_conn import connect

if TYPE_CHECKING:
    from rq import Queue

    from app.metrics import Metrics
    from app.token_store import TokenStore
    from foundation.settings import Settings

EXTENSION = "merge_hold"


@dataclass(frozen=True)
class Services:
    settings: Settings
    redis: Redis
    queue: Queue
    tokens: TokenStore
    metrics: Metrics


def redis_client(url: str) -> Redis:
    """The web tier's client: fails fast (`foundation.redis_conn`'s ``web`` profile), so that a webhook
    gets its 503 well inside GitHub's 10 s timeout. Works with ``redis+sentinel://`` URLs."""
    return connect(url, "web")


def services(app: Flask | None = None) -> Services:
    """The shared services of the current (or given) app."""
    target = current_app if app is None else app
    found: Services = target.extensions[EXTENSION]
    return found
