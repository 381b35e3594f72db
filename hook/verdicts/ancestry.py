"""Does a commit contain another? The local git repository answers, for the guard's ``git push`` rule.

A push onto a held PR's base branch lands that PR when the pushed commit contains the PR's head
(GitHub then marks it merged); the guard asks ``git merge-base --is-ancestor HEAD_SHA COMMIT`` in the
directory the push runs from (a worktree or ``git -C`` path works as git itself resolves it). Only
pushes whose target is the base of a held PR get here, so ``subprocess`` is imported only then.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

GIT_TIMEOUT_S = 3.0
"""Per git call; far inside the agent's hook timeout. A git that does not answer leaves doubt (None)."""


def _git(gitdir: str, *args: str) -> int | None:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", gitdir, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode


def contains(gitdir: str, head_sha: str, commits: Sequence[str]) -> bool | None:
    """True when one of ``commits`` contains ``head_sha``; False when none does; None when git cannot tell.

    A head this repository does not have is in no history it can push; a commit-ish that names nothing
    (a branch not created yet) pushes nothing now (what the command creates is in ``commits`` too)."""
    if not head_sha or not all(c in "0123456789abcdef" for c in head_sha.lower()):
        return None
    for commit in commits:
        code = _git(gitdir, "merge-base", "--is-ancestor", head_sha, commit)
        if code == 0:
            return True
        if code == 1:
            continue
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{head_sha}^{{commit}}") == 1:
            return False
        if _git(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}") == 1:
            continue
        return None
    return False
