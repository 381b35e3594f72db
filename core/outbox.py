"""The outbox's grammar, in one place: an installation's bucket name and the members its outboxes hold.

An outbox (`core.keys.outbox`) is a sorted set per pacer bucket — one per GitHub installation, since
GitHub's write limits are counted per installation. Its members are stored strings (an on-disk format,
read back by every later release):

- ``repo#N``: PR N's `merge-hold` status (also the freeze-mark outbox's members);
- ``repo@SHA#N``: a merge group's commit SHA, carrying PR N's verdict (``#0``: the group names no PR).

Repo names hold neither ``@`` nor ``#``, so the split is unambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass

GLOBAL_BUCKET = "global"
"""The bucket of a repo whose installation is not known (its state was lost): paced together."""


def bucket(installation_id: int | str) -> str:
    """The pacer bucket (and outbox) of one GitHub installation."""
    return f"inst-{installation_id}"


def pr_member(repo: str, number: int) -> str:
    return f"{repo}#{number}"


def group_member(repo: str, sha: str, number: int | None) -> str:
    return f"{repo}@{sha}#{number or 0}"


@dataclass(frozen=True)
class Member:
    repo: str
    number: int
    """The PR; 0 for a merge group that names none."""
    sha: str = ""
    """A merge group's commit; empty for a PR's head status."""


def parse_member(raw: bytes | str) -> Member:
    """``repo#N`` or ``repo@SHA#N``, as stored, back into its parts."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    head, _, number = text.rpartition("#")
    repo, _, sha = head.partition("@")
    return Member(repo, int(number), sha)
