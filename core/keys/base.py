"""The hash tags every key is built on: ``mh:{owner/repo}`` per repo (so a repo's keys could move to
a Redis Cluster slot of their own), ``mh:{owner}`` per org."""

from __future__ import annotations

PREFIX = "mh"


def repo_prefix(repo: str) -> str:
    """What every key of the repo starts with (its hash tag); a renamed repo's keys move by this prefix."""
    return f"{PREFIX}:{{{repo.lower()}}}"


def repo_keys_pattern(repo: str) -> str:
    """SCAN pattern for every key of the repo. Repo names are ``[A-Za-z0-9_.-]``: no glob characters."""
    return f"{repo_prefix(repo)}:*"
