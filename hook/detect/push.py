"""``git push``: which branches it writes, and which commits it writes there (design §6).

A push lands a held PR when its target is that PR's base branch and the pushed commit contains the
PR's head (GitHub then marks the PR merged). The text cannot tell containment, so each write comes out
as one `Merge` with ``push_target`` (the branch written) and ``commits`` (commit-ish expressions for
the guard to test with ``git merge-base --is-ancestor`` in ``gitdir`` once it knows the held heads):
the pushed source, then whatever this same command merged into it first (``git checkout main && git
merge feature && git push`` sends ``main`` *and* ``feature``). Every refspec form: ``src:dst``, ``+src``,
``HEAD:refs/heads/main``, a bare branch (its own name), no refspec (``push.default``), ``--all``,
``--branches`` and ``--mirror`` (every local branch to its own name: ``push_target`` ``*``), globs
(``refs/heads/*:refs/heads/*``), from another directory or a worktree (``git -C``). Deletions, tags,
``refs/for/…`` and dry runs write no branch. A source or target computed at run time is undetermined.
"""

from __future__ import annotations

from hook.detect import gitrepo
from hook.detect.gitargs import positional
from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx

_PUSH_VALUE = frozenset({"-o", "--push-option", "--receive-pack", "--exec", "--repo"})
_EVERY_BRANCH = frozenset({"--all", "--branches", "--mirror"})
HEADS = "refs/heads/"
_UNKNOWN_TARGET: list[tuple[str | None, str | None]] = [(None, None)]


def push(ctx: Ctx, cwd: str | None, rest: list[str], settings: dict[str, str] | None = None,
         overrides: list[tuple[str, str]] | None = None) -> None:
    """``overrides``: the ``-c KEY=VALUE`` of this invocation as written, in order (``settings``: the last value of
    each, keys lower case)."""
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("-") and DYN not in a[:1]}
    if flags & {"-n", "--dry-run", "-d", "--delete"}:
        return
    from hook.detect import remotes

    words = positional(rest, _PUSH_VALUE)
    config = gitrepo.read_config(cwd) or {}
    found = remotes.entries(ctx, cwd, overrides)
    current = ctx.branch(cwd)
    repo_flag = next((a.split("=", 1)[1] for a in rest if a.startswith("--repo=")), None)
    remote = words[0] if words else repo_flag or _default_remote(found, current)
    refspecs = words[1:]
    mirrored = found is not None and remotes.setting(found, "remote", remote, "mirror") == "true"
    if flags & _EVERY_BRANCH or (mirrored and not refspecs):
        # each local branch as it is now, and as this command left the ones it merged into
        refspecs = [*refspecs, "refs/heads/*:refs/heads/*", *(f"{b}:{b}" for b in ctx.merged if b)]
    elif not refspecs:
        if current is None:
            return  # git refuses: "You are not currently on a branch"
        mode, why = _bare_push(ctx, cwd, remote, settings or {})
        if mode == "nothing":
            return
        upstream = config.get(("branch", current, "merge"), "")
        if mode in ("upstream", "tracking") and ctx.upstream_changed:
            why = why or "a branch created here may track another branch"
        if why or DYN in current:
            for host, repo in _targets(ctx, cwd, remote, overrides) or _UNKNOWN_TARGET:
                ctx.add(Merge(via="git_push", repo=repo, host=host, gitdir=cwd, undetermined=True,
                              detail=why or "pushes a branch not known here"))
            return
        dest = _short(upstream) if mode in ("upstream", "tracking") and upstream else current
        refspecs = [f"{current}:{dest}"]
    targets = _targets(ctx, cwd, remote, overrides)
    if targets == []:
        return  # a remote that is no GitHub repository (a path, another host, a name git does not know)
    # where the clone keeps what the remote's branches were: the push writes nothing new onto a branch when
    # what it sends is that (a URL remote has no such refs; an earlier command may have made new commits, and
    # a remote or rewrite given to this invocation may point the push elsewhere than those refs came from)
    named = DYN not in remote and not any(c in remote for c in ":/\\")
    tracking = f"refs/remotes/{remote}/" if named and not ctx.refs_may_move and not overrides else None
    for host, repo in targets or _UNKNOWN_TARGET:
        for spec in refspecs:
            merge = _write(ctx, cwd, spec[1:] if spec.startswith("+") else spec, current)
            if merge is not None:
                unknown = merge.undetermined or repo is None or cwd is None
                why = "" if cwd else "the directory pushed from is unknown"
                if targets is None:
                    why = "the remote's URL is not known here (a remote or a rewrite this command may change)"
                ctx.add(merge.replace(repo=repo, host=host, gitdir=cwd, undetermined=unknown, tracking=tracking,
                                      detail=merge.detail or why))


def _bare_push(ctx: Ctx, cwd: str | None, remote: str, settings: dict[str, str]) -> tuple[str, str]:
    """``(push.default, why unknown)`` for a push without a refspec, from ``-c`` and git's files."""
    from hook.detect import gitconfig  # only for a bare `git push` (start-up budget)

    if ctx.push_config_changed or "" in settings:
        return "", "the push configuration changed earlier in this command"
    if f"remote.{remote.lower()}.push" in settings or DYN in remote or gitconfig.value(
            f'remote "{remote.lower()}"', "push", cwd, ctx.env) is not None:
        return "", "remote.<name>.push names what a bare push writes"
    mode = settings.get("push.default") or gitconfig.value("push", "default", cwd, ctx.env) or "simple"
    if DYN in mode or mode.lower() not in ("simple", "current", "upstream", "tracking", "nothing"):
        return "", f"push.default {mode!r} is not followed"  # matching: every branch of the same name
    return mode.lower(), ""


