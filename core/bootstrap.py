"""A bootstrap's progress as people read it: how many open PRs have a `merge-hold` status, and, at the
pace of the installation's write windows, about when the rest will (`merge-hold doctor`, /setup, the
dashboard). Pure: the counts come from `state.bootstrap`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

FAR_FROM_DONE = 0.9
"""Below this share of open PRs with a status, `doctor` warns against requiring `merge-hold` yet: a
required check with no status blocks the PR's merge until the bootstrap reaches it."""


@dataclass(frozen=True)
class Progress:
    installation_id: int
    started: float
    """Epoch seconds of the bootstrap's start."""
    repos: int
    """Repos it adopts."""
    repos_listed: int
    """Of them, those whose open PRs have been listed (the rest are still queued)."""
    open_prs: int
    """Open PRs listed so far."""
    with_status: int
    """Of them, those whose head shows a `merge-hold` status posted by us."""

    @property
    def left(self) -> int:
        return self.open_prs - self.with_status

    @property
    def done(self) -> bool:
        return self.repos_listed >= self.repos and self.left <= 0

    @property
    def far_from_done(self) -> bool:
        return self.repos_listed < self.repos or self.with_status < FAR_FROM_DONE * self.open_prs


def writes_per_hour(rate_per_minute: float, hourly: int) -> float:
    """The installation's status writes an hour at its pacer's settings: the minute's rate, capped by
    the hourly window (0: no hourly cap)."""
    pace = rate_per_minute * 60
    return min(pace, hourly) if hourly > 0 else pace


def eta(progress: Progress, per_hour: float, now: datetime) -> datetime | None:
    """About when the last listed PR has its status, at ``per_hour`` writes (None: no pace)."""
    if progress.left <= 0:
        return now
    if per_hour <= 0:
        return None
    return now + timedelta(hours=progress.left / per_hour)


def line(progress: Progress, per_hour: float, now: datetime) -> str:
    """``N of M open PRs have a status; ...``, one line for doctor, /setup and the dashboard."""
    text = f"{progress.with_status} of {progress.open_prs} open PRs have a status"
    if progress.repos_listed < progress.repos:
        text += f" ({progress.repos - progress.repos_listed} of {progress.repos} repos not listed yet)"
    if progress.done:
        return text + "; done"
    when = eta(progress, per_hour, now)
    if when is not None and progress.left > 0:
        minutes = max(1, round((when - now).total_seconds() / 60))
        text += (f"; at the write window's pace ({per_hour:.0f} an hour) the rest in about {minutes} min"
                 f" (around {when:%H:%M} UTC)")
    return text
