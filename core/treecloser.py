"""The tree closer: a base branch whose CI goes red holds every PR into it until it is green again
(Chromium's and Mozilla's tree status). Repo config `close_on_failure`.

Pure. A result counts only while its commit is the branch's head (LUCI's tree closer works the same
way): the head comes from `push` events (`after_push`) or, when unknown, from GitHub; a result on any
other commit — parallel CI finishing late on the previous head, a fork's PR whose branch is also called
`main` — changes nothing. Among results on the current head, each named context's newest decides, by
the result's own time (ties fail closed: red wins); a result on the current head always replaces one
recorded on an older head. The branch is closed while any named context's recorded result is red, and
open once every red one went green on a later head or in a re-run: a push alone never reopens it.
Placing and lifting the hold is `workers/events/treecloser.py`; the heads are `workers/events/tree_heads.py`.
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


@dataclass(frozen=True)
class Head:
    """A branch's head commit and when it became the head: the push's time (`repository.pushed_at`) or
    when GitHub was asked; None when a push did not say."""

    sha: str
    at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"sha": self.sha, "at": self.at.isoformat() if self.at else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Head:
        at = data.get("at")
        return cls(str(data["sha"]), datetime.fromisoformat(str(at)) if at else None)


def after_push(current: Head | None, before: str, after: str, at: datetime | None) -> Head | None:
    """The branch's head once a push ``before -> after`` (pushed at ``at``) is applied, whatever order
    pushes arrive in; None when that cannot be told (ask GitHub). A push continuing the known head
    follows it; otherwise the later push wins; two pushes of one second with no chain between them are
    undecided (GitHub's times have one-second precision)."""
    if current is None:
        return Head(after, at)
    if after == current.sha:
        return current  # the same push again, or one that moved nothing we did not know
    if before == current.sha:
        return Head(after, at)
    if at is None or current.at is None or at == current.at:
        return None
    return Head(after, at) if at > current.at else current


def replaces(stored: Result | None, result: Result) -> bool:
    """Whether ``result`` (on the branch's current head) replaces the context's recorded result: always
    over one on another commit (an older head), else when it is newer (a re-run; ties: red)."""
    return stored is None or stored.sha != result.sha or result.newer_than(stored)


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
    """Whether a commit status of another context may move a tree, or be recorded as a late result: a
    final state (not `pending`) on a commit some branch contains (`branches[]`). The intake pump queues
    only these, so CI's stream of pending statuses never reaches the workers. Whether the commit is
    the head is the workers' question: the payload's `branches[].commit` is the head when GitHub built
    the event, which a delivery may outlive."""
    if classify("status", payload.get("state")) is None:
        return False
    return any(isinstance(b, Mapping) and b.get("name") for b in payload.get("branches") or [])
