"""The tree closer: a base branch whose CI goes red holds every PR into it until it is green again
(Chromium's and Mozilla's tree status). Repo config `close_on_failure`.

Pure: each named context's latest result on the branch's head is a register ordered by the result's
own time (ties fail closed: red wins); the branch is closed while any named context's latest result is
red, open once every red one went green (a later head, or a re-run). Placing and lifting the hold is
`workers/treecloser.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

RED_STATUS = frozenset({"failure", "error"})
GREEN_STATUS = frozenset({"success"})
RED_CHECK = frozenset({"failure", "timed_out", "startup_failure"})
GREEN_CHECK = frozenset({"success", "neutral", "skipped"})
"""`cancelled`, `stale` and `action_required` say nothing about the tree: they change nothing."""


@dataclass(frozen=True)
class TreeRule:
    branch: str  # a branch name or glob (`release/*`)
    contexts: tuple[str, ...]  # status contexts or check run names

    def covers(self, branch: str) -> bool:
        return fnmatchcase(branch, self.branch)

    def watches(self, branch: str, context: str) -> bool:
        return self.covers(branch) and context in self.contexts


@dataclass(frozen=True)
class Result:
    sha: str
    red: bool
    at: datetime

    def newer_than(self, other: Result | None) -> bool:
        # Equal times: red wins, so a tie never opens a closed tree.
        return other is None or (self.at, self.red) > (other.at, other.red)

    def to_dict(self) -> dict[str, Any]:
        return {"sha": self.sha, "red": self.red, "at": self.at.isoformat()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        return cls(str(data["sha"]), bool(data["red"]), datetime.fromisoformat(str(data["at"])))


def classify(kind: str, outcome: str | None) -> bool | None:
    """True red, False green, None no news; `kind` is ``status`` (its state) or ``check`` (conclusion)."""
    value = (outcome or "").lower()
    red, green = (RED_STATUS, GREEN_STATUS) if kind == "status" else (RED_CHECK, GREEN_CHECK)
    return True if value in red else False if value in green else None


def red_contexts(results: Mapping[str, Result]) -> list[tuple[str, Result]]:
    return sorted(((c, r) for c, r in results.items() if r.red), key=lambda item: item[0])


def reason(branch: str, red: list[tuple[str, Result]]) -> str:
    """``main is red: ci/build failed on abc1234`` (+ how many more)."""
    context, result = red[0]
    more = f" (+{len(red) - 1} more)" if len(red) > 1 else ""
    return f"{branch} is red: {context} failed on {result.sha[:7]}{more}"


def status_may_matter(payload: Mapping[str, Any]) -> bool:
    """Whether a commit status of another context may move a tree: a final state (not `pending`) on
    a commit that is the head of a listed branch. The webhook receiver queues only these, so CI's
    stream of pending statuses never reaches the workers."""
    if classify("status", payload.get("state")) is None:
        return False
    sha = payload.get("sha")
    return any(isinstance(b, Mapping) and (b.get("commit") or {}).get("sha") == sha
               for b in payload.get("branches") or [])
