"""The repo config `.github/merge-hold.yml`: fields, defaults with their reasons, validation.

YAML is parsed at the edge (``workers/config_loader.py``); this module sees plain mappings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONFIG_PATH = ".github/merge-hold.yml"


class ConfigError(ValueError):
    """An invalid repo config; the message names the file and, where known, the line."""


@dataclass(frozen=True)
class FreezeWindow:
    """A recurring window in which the repo's matching branches are frozen."""

    name: str
    days: tuple[str, ...]  # mon..sun
    start: str  # "HH:MM", local to `timezone`
    end: str  # "HH:MM"; before `start` means the window runs past midnight
    timezone: str = "UTC"
    branches: tuple[str, ...] = ("*",)
    exempt_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepoConfig:
    hold_permission: str = "write"
    """Placing a comment hold needs write access (or being the PR author, below)."""
    author_can_hold: bool = True
    """The PR's author may always hold (and lift their own hold on) their own PR."""
    lift_others_permission: str = "maintain"
    """Lifting someone else's hold (`/unhold @alice`, `/unhold all`) needs maintain or admin."""
    shared_holds: bool = False
    """Prow's semantics: one shared hold that anyone allowed may lift. Off: holds are per holder."""
    review_holds: bool = True
    """A `changes_requested` review holds the PR until that reviewer approves or the review is dismissed."""
    hold_label: str = "do-not-merge/hold"
    """The label that holds a PR while present (Prow's name, so teams moving from Prow keep it)."""
    held_state: str = "failure"
    """Status state for a held PR: `failure` (blocks) or `pending` (blocks, shows as waiting)."""
    exempt_labels: tuple[str, ...] = ()
    """Labels that let a PR through room and freeze holds (never comment, review or label holds)."""
    freeze_windows: tuple[FreezeWindow, ...] = field(default_factory=tuple)


DEFAULT_CONFIG = RepoConfig()


def from_mapping(data: Any, *, source: str = CONFIG_PATH) -> RepoConfig:
    """Validate a parsed YAML document into a `RepoConfig`; `ConfigError` names what is wrong."""
    if data is None:
        return DEFAULT_CONFIG
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping")
    return RepoConfig(**{k.replace("-", "_"): v for k, v in data.items()})
