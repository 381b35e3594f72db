"""The bootstraps half of `merge-hold doctor`: each installation's bootstrap (N of M open PRs have a
status; at the write window's pace, about when the rest will), and a warning against making
`merge-hold` a required check while one is far from done — a required check with no status blocks
the PR's merge until the bootstrap reaches it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.bootstrap import FAR_FROM_DONE, line, writes_per_hour
from foundation.settings import Settings
from merge_hold.doctor_github import Check

if TYPE_CHECKING:
    from redis import Redis


def bootstrap_checks(conn: Redis, settings: Settings, now: datetime | None = None) -> list[Check]:
    from state import bootstrap

    when = now or datetime.now(UTC)
    per_hour = writes_per_hour(settings.write_rate_per_minute, settings.write_hourly)
    checks = []
    for inst in bootstrap.installations(conn):
        progress = bootstrap.progress(conn, inst)
        if progress is None:
            continue
        far = not progress.done and progress.far_from_done
        checks.append(Check(
            f"bootstrap of installation {inst}", not far, line(progress, per_hour, when),
            "" if not far else
            f"wait before making `merge-hold` a required check: {progress.left} open PRs show no status yet "
            f"(a required check without a status blocks the merge); it is safe from {FAR_FROM_DONE:.0%} on"))
    return checks
