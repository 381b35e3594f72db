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

_MERGE_FIELDS = ("via", "repo", "pr", "branch", "push_target", "undetermined", "detail", "host", "lift",
                 "commits", "gitdir", "tamper", "tracking", "writes")


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

    A tool call that would *lift* a hold is judged like a merge: ``lift`` names how (`LIFTS`).
    A ``git push`` carries the commits it would write to ``push_target`` (``commits``: commit-ish
    expressions to evaluate in ``gitdir``, the pushed source first, then whatever this same command
    merges into it first); the guard blocks it when one of them contains a held PR's head with that base.
    A ``push_target`` ending in ``*`` is a pattern (``--all``, ``refs/heads/*:refs/heads/*``) whose
    commit is the ``commits[0]`` pattern with the same stem.

    A push writes nothing new when each of its ``commits`` already is the remote's branch: ``tracking`` is the
    remote-tracking prefix to compare with (``refs/remotes/origin/``), or None when that cannot be trusted (a
    URL remote, or an earlier command of the same call may have moved a ref: ``git commit && git push``).

    A tool call that writes new commits onto a branch other than by ``git push`` (the contents API, an MCP
    file tool, a ref update, a merge through the API) carries ``writes``: that branch (``""``: the repository's
    default branch). It is no merge by itself; the guard checks it against the repo's freezes (a push into a
    freeze, design §6), and ``undetermined`` says the branch is not in the text.

    A tool call that would *weaken the gate* (design §6: a person's act) is judged like a merge too:
    ``tamper`` names the act (forging the ``merge-hold`` status, changing branch protection or a ruleset,
    suspending the App, writing ``.github/merge-hold.yml`` …), ``repo`` where it happens.
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
    lift: str | None
    commits: tuple[str, ...]
    gitdir: str | None
    tamper: str | None
    tracking: str | None
    writes: str | None

    def __init__(self, via: str, repo: str | None = None, pr: int | None = None, branch: str | None = None,
                 push_target: str | None = None, undetermined: bool = False, detail: str = "",
                 host: str | None = None, lift: str | None = None, commits: tuple[str, ...] = (),
                 gitdir: str | None = None, tamper: str | None = None, tracking: str | None = None,
                 writes: str | None = None) -> None:
        values = (via, repo, pr, branch, push_target, undetermined, detail, host, lift, tuple(commits), gitdir,
                  tamper, tracking, writes)
        for name, value in zip(_MERGE_FIELDS, values, strict=True):
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
        if self.tamper:
            return {"via": self.via, "repo": self.repo, "act": self.tamper}
        shown: dict[str, Any] = {"via": self.via, "repo": self.repo, "pr": self.pr, "branch": self.branch}
        if self.lift:
            shown["lift"] = self.lift
        return shown


LIFTS = ("comment", "comment?", "review", "approve", "dismiss")
"""A comment or review whose body lifts a hold (``comment?``: a body the text does not show), an
approval (it lifts its author's changes-requested hold), a review dismissal. ``label:NAME`` removes
label NAME (``label:*``: some label the text does not name)."""


def is_merge(merge: Merge) -> bool:
    """A merge proper: not a lift, a tamper or a write onto a branch (judged against the freezes only), and not
    a ``git push`` of a branch to its own name with nothing merged into it here (such a push is checked
    against the held heads and the freezes, but the text shows no merge)."""
    if merge.lift or merge.tamper or merge.writes is not None:
        return False
    return merge.via != "git_push" or merge.undetermined or merge.branch is not None


class Detection:
    """``gated``: everything the guard judges (merges, lifts, tampers, pushes to check); ``merges``: the merges
    proper among them (what ``hook explain`` reports and the soundness tests compare)."""

    __slots__ = ("gated", "merges", "notes")

    gated: tuple[Merge, ...]
    merges: tuple[Merge, ...]
    notes: tuple[str, ...]

    def __init__(self, gated: tuple[Merge, ...] = (), notes: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "gated", tuple(gated))
        object.__setattr__(self, "merges", tuple(m for m in gated if is_merge(m)))
        object.__setattr__(self, "notes", tuple(notes))

    @property
    def lifts(self) -> tuple[Merge, ...]:
        return tuple(m for m in self.gated if m.lift)

    @property
    def tampers(self) -> tuple[Merge, ...]:
        return tuple(m for m in self.gated if m.tamper)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Detection is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Detection) and (self.gated, self.notes) == (other.gated, other.notes)

    def __hash__(self) -> int:
        return hash((self.gated, self.notes))

    def __repr__(self) -> str:
        return f"Detection(gated={self.gated!r}, notes={self.notes!r})"

    @property
    def undetermined(self) -> bool:
        return any(m.undetermined for m in self.merges)

    def to_json(self) -> dict[str, Any]:
        return {"merges": [m.to_json() for m in self.merges], "lifts": [m.to_json() for m in self.lifts],
                "tampers": [m.to_json() for m in self.tampers], "undetermined": self.undetermined}
