"""`/hold-for #123`: a hold that lifts itself when another PR merges or an issue closes.

Pure: the grammar (a line-anchored command in the comment's prose, like the other PR commands), the
dependency reference, and the hold it becomes. Placing, indexing and lifting are `workers/events/holdfor.py`.

    /hold-for #123                      a PR or issue of the same repository
    /hold-for acme/lib#45               another repository (of the same installation)
    /hold-for https://github.com/acme/lib/pull/45   (or …/issues/45)
    /hold-for cancel                    lift one's own /hold-for holds on this PR
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from core.comments import prose_lines
from core.holds import Hold, Source

_LINE = re.compile(r"^/hold-for(?:\s+(?P<arg>\S+))?\s*$", re.IGNORECASE)
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,99})"
_REF = re.compile(rf"^(?:(?P<repo>{_NAME}/{_NAME}))?#(?P<number>[1-9][0-9]{{0,9}})$")
_URL = re.compile(rf"^https?://[^/\s]+/(?P<repo>{_NAME}/{_NAME})/(?:pull|issues)/(?P<number>[1-9][0-9]{{0,9}})/?$")


@dataclass(frozen=True)
class Dependency:
    repo: str
    number: int

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}"


@dataclass(frozen=True)
class HoldFor:
    """One `/hold-for` line: ``target`` is None for `cancel`; ``error`` when the argument is unreadable."""

    target: Dependency | None
    error: str = ""


def parse_hold_for(body: str, repo: str) -> list[HoldFor]:
    """The `/hold-for` commands of a comment on a PR of `repo`, first occurrence of each target."""
    found: list[HoldFor] = []
    for line in prose_lines(body):
        match = _LINE.match(line.strip())
        if match is None:
            continue
        arg = match["arg"] or ""
        if arg.lower() == "cancel":
            command = HoldFor(None)
        else:
            ref = _REF.match(arg) or _URL.match(arg)
            if ref is None:
                command = HoldFor(None, f"`/hold-for {arg}`: expected `#123`, `owner/repo#123` or a PR or issue URL")
            else:
                command = HoldFor(Dependency(ref["repo"] or repo, int(ref["number"])))
        if command not in found:
            found.append(command)
    return found


def hold_id(holder: str, dependency: Dependency) -> str:
    return f"holdfor:{holder.lower()}:{str(dependency).lower()}"


def make_hold(pr_scope: str, holder: str, dependency: Dependency, *, pull: bool, at: datetime,
              origin: str) -> Hold:
    """The hold on the waiting PR (`pr_scope` is ``owner/repo#N``). A comment-sourced hold: exemptions
    never pass it, like any hold a person put on one PR."""
    waiting = "to merge" if pull else "to close"
    return Hold(id=hold_id(holder, dependency), source=Source.COMMENT, scope=pr_scope, holder=holder,
                reason=f"waiting for {dependency} {waiting}", created_at=at, origin=origin)


def lifts(kind: str, action: str, merged: bool) -> bool:
    """Whether an event on the dependency lifts its waiters: a PR merged, an issue closed. A PR closed
    without merging lifts nothing (what was waited for did not land)."""
    if action != "closed":
        return False
    return merged if kind == "pull" else True
