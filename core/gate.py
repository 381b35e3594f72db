"""Does a branch still require `merge-hold` from this App? GitHub's two answers, read in one place.

`merge-hold doctor` and the tamper watch (`workers.events.tamper`) both ask GitHub the same two questions with
the least permission — ``GET /repos/{o}/{r}/branches/{b}`` (its ``protection`` summary; Contents: read)
and ``GET /repos/{o}/{r}/rules/branches/{b}`` (the active rules; Metadata: read) — and hand the answers
(status code and parsed body) here. Pure: no I/O.

The reading is one of three states, never a guess:

- ``required``: something on the branch requires `merge-hold` pinned to this App's id;
- ``unenforced``: both answers were read and nothing pins it (absent, any source, or another App);
- ``undetermined``: nothing read pins it, but an answer was refused or failed, so what was not seen may.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.readiness import GateFinding, Requirement, from_branch, from_rules, judge_gate, merge_queue_on

REQUIRED, UNENFORCED, UNDETERMINED = "required", "unenforced", "undetermined"
STATES = (REQUIRED, UNENFORCED, UNDETERMINED)
REFUSED = (401, 403, 404)
"""Answers that mean "not allowed to see it" (or, for the branch, not there): a finding, not an outage."""

Answer = tuple[int, Any]
"""(HTTP status, parsed JSON body) of one GET; status 0 when no request could be made."""


@dataclass(frozen=True)
class GateReading:
    branch: str
    state: str
    finding: GateFinding
    blind: tuple[str, ...] = ()
    """What could not be read, and the permission that would show it."""
    requirements: tuple[Requirement, ...] = ()
    rules: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)

    @property
    def detail(self) -> str:
        return "; ".join([self.finding.detail, *self.blind])

    @property
    def merge_queue(self) -> bool:
        return merge_queue_on(self.rules)

    def as_dict(self) -> dict[str, Any]:
        """The stored form (`state.gates`): what a banner and doctor show."""
        return {"branch": self.branch, "state": self.state, "detail": self.detail, "fix": self.finding.fix,
                "where": sorted({r.where for r in self.requirements})}


def _message(body: Any) -> str:
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def _blind(answer: Answer, permission: str, what: str) -> str:
    status, body = answer
    if status in REFUSED:
        return (f"GitHub refused ({status} {_message(body) or 'no message'}) reading {what}: "
                f"grant the App {permission} to let merge-hold see it")
    shown = f"{status} {_message(body)}".strip() if status else "no answer"
    return f"GitHub could not be read ({shown}) for {what}"


def read_gate(branch: str, branch_answer: Answer, rules_answer: Answer, app_id: int) -> GateReading:
    """Judge one branch from GitHub's answers to the branch read and the branch-rules read."""
    requirements: list[Requirement] = []
    blind: list[str] = []
    status, body = branch_answer
    if status == 200 and isinstance(body, dict):
        requirements += from_branch(body)
    else:
        blind.append(_blind(branch_answer, "Contents: read", f"{branch}'s branch protection"))
    rules: Sequence[Mapping[str, Any]] = ()
    status, body = rules_answer
    if status == 200 and isinstance(body, list):
        rules = [r for r in body if isinstance(r, dict)]
        requirements += from_rules(rules)
    else:
        blind.append(_blind(rules_answer, "Metadata: read", f"{branch}'s rulesets"))
    finding = judge_gate(requirements, app_id, branch)
    # One requirement pinned to us makes the gate real whatever else was unreadable (every requirement
    # must pass); without one, an unread answer might have held it: undetermined, never "fine".
    state = REQUIRED if finding.ok else (UNDETERMINED if blind else UNENFORCED)
    return GateReading(branch, state, finding, tuple(blind), tuple(requirements), tuple(rules))
