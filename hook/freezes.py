"""A push into a freeze (design §6): a room hold or a freeze window that covers a branch stops new work from
being pushed onto it, whatever the work contains, by ``git push`` (any refspec form) or by the API and MCP
tools that write commits onto a branch (contents, file pushes, ref updates, merges). Agents often run with a
token whose owner may bypass branch protection; the guard is the layer that sees them.

The freezes come from the repo's branch freezes record (`core.branch_freezes`), read in the same one lookup
as the held PRs. A freeze on the whole repository covers the branches work lands on: the default branch and
the base of every held PR (under such a freeze every open PR is held). A push writes nothing new — and goes
on — when every commit it sends already is the remote's branch as the clone last saw it
(``refs/remotes/<remote>/<branch>``), and no earlier command of the same call may have made a commit; when
that cannot be told (a URL remote, no such ref, git not answering) the push is taken to write something.

A record that is missing, stale (past its ``until``), in an unknown format or that says the repo config
could not be read is ``on_unknown``'s: the freezes cannot be known. A push whose target the text does not
show, onto a repo with an active freeze, is ``on_undetermined``'s.

A freeze scoped by path (its entry's ``paths``) binds a push only when what the push sends changes a
matching file (`core.paths`, the verdict's reading for a PR); when git cannot list the files, or the write is
an API call, it binds.

Pure but for three injected questions to the local git (`hook.local_git`): ``same(gitdir, commits,
ref)``, ``branches(gitdir)`` and ``files(gitdir, commits)``.
"""

from __future__ import annotations

from hook.judgement import Judgement, hold_line, how_to_lift, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from hook.detect.model import Merge
    from hook.spec import Spec
    from hook.verdicts.sources import RepoAnswer

    Same = Callable[[str, Sequence[str], str], bool | None]
    Branches = Callable[[str], list[str] | None]
    Files = Callable[[str, Sequence[str]], list[str] | None]

FORMAT = 1
"""`core.branch_freezes.FORMAT` (not imported: the hook's start-up budget; pinned by a test)."""
WHOLE = "*"
MAX_SHOWN = 5
KEEP_OFF = ("Do not push onto a frozen branch, and do not work around the freeze (no other branch name, API "
            "call, force push or tool that lands the same commits). Stop here and ask the user how to proceed.")


def read_record(record: object, now_iso: str) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """``(freezes active at now_iso, the repo's default branch, problem)``; a problem means the freezes
    cannot be known."""
    if record is None:
        return [], None, ("no branch freezes record is published for it (the server predates this guard, or has "
                          "not written it yet)")
    if not isinstance(record, dict) or record.get("f") != FORMAT or not isinstance(record.get("freezes"), list):
        return [], None, "its branch freezes record is in an unknown format"
    if record.get("error"):
        return [], None, f"the server cannot read its freeze windows: {record['error']}"
    until = record.get("until")
    if not isinstance(until, str) or until <= now_iso:
        return [], None, f"its branch freezes record is stale (valid until {until}; the workers have not renewed it)"
    active = []
    for entry in record["freezes"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("branches"), str):
            return [], None, "its branch freezes record is malformed"
        start, end = entry.get("from"), entry.get("to")
        if isinstance(start, str) and start > now_iso:
            continue  # a window ahead
        if isinstance(end, str) and end <= now_iso:
            continue  # ended (a hold's expiry, a window's end): the record may predate it
        active.append(entry)
    default = record.get("default_branch")
    return active, default if isinstance(default, str) and default else None, None


def glob_match(pattern: str, name: str) -> bool:
    """``fnmatch.fnmatchcase`` (the verdict's reading of a branch glob: ``*`` spans ``/``, ``?``, ``[seq]``,
    ``[!seq]``), without ``re`` (start-up budget); pinned to it by a test."""
    p = n = 0
    star_p, star_n = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star_p, star_n, p = p, n, p + 1
            continue
        if p < len(pattern):
            step = _one(pattern, p, name[n])
            if step:
                p, n = p + step, n + 1
                continue
        if star_p < 0:
            return False
        star_n += 1
        p, n = star_p + 1, star_n
    return all(c == "*" for c in pattern[p:])


