"""Stacked pull requests (issue 15 item 4): a PR whose base branch is another open PR's head sits on it, and
merging it (``merge-async``, GitHub's way for stacks, or ``gh pr merge``) merges the PRs below it too. So before
a merge of a free PR goes through, the chain below it is read from the verdict source, and a held PR anywhere
in it blocks the merge, naming it (`hook.decide`).

The chain is the server's: each verdict record carries its ``base``, and ``default_base`` (false when the base
is not the repo's default branch); the head index maps a branch to the open PR whose head it is. The common
case costs nothing more than the one read: a PR whose record says its base is the default branch sits on
nothing. Otherwise each step is one by-branch lookup (`VerdictSource.lookup`: the head index, then that PR's
record — two Redis round trips, or one ``GET …/verdicts/O/R/branches/B``), until a base that is no open PR's
head, the default branch, or a held PR. A record from a server that does not publish ``default_base`` is
followed too (one more lookup, which usually finds no PR).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from hook.verdicts.sources import PrAnswer, PrQuery, VerdictSource

MAX_DEPTH = 16
"""Stacks deeper than this are not read to their end: the chain is then unknown (``on_unknown``)."""


def needs_chain(answer: PrAnswer) -> bool:
    """A managed PR with a free verdict whose base may be another PR's head."""
    record = answer.record
    if not answer.managed or answer.number is None or not isinstance(record, dict) or record.get("held"):
        return False
    return record.get("default_base") is not True and isinstance(record.get("base"), str) and bool(record["base"])


def follow(source: VerdictSource, queries: Sequence[PrQuery], answers: Sequence[PrAnswer]) -> None:
    """Fill ``below`` (and ``stack_problem``) of every answer that needs it. Raises `Unreachable` like a lookup."""
    for query, answer in zip(queries, answers, strict=True):
        if needs_chain(answer):
            _chain(source, query.repo, answer)


def _chain(source: VerdictSource, repo: str, answer: PrAnswer) -> None:
    from hook.verdicts.sources import PrQuery

    record = answer.record
    assert isinstance(record, dict)
    seen = {answer.number}
    base = str(record["base"])
    for _ in range(MAX_DEPTH):
        found = source.lookup([PrQuery(repo, None, base)], [])[0][0]
        if found.number is None or found.number in seen or not found.managed:
            return  # no open PR has that head (the default branch, a release branch): the stack ends
        seen.add(found.number)
        below = found.record
        if found.problem or not isinstance(below, dict):
            answer.stack_problem = (f"#{found.number}, the PR below it (head {base}): "
                                    f"{found.problem or 'no verdict is recorded for it'}")
            return
        answer.below.append((found.number, below))
        if below.get("held") or below.get("default_base") is True or not isinstance(below.get("base"), str):
            return
        base = str(below["base"])
    answer.stack_problem = f"the stack below it is deeper than {MAX_DEPTH} PRs"
