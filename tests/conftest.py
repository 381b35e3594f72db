"""Shared fixtures: a real Redis (REDIS_URL, else a throwaway redis-server), the GitHub API emulator,
Slack's Web API stand-in, fixture paths; and the `needs` marker's hooks (tests/needs.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from merge_hold.redis_server import LocalRedis
from tests.emulator import GitHubEmulator

# What this machine lacks: each test's `needs` looked up at collection time, skipped with the reason and
# the install line, and listed at the end of the run (tests/needs.py).
from tests.needs import pytest_collection_modifyitems, pytest_configure, pytest_terminal_summary
from tests.slack_standin import SlackStandIn, slack_standin

__all__ = ["pytest_collection_modifyitems", "pytest_configure", "pytest_terminal_summary"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis for the session. With REDIS_URL set, its db 15 is used and flushed per test."""
    given = os.environ.get("REDIS_URL")
    if given:
        yield given.rsplit("/", 1)[0] + "/15" if given.count("/") >= 3 else given + "/15"
        return
    server = LocalRedis(tmp_path_factory.mktemp("redis")).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture()
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture()
def github_emulator() -> Iterator[GitHubEmulator]:
    """A fresh emulated GitHub per test (tests/emulator), stopped after; its `.url` is GITHUB_API_URL."""
    with GitHubEmulator() as emulator:
        yield emulator


@pytest.fixture()
def slack() -> Iterator[SlackStandIn]:
    """Slack's Web API on loopback per test (tests/slack_standin.py); its `.api_url` is SLACK_API_URL."""
    with slack_standin() as standin:
        yield standin


@pytest.fixture(autouse=True)
def hook_registry(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's installs are recorded in a registry of its own (`hook.tools.registry`), never the
    developer's ``~/.config/merge-hold``; subprocesses inherit the variable."""
    path = tmp_path_factory.mktemp("registry") / "installed-hooks.json"
    monkeypatch.setenv("MERGE_HOLD_HOOK_REGISTRY", str(path))
    return path
