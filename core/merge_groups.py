"""Merge queue groups: which PR a group checks, and the status its head commit gets. Pure.

GitHub names a group's branch ``gh-readonly-queue/{base}/pr-{N}-{sha}``: PR N on top of the PRs ahead
of it in the queue, each of which is checked in its own group. The group's PR is read from that name
only — never from ``#N`` in the commit message, which quotes whatever the PR's title or body says
("Fixes #45").
"""

from __future__ import annotations

import re
from typing import Any

from core.freeze_gate import FREEZE_CONTEXT, is_freeze_record_hold
from core.status import CONTEXT, FREE_DESCRIPTION, cut

GROUP_REF = re.compile(r"^(?:refs/heads/)?gh-readonly-queue/(?P<base>.+)/pr-(?P<number>[0-9]+)-(?P<sha>[0-9a-f]{40})$")


def group_number(head_ref: str) -> int | None:
    """The PR a merge group checks, from its ``head_ref``; None when the name is not a queue branch."""
    found = GROUP_REF.match(head_ref.strip())
    return int(found.group("number")) if found else None


def drained(record: dict[str, Any] | None, since: str | None) -> dict[str, Any] | None:
    """``queue_on_freeze: drain``: the record as a group whose checks were requested at ``since`` (ISO)
    sees it — without the freeze holds placed after that moment (the group may finish; a group queued
    later is held). Other holds stay."""
    if record is None or not since or not record.get("holds"):
        return record
    kept = [h for h in record["holds"] if not (is_freeze_record_hold(h) and str(h.get("created_at") or "") > since)]
    if len(kept) == len(record["holds"]):
        return record
    if kept:
        return {**record, "holds": kept, "held": True}
    return {**record, "holds": [], "held": False, "state": "success", "description": FREE_DESCRIPTION,
            "drained": True}


def freeze_mark_for_group(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """A drained group under a ruleset freeze needs `merge-hold/freeze` = success on its commit too."""
    if record is None or not record.get("drained") or not record.get("freeze_mark"):
        return None
    return {"state": "success", "context": FREEZE_CONTEXT,
            "description": "Queued before the freeze began: may finish (queue_on_freeze: drain)"}


def group_status(number: int | None, record: dict[str, Any] | None) -> dict[str, Any]:
    """The status of a group's head commit from its PR's verdict record (which already carries the
    repo's ``held_state``): held as the PR is held, free as it is free, ``error`` when unknown — never
    ``success`` on doubt. Under a ruleset freeze the record's ``state`` is the per-PR one; a group of a
    PR the freeze holds is held (``stop``) unless `drained` freed it."""
    if number is None:
        return {"state": "error", "context": CONTEXT,
                "description": "Cannot establish holds: not a merge queue branch"}
    if record is None:
        return {"state": "error", "context": CONTEXT,
                "description": f"Cannot establish holds for PR #{number} yet"}
    state = str(record.get("state") or "error")
    if record.get("error") or state not in ("success", "failure", "pending", "error"):
        state = "error"
    if state == "success" and record.get("held") and record.get("freeze_mark"):
        state = "failure"  # held by a ruleset freeze: the per-PR status is success, the group is held
        record = {**record, "description": (record.get("freeze_mark") or {}).get("description", "frozen")}
    elif state == "success" and (record.get("held") or record.get("holds")):
        state = "error"  # an inconsistent record is doubt, not freedom
    description = FREE_DESCRIPTION if state == "success" else cut(f"PR #{number}: {record.get('description') or ''}")
    status: dict[str, Any] = {"state": state, "context": CONTEXT, "description": description}
    if record.get("target_url"):
        status["target_url"] = record["target_url"]
    return status
