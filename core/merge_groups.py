"""Merge queue groups: which PR a group checks, and the status its head commit gets. Pure.

GitHub names a group's branch ``gh-readonly-queue/{base}/pr-{N}-{sha}``: PR N on top of the PRs ahead
of it in the queue, each of which is checked in its own group. The group's PR is read from that name
only — never from ``#N`` in the commit message, which quotes whatever the PR's title or body says
("Fixes #45").
"""

from __future__ import annotations

import re
from typing import Any

from core.status import CONTEXT, FREE_DESCRIPTION, cut

GROUP_REF = re.compile(r"^(?:refs/heads/)?gh-readonly-queue/(?P<base>.+)/pr-(?P<number>[0-9]+)-(?P<sha>[0-9a-f]{40})$")


def group_number(head_ref: str) -> int | None:
    """The PR a merge group checks, from its ``head_ref``; None when the name is not a queue branch."""
    found = GROUP_REF.match(head_ref.strip())
    return int(found.group("number")) if found else None


def group_status(number: int | None, record: dict[str, Any] | None) -> dict[str, Any]:
    """The status of a group's head commit from its PR's verdict record (which already carries the
    repo's ``held_state``): held as the PR is held, free as it is free, ``error`` when unknown — never
    ``success`` on doubt."""
    if number is None:
        return {"state": "error", "context": CONTEXT,
                "description": "Cannot establish holds: not a merge queue branch"}
    if record is None:
        return {"state": "error", "context": CONTEXT,
                "description": f"Cannot establish holds for PR #{number} yet"}
    state = str(record.get("state") or "error")
    if record.get("error") or state not in ("success", "failure", "pending", "error"):
        state = "error"
    if state == "success" and (record.get("held") or record.get("holds")):
        state = "error"  # an inconsistent record is doubt, not freedom
    description = FREE_DESCRIPTION if state == "success" else cut(f"PR #{number}: {record.get('description') or ''}")
    status: dict[str, Any] = {"state": state, "context": CONTEXT, "description": description}
    if record.get("target_url"):
        status["target_url"] = record["target_url"]
    return status
