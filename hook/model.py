"""What detection finds in a tool call: the merges it would perform. Shared by explain and the guard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Merge:
    """One pull-request merge a tool call would perform.

    ``via`` names the path: ``gh_pr_merge``, ``gh_api_rest``, ``gh_api_graphql``, ``curl``, ``wget``,
    ``git_push``, ``mcp``. ``repo`` is ``owner/name`` or ``None`` when unknown; ``pr`` the number or
    ``None``; ``branch`` the head branch when the PR is named by branch (or the current branch, for a
    selector-less ``gh pr merge``, or the branch a ``git push`` sends). ``push_target`` is the base
    branch a ``git push`` writes to. ``undetermined`` marks a merge whose target the text does not
    reveal (``$PR``, ``$(...)``, a GraphQL node id, xargs from stdin).
    """

    via: str
    repo: str | None = None
    pr: int | None = None
    branch: str | None = None
    push_target: str | None = None
    undetermined: bool = False
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"via": self.via, "repo": self.repo, "pr": self.pr, "branch": self.branch}


@dataclass(frozen=True)
class Detection:
    merges: tuple[Merge, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def undetermined(self) -> bool:
        return any(m.undetermined for m in self.merges)

    def to_json(self) -> dict[str, Any]:
        return {"merges": [m.to_json() for m in self.merges], "undetermined": self.undetermined}
