"""What detection finds in a tool call: the merges it would perform. Shared by explain and the guard.

Plain slotted classes, not dataclasses: ``import dataclasses`` pulls in ``inspect`` and costs about
as much as the whole interpreter start (≈ 15 ms measured), and the guard imports this module on every
merge-looking call (start-up budget, design §7). They keep the dataclass surface the callers use:
keyword construction, immutability, equality, hashing, ``repr`` and ``replace``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MERGE_FIELDS = ("via", "repo", "pr", "branch", "push_target", "undetermined", "detail", "host")


class Merge:
    """One pull-request merge a tool call would perform.

    ``via`` names the path: ``gh_pr_merge``, ``gh_alias`` (a gh alias or extension), ``gh_api_rest``,
    ``gh_api_graphql``, ``curl``, ``wget``, ``http``, ``git_push``, ``mcp``, and for merges seen only
    as a possibility ``make``, ``script`` (an interpreter one-liner), ``agent`` (a nested agent
    session), ``git_ext`` (a third-party git subcommand), ``obfuscated`` (decoded text run by a
    shell), ``unparsed`` (text no parser could read). ``repo`` is ``owner/name`` or ``None`` when
    unknown, and ``host`` its GitHub Enterprise host (``None`` for github.com); ``pr`` the number or
    ``None``; ``branch`` the head branch when the PR is named by branch (or the current branch, for a
    selector-less ``gh pr merge``, or the branch a ``git push`` lands). ``push_target`` is the base
    branch a ``git push`` (or a ref update) writes to. ``undetermined`` marks a merge whose target
    the text does not reveal (``$PR``, ``$(...)``, a GraphQL node id, xargs from stdin, an alias).
    """

    __slots__ = _MERGE_FIELDS

    via: str
    repo: str | None
    pr: int | None
    branch: str | None
    push_target: str | None
    undetermined: bool
    detail: str
    host: str | None

    def __init__(self, via: str, repo: str | None = None, pr: int | None = None, branch: str | None = None,
                 push_target: str | None = None, undetermined: bool = False, detail: str = "",
                 host: str | None = None) -> None:
        for name, value in zip(_MERGE_FIELDS, (via, repo, pr, branch, push_target, undetermined, detail, host),
                               strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Merge is immutable; use replace(): cannot set {name!r}")

    def _key(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _MERGE_FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Merge) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "Merge(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _MERGE_FIELDS) + ")"

    def replace(self, **changes: Any) -> Merge:
        values = {name: getattr(self, name) for name in _MERGE_FIELDS}
        values.update(changes)
        return Merge(**values)

    def to_json(self) -> dict[str, Any]:
        return {"via": self.via, "repo": self.repo, "pr": self.pr, "branch": self.branch}


class Detection:
    __slots__ = ("merges", "notes")

    merges: tuple[Merge, ...]
    notes: tuple[str, ...]

    def __init__(self, merges: tuple[Merge, ...] = (), notes: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "merges", tuple(merges))
        object.__setattr__(self, "notes", tuple(notes))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Detection is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Detection) and (self.merges, self.notes) == (other.merges, other.notes)

    def __hash__(self) -> int:
        return hash((self.merges, self.notes))

    def __repr__(self) -> str:
        return f"Detection(merges={self.merges!r}, notes={self.notes!r})"

    @property
    def undetermined(self) -> bool:
        return any(m.undetermined for m in self.merges)

    def to_json(self) -> dict[str, Any]:
        return {"merges": [m.to_json() for m in self.merges], "undetermined": self.undetermined}