def _one(pattern: str, at: int, char: str) -> int:
    """How far the pattern advances when its element at ``at`` matches ``char``; 0 when it does not."""
    c = pattern[at]
    if c == "?":
        return 1
    if c != "[":
        return 1 if c == char else 0
    end = at + 1
    if end < len(pattern) and pattern[end] == "!":
        end += 1
    if end < len(pattern) and pattern[end] == "]":
        end += 1
    while end < len(pattern) and pattern[end] != "]":
        end += 1
    if end >= len(pattern):
        return 1 if char == "[" else 0  # an unclosed [ is a literal
    body = pattern[at + 1 : end]
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    found, i = False, 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            found = found or body[i] <= char <= body[i + 2]
            i += 3
        else:
            found = found or body[i] == char
            i += 1
    return end - at + 1 if found != negate else 0


def covers(glob: str, branch: str, default: str | None, bases: set[str]) -> bool:
    if glob == WHOLE:
        return branch == default or branch in bases
    return glob_match(glob, branch)


def _as_hold(entry: dict[str, Any]) -> dict[str, Any]:
    """A freeze entry in the shape of a hold, for the words the guard says about holds."""
    return {"source": entry.get("source"), "holder": entry.get("holder"), "reason": entry.get("reason"),
            "scope": entry.get("scope"), "origin": entry.get("origin"), "expires_at": entry.get("to"),
            "id": f"freeze:{entry.get('holder')}" if entry.get("source") == "freeze" else entry.get("scope")}


def describe(entries: list[dict[str, Any]], *, branches: bool = False) -> list[str]:
    """Lines naming each freeze (with the branches it covers, when ``branches``) and how it is lifted."""
    lines = []
    for entry in entries[:MAX_SHOWN]:
        hold = _as_hold(entry)
        until = f" (until {entry['to']})" if entry.get("to") and entry.get("source") != "freeze" else ""
        which = f"`{entry.get('branches')}`: " if branches else ""
        paths = entry.get("paths")
        only = f" (only changes to {', '.join(map(str, paths))})" if isinstance(paths, list) and paths else ""
        lines.append(f"  - {which}{hold_line(hold)}{until}{only}")
        lines.append(f"    to lift: {how_to_lift(hold)}")
    if len(entries) > MAX_SHOWN:
        lines.append(f"  (+{len(entries) - MAX_SHOWN} more freezes)")
    return lines


def bound(merge: Merge, frozen: list[dict[str, Any]], files: Files | None, commits: Sequence[str]) -> list[
        dict[str, Any]]:
    """The freezes of ``frozen`` a git push of ``commits`` is bound by: all but those scoped by path whose
    paths it changes no file of (known only from the local git; in doubt, or for an API write, all)."""
    if merge.writes is not None or not merge.gitdir or files is None or not any(e.get("paths") for e in frozen):
        return frozen
    changed = files(merge.gitdir, commits)
    if changed is None:
        return frozen
    from core.paths import PathsError, matches  # only for a freeze by path: not on the guard's start-up path

    def binds(entry: dict[str, Any]) -> bool:
        paths = entry.get("paths")
        if not paths:
            return True
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            return True  # malformed: read as a whole freeze
        try:
            return any(matches(paths, name) for name in changed)
        except PathsError:
            return True
    return [e for e in frozen if binds(e)]