def _short(ref: str) -> str:
    """``refs/heads/x`` -> ``x``; ``refs/remotes/origin/x`` -> ``x``."""
    if ref.startswith(HEADS):
        return ref[len(HEADS) :]
    if ref.startswith("refs/remotes/"):
        return ref[len("refs/remotes/") :].partition("/")[2]
    return ref


def _branch(ref: str) -> str:
    """``origin/x`` and ``refs/remotes/origin/x`` -> ``x``: the branch a ref names, for display."""
    ref = _short(ref)
    for remote in ("origin/", "upstream/", "github/"):
        if ref.startswith(remote):
            return ref[len(remote) :]
    return ref


def _write(ctx: Ctx, cwd: str | None, spec: str, current: str | None) -> Merge | None:
    """The one branch write a refspec makes (None: it writes no branch)."""
    src, colon, dst = spec.partition(":")
    if colon and not src:
        return None  # ":branch" deletes it
    head = src in ("HEAD", "@")
    if not colon:
        if head:
            if current is None:
                return None  # a detached HEAD: git refuses a push without a destination
            if DYN in current:
                return Merge(via="git_push", undetermined=True, detail="pushes HEAD to a branch not known here")
            dst = current
        elif src.startswith("refs/") and not src.startswith(HEADS):
            return None  # a tag pushed to its own name
        else:
            dst = src
    if dst.startswith("refs/") and not dst.startswith(HEADS):
        return None  # tags, refs/for/..., notes
    dest = _short(dst)
    if DYN in dest:
        return Merge(via="git_push", undetermined=True, detail="destination branch computed at run time")
    if "*" in dest:
        if "*" not in src or DYN in src:
            return Merge(via="git_push", push_target=dest, undetermined=True, detail="a refspec pattern git refuses")
        return Merge(via="git_push", push_target=dest, commits=(src if src.startswith("refs/") else HEADS + src,),
                     detail="every matching local branch, each to its own name")
    if DYN in src:
        return Merge(via="git_push", push_target=dest, undetermined=True,
                     detail="pushes a commit the text does not name")
    if head:
        # HEAD as it will be: a branch this command checked out, else HEAD as it is now.
        moved = cwd in ctx.branches
        if moved and (current is None or DYN in current):
            return Merge(via="git_push", push_target=dest, undetermined=True,
                         detail="pushes HEAD after a checkout the text does not name")
        source = current if moved else "HEAD"
        name = current
    else:
        source, name = src, _short(src)
    story = ctx.merged.get(name or "", []) if name else []
    if any(DYN in ref for ref in story):
        return Merge(via="git_push", push_target=dest, undetermined=True,
                     detail="merges a branch computed at run time before pushing")
    commits = tuple(dict.fromkeys([source or "HEAD", *story]))
    # the branch whose PR visibly lands (for `hook explain`): the source, or a branch merged in here that
    # is not the default branch (bringing main into a topic branch lands nothing)
    defaults = {gitrepo.default_branch(cwd) or "main", "main", "master"}
    landed = name if name and name != dest else next(
        (_branch(r) for r in story if _branch(r) not in defaults and _branch(r) != dest), None)
    return Merge(via="git_push", branch=landed, push_target=dest, commits=commits)


def _default_remote(found: list[tuple[str, str, str, str]] | None, current: str | None) -> str:
    """``branch.NAME.pushRemote``, ``remote.pushDefault``, ``branch.NAME.remote``, else ``origin``."""
    if found is None:
        return DYN
    from hook.detect.remotes import setting

    for section, subsection, key in (("branch", current or "", "pushremote"), ("remote", "", "pushdefault"),
                                     ("branch", current or "", "remote")):
        value = setting(found, section, subsection, key)
        if value:
            return value
    return "origin"


def _targets(ctx: Ctx, cwd: str | None, remote: str, overrides: list[tuple[str, str]] | None,
             ) -> list[tuple[str | None, str | None]] | None:
    """The GitHub repositories a push to ``remote`` writes (a remote's name, a URL or a path), as git resolves
    its URLs (`hook.detect.remotes`): [] when none is GitHub's (a path, another host); None when unknown."""
    if DYN in remote or (cwd is None and "://" not in remote and ":" not in remote and not remote.startswith("/")):
        return None
    from hook.detect.remotes import push_urls

    urls = push_urls(ctx, cwd, remote, overrides)
    if urls is None:
        return None
    out: list[tuple[str | None, str | None]] = []
    for configured, rewritten in urls:
        if DYN in configured + rewritten:
            return None
        # the rewritten URL when it is GitHub's; else the URL as configured when that is (a rewrite to another
        # host may be a proxy or a mirror of GitHub's: judged as a push there)
        for url in (rewritten, configured):
            parsed = gitrepo.parse_remote_url(url)
            if parsed is not None and (parsed[0] is None or _git_host(ctx, parsed[0])):
                out.append(parsed)
                break
    return out


def _git_host(ctx: Ctx, host: str) -> bool:
    from hook.detect.hosts import is_git_host  # a host other than github.com only (start-up budget, design §7)

    return is_git_host(ctx, host)
