"""Freeze windows from the repo config: which are active at a moment (DST-correct, pure)."""

from __future__ import annotations

from datetime import datetime

from core.holds import Hold
from core.repo_config import RepoConfig


def freeze_holds(
    config: RepoConfig, repo: str, base: str, labels: tuple[str, ...], now: datetime
) -> list[Hold]:
    """The freeze holds active at ``now`` for a PR on ``base`` (issue: freeze windows)."""
    return []
