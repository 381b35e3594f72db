"""The tamper watch and the incidents in `merge-hold doctor`: what the workers recorded in Redis.

Each branch the watch last found not requiring `merge-hold` from this App (or a suspended App) is a
problem with the same words as the dashboard's red banner; recorded incidents are reported, not a
problem (they happened; `/incidents` shows them).
"""

from __future__ import annotations

from redis import Redis

from merge_hold.doctor_github import Check
from state import gates, incidents

SUSPENDED_FIX = "unsuspend the App in the installation's settings (Settings → GitHub Apps)"


def watch_checks(conn: Redis) -> list[Check]:
    checks: list[Check] = []
    for found in gates.active(conn, lambda _repo: True):
        fix = SUSPENDED_FIX if found.get("state") == "suspended" else str(found.get("fix") or "")
        checks.append(Check(f"{found['repo']}: tamper watch", False, str(found["banner"]), fix))
    latest = incidents.listing(conn, visible=lambda _repo: True, limit=1)
    if not latest:
        return [*checks, Check("incidents", True, "none recorded")]
    last = latest[0]
    by = f" by @{last['merged_by']}" if last.get("merged_by") else ""
    return [*checks, Check("incidents", True, f"{incidents.total(conn)} recorded (latest: {last['repo']}#"
                                              f"{last['number']} merged{by}); see /incidents")]