def judge_freeze(merge: Merge, repo: RepoAnswer, spec: Spec, now_iso: str, same: Same,
                 branches: Branches, files: Files | None = None) -> Judgement | None:
    """A block when ``merge`` writes new commits onto a frozen branch (or may, where the text does not say
    which branch); None when no freeze is in its way."""
    if not repo.managed:
        return None
    active, default, problem = read_record(repo.freezes, now_iso)
    name = merge.repo or ""
    if problem is not None:
        return unknown(merge, spec, f"cannot tell which branches of {name} are frozen: {problem}")
    if not active:
        return None
    bases = {base for base, _, _ in repo.heads.values()}
    target = merge.writes if merge.writes is not None else merge.push_target
    if merge.writes == "":
        target = default
    if target is None or (merge.writes is not None and merge.undetermined):
        return _undetermined(merge, spec, active, "which branch it writes is not in the text")
    if "*" in target and merge.writes is None:
        return _pattern(merge, spec, target, active, default, bases, same, branches, files)
    frozen = [e for e in active if covers(e["branches"], target, default, bases)]
    if not frozen:
        return None
    if merge.writes is None:  # a git push
        if merge.undetermined:
            return _undetermined(merge, spec, frozen, merge.detail or "what it pushes is not in the text", target)
        if merge.gitdir and merge.tracking and same(merge.gitdir, merge.commits, merge.tracking + target):
            return None  # it sends what the branch already has: nothing new lands
        frozen = bound(merge, frozen, files, merge.commits)
        if not frozen:
            return None  # frozen by path only, and it changes none of them
    return _blocked(merge, spec, target, frozen)


def _pattern(merge: Merge, spec: Spec, target: str, active: list[dict[str, Any]], default: str | None,
             bases: set[str], same: Same, branches: Branches, files: Files | None) -> Judgement | None:
    """``git push --all`` and ``refs/heads/*:refs/heads/*``: each local branch the pattern sends, to its name."""
    from hook.pushes import stem

    names = branches(merge.gitdir) if merge.gitdir and not merge.undetermined else None
    if names is None:
        return _undetermined(merge, spec, active, merge.detail or "which branches it pushes cannot be listed")
    for branch in names:
        part = stem(target, branch)
        if part is None:
            continue
        frozen = [e for e in active if covers(e["branches"], branch, default, bases)]
        commits = tuple(c.replace("*", part, 1) for c in merge.commits[:1])
        if frozen and not (merge.tracking and same(merge.gitdir or "", commits, merge.tracking + branch)):
            frozen = bound(merge, frozen, files, commits)
            if frozen:
                return _blocked(merge.replace(push_target=branch, commits=commits), spec, branch, frozen)
    return None


def _blocked(merge: Merge, spec: Spec, branch: str, frozen: list[dict[str, Any]]) -> Judgement:
    name = merge.repo or ""
    how = "This push would write new commits onto it" if merge.writes is None else \
        f"This call ({merge.detail or merge.via}) would write a new commit onto it"
    lines = [f"merge-hold: `{branch}` of {name} is frozen. {how}.", *describe(frozen), KEEP_OFF]
    first = hold_line(_as_hold(frozen[0]))
    return Judgement(merge, "block", "frozen", f"writes onto frozen {branch} of {name}: {first}",
                     message="\n".join(lines))


def _undetermined(merge: Merge, spec: Spec, frozen: list[dict[str, Any]], why: str,
                  branch: str | None = None) -> Judgement:
    name = merge.repo or ""
    where = f"`{branch}` of {name}, which is frozen" if branch else f"a branch of {name}, which has frozen branches"
    reason = f"writes {where}; {why}"
    if spec.on_undetermined == "allow":
        return Judgement(merge, "allow", "undetermined", f"{reason}; on_undetermined is allow")
    lines = [f"merge-hold: this call writes {where}, and the guard cannot tell what ({why}). Blocked "
             f"(on_undetermined: {spec.on_undetermined}).", *describe(frozen), KEEP_OFF]
    return Judgement(merge, "block", "undetermined-frozen", f"{reason}; on_undetermined is {spec.on_undetermined}",
                     message="\n".join(lines))
