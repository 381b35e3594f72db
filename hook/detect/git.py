"""git: the local story of a command, for the push that may land a PR's commits on its base branch.

The story is followed: ``git checkout main && git merge --ff-only feature && git push`` makes ``main``
contain ``feature`` before the push sends it (``ctx.merged``: branch -> refs merged into it here).
The push itself is `hook.detect.push`; the guard then asks git whether what it writes contains a
held PR's head.
"""

from __future__ import annotations

from hook.detect import gitrepo
from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.interpreter import Arg
    from hook.shell.syntax import Command

_GLOBAL_VALUE = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"})
_MERGE_VALUE = frozenset({"-m", "-F", "-s", "-X", "--message", "--file", "--strategy", "--strategy-option",
                          "--into-name", "--cleanup"})
_MERGEISH = ("merge", "land", "ship")
# git's own commands: any other name is an alias or a third-party git-NAME program
_BUILTINS = frozenset({
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
    "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index",
    "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree",
    "config", "count-objects", "credential", "describe", "diff", "diff-files", "diff-index", "diff-tree",
    "difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch", "fmt-merge-msg",
    "for-each-ref", "format-patch", "fsck", "gc", "get-tar-commit-id", "grep", "gui", "hash-object",
    "help", "init", "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree",
    "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
    "merge-one-file", "merge-tree", "mergetool", "mktag", "mktree", "mv", "notes", "pack-objects",
    "pack-refs", "prune", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "remote",
    "repack", "replace", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert",
    "rm", "send-email", "shortlog", "show", "show-branch", "show-ref", "sparse-checkout", "stash",
    "status", "submodule", "switch", "symbolic-ref", "tag", "update-index", "update-ref", "var",
    "verify-commit", "verify-pack", "verify-tag", "whatchanged", "worktree", "write-tree", "lfs",
})


def git(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    cwd = ctx.cwd
    i = 1
    while i < len(args) and args[i][0].startswith("-"):
        a = args[i][0]
        if a == "-C" and i + 1 < len(args):
            where = args[i + 1][0]
            known = DYN not in where and (cwd is not None or where.startswith("/"))
            cwd = ctx.path(where, cwd) if known else None
            i += 1
        elif a in _GLOBAL_VALUE:
            i += 1
        i += 1
    if i >= len(args):
        return
    sub, rest = args[i][0], [a[0] for a in args[i + 1 :]]
    if sub in ("checkout", "switch"):
        _checkout(ctx, cwd, rest)
    elif sub == "merge":
        _record(ctx, cwd, _positional(rest, _MERGE_VALUE))
    elif sub == "pull":
        refspecs = _positional(rest, frozenset({"-s", "-X", "--depth", "-j", "--strategy"}))[1:]
        _record(ctx, cwd, [r.split(":", 1)[0] for r in refspecs])
    elif sub == "rebase":
        _rebase(ctx, cwd, rest)
    elif sub == "reset" and "--hard" in rest:
        _record(ctx, cwd, _positional(rest, frozenset()))
    elif sub == "push":
        from hook.detect.push import push

        push(ctx, cwd, rest)
    elif DYN not in sub and sub not in _BUILTINS:
        _external(ctx, cwd, sub, rest)


def _positional(rest: list[str], valued: frozenset[str]) -> list[str]:
    out, i = [], 0
    while i < len(rest):
        a = rest[i]
        if a == "--":
            out.extend(rest[i + 1 :])
            break
        if a.startswith("-") and DYN not in a[:1]:
            i += 2 if a in valued else 1
            continue
        out.append(a)
        i += 1
    return out


def _short(ref: str) -> str:
    """``refs/heads/x`` / ``origin/x`` / ``refs/remotes/origin/x`` -> ``x``."""
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            ref = ref[len(prefix) :]
            return ref.split("/", 1)[1] if prefix == "refs/remotes/" and "/" in ref else ref
    for remote in ("origin/", "upstream/", "github/"):
        if ref.startswith(remote):
            return ref[len(remote) :]
    return ref


def _checkout(ctx: Ctx, cwd: str | None, rest: list[str]) -> None:
    new, target, i = None, None, 0
    while i < len(rest):
        a = rest[i]
        if a == "--":
            break
        if a in ("-b", "-B", "-c", "-C", "--orphan") and i + 1 < len(rest):
            new, i = rest[i + 1], i + 2
            continue
        if a == "--detach":
            new = ""
        elif not a.startswith("-") and target is None:
            target = a
        i += 1
    if new is not None:
        start = target or ctx.branch(cwd) or "HEAD"  # the new branch starts as `target`, else as HEAD
        ctx.branches[cwd] = new or None
        if new:
            ctx.merged.setdefault(new, []).extend([start, *ctx.merged.get(_short(start), [])])
    elif target == "-":
        ctx.branches[cwd] = None  # the previous branch: unknown here
    elif target is not None and not target.startswith((".", "/")):
        ctx.branches[cwd] = target


def _record(ctx: Ctx, cwd: str | None, refs: list[str]) -> None:
    """``refs`` were merged into the branch checked out in ``cwd`` (kept as written, for
    `hook.detect.push` to hand to ``git merge-base``), with what was merged into them here."""
    current = ctx.branch(cwd) or ""
    into = ctx.merged.setdefault(current, [])
    for ref in refs:
        if ref and _short(ref) != current and ref not in into:
            into.append(ref)
            into.extend(b for b in ctx.merged.get(_short(ref), []) if b not in into and _short(b) != current)


def _rebase(ctx: Ctx, cwd: str | None, rest: list[str]) -> None:
    for k, a in enumerate(rest):
        if a in ("-x", "--exec") and k + 1 < len(rest):  # rebase runs these shell commands
            ctx.run_text(rest[k + 1])
    if any(a in ("--continue", "--abort", "--skip", "--quit") for a in rest):
        return
    positional = _positional(rest, frozenset({"-x", "--exec", "-s", "-X", "--strategy", "--onto"}))
    if len(positional) > 1:
        ctx.branches[cwd] = positional[1]
    _record(ctx, cwd, positional[:1])


def _external(ctx: Ctx, cwd: str | None, sub: str, rest: list[str]) -> None:
    """A git alias (expanded) or a third-party ``git-NAME``: a merge-sounding one may merge."""
    config = gitrepo.read_config(cwd) or {}
    alias = config.get(("alias", "", sub.lower()))
    if alias:
        ctx.run_text(alias[1:] if alias.startswith("!") else "git " + alias + " " + " ".join(rest))
        return
    if any(word in sub.lower() for word in _MERGEISH):
        number = next((r.lstrip("#") for r in rest if r.lstrip("#").isdigit()), None)
        found = ctx.repo(cwd)
        ctx.add(Merge(via="git_ext", repo=found[1] if found else None, host=found[0] if found else None,
                      pr=int(number) if number else None, undetermined=True,
                      detail=f"git {sub}: a third-party command"))
