"""Scopes of room and freeze holds: one PR, a repo, a branch glob of a repo, or an org."""

from __future__ import annotations

from fnmatch import fnmatchcase


def pr_scope(repo: str, number: int) -> str:
    return f"{repo}#{number}"


def scope_applies(scope: str, repo: str, number: int, base: str) -> bool:
    """Does a hold scoped ``scope`` apply to PR ``repo#number`` whose base branch is ``base``?

    Repo and owner names compare case-insensitively, as GitHub does; branch globs are case-sensitive
    (git branch names are).
    """
    repo_l = repo.lower()
    if "#" in scope:
        scope_repo, _, num = scope.partition("#")
        return scope_repo.lower() == repo_l and num == str(number)
    if "@" in scope:
        scope_repo, _, glob = scope.partition("@")
        return scope_repo.lower() == repo_l and fnmatchcase(base, glob)
    if "/" in scope:
        return scope.lower() == repo_l
    return repo_l.split("/", 1)[0] == scope.lower()


def scope_repo(scope: str) -> str | None:
    """The repo a scope lies in, or ``None`` for an org scope."""
    if "/" not in scope:
        return None
    return scope.partition("#")[0].partition("@")[0]
