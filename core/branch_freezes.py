"""What is frozen in a repository: the per-repo record the workers keep (`core.keys.branch_freezes`) and the
agent hook reads in its one lookup (design §6: a push into a freeze, and the SessionStart context).

A verdict is per PR; a push straight onto a branch has no PR, so the hook needs the freezes themselves:
every room hold on the repository, on one of its branch globs or on its org (the tree closer's holds are
branch holds too), and every occurrence of a freeze window of the repo config over the next `HORIZON`,
each with who, why, from and until when. Listing the occurrences ahead keeps the record true between a
window's edges without a write at each edge: its readers compare times (ISO 8601 UTC, where lexical order
is time order), as they already do for a hold's expiry. The workers rewrite it whenever a room hold, the
config or the repo changes (`state.branch_freezes`, on the publishing path) and at every reconcile; after
``until`` a reader finds it stale (the workers have stopped) and doubts, as it does when ``error`` says the
repo config could not be read (its windows are unknown).

Shape (compact JSON, format ``f`` 1)::

    {"f": 1, "repo": "acme/widgets", "default_branch": "main", "at": "…Z", "until": "…Z", "error": null,
     "freezes": [{"branches": "release/*", "source": "room", "holder": "alice", "reason": "…",
                  "scope": "acme/widgets@release/*", "from": "…Z", "to": "…Z" or null, "origin": "…",
                  "paths": ["docs/**"]}]}

``branches`` is the glob a freeze covers (the verdict's reading: ``fnmatch``, ``*`` spans ``/``,
case-sensitive). `WHOLE` — a hold on the repository or its org, a window on every branch — covers the
branches work lands on: the default branch and the base branch of every open PR (a push to a topic
branch lands nothing while the repository is frozen).

``paths`` (present only on a freeze scoped by path: a room hold placed with paths, a window with ``paths``)
holds gitignore-style globs (`core.paths`): the freeze binds only work that changes a matching file, as the
verdict reads it for a PR. A reader that does not know the field reads the freeze as whole (it binds more,
never less).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from core.freeze import occurrences, window_reason
from core.holds import Hold, Source, to_iso
from core.repo_config import RepoConfig

FORMAT = 1
HORIZON = timedelta(days=7)
"""How far ahead window occurrences are listed, and how long a record stays valid unwritten (the reconcile
rewrites it every few minutes). Within `core.freeze.HORIZON_DAYS`, where occurrences are looked for."""
WHOLE = "*"
"""The glob of a freeze on the whole repository (a repo or org hold, a window on ``*``)."""


def glob_of(scope: str) -> str:
    """The branch glob a repo, branch or org scope freezes (`WHOLE` for the repository and its org)."""
    glob = scope.partition("@")[2] if "@" in scope else WHOLE
    return WHOLE if glob.strip("*") == "" else glob


def build(repo: str, *, config: RepoConfig | None, config_error: str | None, scoped_holds: Iterable[Hold],
          default_branch: str | None, now: datetime) -> dict[str, Any]:
    """The record for ``repo`` at ``now``: its branch freezes, active or ahead within `HORIZON`."""
    until = now + HORIZON
    freezes: list[dict[str, Any]] = []
    for hold in sorted(scoped_holds, key=lambda h: (h.created_at, h.id)):
        # A room hold on the repo, a branch glob or the org (not a PR): by path too, which no ruleset can
        # carry (`core.freeze_gate.is_freeze_hold`) but a push's changed files can be judged by.
        if hold.source is Source.ROOM and "#" not in hold.scope and hold.active(now):
            freezes.append(_entry(glob_of(hold.scope), hold.source.value, hold.holder, hold.reason, hold.scope,
                                  hold.created_at, hold.expires_at, hold.origin, hold.paths))
    if config is None and config_error is None:
        config_error = "repo config not loaded yet"
    for window in config.freeze_windows if config is not None and config_error is None else ():
        for start, end in occurrences(window, now, until):
            for glob in window.branches:
                freezes.append(_entry(glob_of(f"{repo}@{glob}"), Source.FREEZE.value, window.name,
                                      window_reason(window, end), f"{repo}@{glob}", start, end,
                                      f"schedule:{window.name}", window.paths))
    return {"f": FORMAT, "repo": repo, "default_branch": default_branch, "at": to_iso(now), "until": to_iso(until),
            "error": config_error, "freezes": freezes}


def _entry(branches: str, source: str, holder: str, reason: str, scope: str, start: datetime,
           end: datetime | None, origin: str, paths: tuple[str, ...] = ()) -> dict[str, Any]:
    entry = {"branches": branches, "source": source, "holder": holder, "reason": reason, "scope": scope,
             "from": to_iso(start), "to": to_iso(end), "origin": origin}
    return {**entry, "paths": list(paths)} if paths else entry
