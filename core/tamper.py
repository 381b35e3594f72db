"""The tamper watch, pure: what changed on a branch's gate, and what merge-hold says about it.

A managed branch (the default branch, and every base of an open PR) is judged from GitHub's answers
(`core.gate.read_gate`) whenever an event says its protection or rules may have changed. Compared with
the branch's last reading, a reading is news only when the state moves:

| before | now | change |
|---|---|---|
| required, or never read | unenforced | ``lost``: the gate stopped binding — recorded, told, banner, answers |
| required, or never read | undetermined | ``blind``: merge-hold cannot confirm it — recorded, told, banner |
| unenforced or undetermined | required | ``restored``: the banner goes, and that is recorded too |
| unenforced | undetermined, or back | nothing new: the banner stays, with the newest detail |

A suspended App is a repo-wide episode of its own (``suspended``): it can post no status any more, so
holds placed, lifted or expiring do not reach GitHub.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.escaping import for_github_comment, one_line
from core.gate import REQUIRED, UNDETERMINED, UNENFORCED

LOST, BLIND, RESTORED = "lost", "blind", "restored"
SUSPENDED = "suspended"
KINDS = (LOST, BLIND, SUSPENDED)
"""Episodes that put up a banner (the metric's label)."""


def change(previous: Mapping[str, Any] | None, state: str) -> str | None:
    """What a new reading ``state`` of a branch means, given its stored reading (None: never read)."""
    before = previous.get("state") if previous else None
    if state == UNENFORCED and before in (None, REQUIRED):
        return LOST
    if state == UNDETERMINED and before in (None, REQUIRED):
        return BLIND
    if state == REQUIRED and before in (UNENFORCED, UNDETERMINED):
        return RESTORED
    return None


def unenforced(reading: Mapping[str, Any] | None) -> bool:
    """Whether a stored reading puts up a banner."""
    return reading is not None and reading.get("state") in (UNENFORCED, UNDETERMINED)


def _by(actor: str | None) -> str:
    return f" (changed by @{actor})" if actor else ""


def held_pr_answer(branch: str, actor: str | None, detail: str, fix: str) -> str:
    """The one answer on a held PR whose base stopped requiring merge-hold. No line starts with ``/``
    and only the person who changed it is mentioned, checked on the final text (`core.escaping`)."""
    lines = [f"**{one_line(branch)} no longer requires merge-hold{_by(actor)}: this hold is not enforced.**",
             "", f"GitHub now says: {one_line(detail)}."]
    if fix:
        lines.append(f"To enforce it again: {one_line(fix)}.")
    lines.append("Until then the hold is a request, not a gate: please do not merge this pull request.")
    return for_github_comment("\n".join(lines), [actor] if actor else [])


def banner(repo: str, reading: Mapping[str, Any]) -> str:
    """One line of the red banner on the repo's dashboard pages (and doctor's problem)."""
    branch = str(reading.get("branch") or "?")
    actor = reading.get("actor")
    if reading.get("state") == SUSPENDED:
        return (f"merge-hold was suspended on {repo}{_by(actor)}: "
                "it can no longer post its status, so holds placed, lifted or expiring there do not reach GitHub")
    if reading.get("state") == UNDETERMINED:
        return (f"merge-hold cannot confirm that {repo}@{branch} requires it{_by(actor)}: "
                f"holds there may not be enforced — {reading.get('detail', '')}")
    return (f"{repo}@{branch} no longer requires merge-hold{_by(actor)}: holds there are not enforced — "
            f"{reading.get('detail', '')}")
