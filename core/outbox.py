"""The outbox's grammar, in one place: an installation's bucket name and the members its outboxes hold.

An outbox (`core.keys.outbox`) is a sorted set per pacer bucket — one per GitHub installation, since
GitHub's write limits are counted per installation — of the GitHub writes waiting for the pacer, written
by the bucket's one drain (`workers.publishing.drain`). Its members are stored strings (an on-disk
format, read back by every later release):

- ``repo#N``: PR N's `merge-hold` status (also the members of the freeze-mark set of releases before
  issue 31, `core.keys.freeze_marks`);
- ``repo@SHA#N``: a merge group's commit SHA, carrying PR N's verdict (``#0``: the group names no PR);
- ``mark:repo#N`` (since issue 31): PR N's `merge-hold/freeze` status under a ruleset freeze
  (`workers.publishing.freeze_marks`), ranked after every status;
- ``run:repo#N`` (since issue 31): PR N's check run `merge-hold / holds` (`workers.publishing.check_runs`),
  ranked after every status.

Repo names hold neither ``@``, ``#`` nor ``:``, so every split is unambiguous. A release that does not
know a prefix (before issue 31 neither, the first of issue 31 no ``run:``) never wrote one: rolled back
to, it would take such a member for a PR of a repo named ``mark:owner/repo`` or ``run:owner/repo``, find
no record for it, and drop it.
"""

from __future__ import annotations

from dataclasses import dataclass

GLOBAL_BUCKET = "global"
"""The bucket of a repo whose installation is not known (its state was lost): paced together."""

MARK_PREFIX = "mark:"
RUN_PREFIX = "run:"


def bucket(installation_id: int | str) -> str:
    """The pacer bucket (and outbox) of one GitHub installation."""
    return f"inst-{installation_id}"


def pr_member(repo: str, number: int) -> str:
    return f"{repo}#{number}"


def group_member(repo: str, sha: str, number: int | None) -> str:
    return f"{repo}@{sha}#{number or 0}"


def mark_member(repo: str, number: int) -> str:
    """PR N's `merge-hold/freeze` status (a freeze mark)."""
    return f"{MARK_PREFIX}{repo}#{number}"


def run_member(repo: str, number: int) -> str:
    """PR N's check run `merge-hold / holds`."""
    return f"{RUN_PREFIX}{repo}#{number}"


@dataclass(frozen=True)
class Member:
    repo: str
    number: int
    """The PR; 0 for a merge group that names none."""
    sha: str = ""
    """A merge group's commit; empty for a PR's head status."""
    mark: bool = False
    """The PR's `merge-hold/freeze` status, not its `merge-hold` one."""
    run: bool = False
    """The PR's check run `merge-hold / holds`, not a status."""

    @property
    def status(self) -> bool:
        """A `merge-hold` status (a PR's head or a merge group's commit): neither a mark nor a run."""
        return not (self.mark or self.run)


def parse_member(raw: bytes | str) -> Member:
    """``repo#N``, ``repo@SHA#N``, ``mark:repo#N`` or ``run:repo#N``, as stored, back into its parts."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    mark, run = text.startswith(MARK_PREFIX), text.startswith(RUN_PREFIX)
    if mark or run:
        text = text.partition(":")[2]
    head, _, number = text.rpartition("#")
    repo, _, sha = head.partition("@")
    return Member(repo, int(number), sha, mark, run)
