"""git: the local story of a command, for the push that may land a PR's commits on its base branch.

The story is followed: ``git checkout main && git merge --ff-only feature && git push`` makes ``main``
contain ``feature`` before the push sends it (``ctx.merged``: branch -> refs merged into it here).
The push itself is `hook.detect.push`; the guard then asks git whether what it writes contains a
held PR's head.
"""

from __future__ import annotations

from hook.detect.gitargs import positional as _positional
from hook.detect.model import Merge
from hook.detect.prefilter import GIT_BUILTINS as _BUILTINS
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_CONFIG_ENV = ("GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG")
_UPSTREAM_FLAGS = frozenset({"-u", "--set-upstream-to", "--track", "-t", "--set-upstream", "--unset-upstream"})
_GLOBAL_VALUE = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"})
_MERGE_VALUE = frozenset({"-m", "-F", "-s", "-X", "--message", "--file", "--strategy", "--strategy-option",
                          "--into-name", "--cleanup"})
# configuration keys whose value git runs as a command (or reads commands from)
_COMMAND_KEYS = ("pager", "editor", "command", "askpass", "fsmonitor", "helper", "external", "driver", "clean",
                 "smudge", "process", "program", "hookspath", "cmd", "difffilter", "receivepack", "uploadpack",
                 "textconv", "tool", ".path")
# variables whose value git runs as a command
_COMMAND_ENV = ("GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS",
                "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND")


def git(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    cwd = ctx.cwd
    aliases = dict(ctx.git_aliases)  # `git config alias.…` earlier in this command, then -c (last wins)
    settings: dict[str, str] = {}  # -c KEY=VALUE: what `git push` reads (push.default, remote.X.push)
    overrides: list[tuple[str, str]] = []  # the same as written, in order (a key given twice has two values)
    if any(ctx.getenv(name, overlay) is not None for name in ("GIT_DIR", "GIT_WORK_TREE")):
        cwd = None  # another repository than the directory's: not followed
    if any(ctx.getenv(name, overlay) is not None for name in _CONFIG_ENV):
        settings[""] = aliases[""] = DYN  # configuration from the environment (GIT_CONFIG_COUNT…): not read
        overrides.append(("", DYN))
    i = 1
    while i < len(args) and args[i][0].startswith("-"):
        a = args[i][0]
        if a.split("=", 1)[0] in ("--git-dir", "--work-tree"):
            cwd = None
        if a == "-C" and i + 1 < len(args):
            where = args[i + 1][0]
            known = DYN not in where and (cwd is not None or where.startswith("/"))
            cwd = ctx.path(where, cwd) if known else None
            i += 1
        elif a in ("-c", "--config-env") and i + 1 < len(args):
            key, eq, value = args[i + 1][0].partition("=")
            settings[key.lower() if DYN not in key else ""] = value if eq and a == "-c" else DYN
            overrides.append((key if DYN not in key else "", value if eq and a == "-c" else DYN))
            if key.lower().startswith("alias."):
                aliases[key[6:].lower()] = value if eq and a == "-c" else DYN
            elif key.lower() == "core.hookspath":  # the hooks this invocation runs (hook/detect/planted.py)
                ctx.hooks_paths.add(value if DYN in value or not eq else ctx.path(value, cwd))
            elif DYN in key:
                aliases[""] = DYN  # some key computed at run time: maybe an alias
            i += 1
        elif a in _GLOBAL_VALUE:
            i += 1
        i += 1
    if i >= len(args):
        return
    sub, rest = args[i][0], [a[0] for a in args[i + 1 :]]
    _commands_in_settings(ctx, settings, overlay)
    if DYN in sub:  # `git $(…) origin HEAD:main`: the subcommand is the run's
        remote = ctx.repo(cwd)
        ctx.add(Merge(via="git_ext", repo=remote[1] if remote else None, host=remote[0] if remote else None,
                      undetermined=True, detail="git subcommand computed at run time"))
        return
    if DYN not in sub and sub not in _BUILTINS:
        from hook.detect import gitconfig  # only for a name git does not know (start-up budget)

        configured = gitconfig.alias(sub, cwd, ctx.env, aliases) if "" not in aliases else gitconfig.UNKNOWN
        if configured is None and cwd is None and ctx.cwd is None:
            configured = gitconfig.UNKNOWN  # a directory the guard cannot follow: its repository may define it
        if configured is not None:
            _alias(ctx, args[:i], sub, configured, args[i + 1 :], cwd, cmd, overlay)
            return
    if sub in ("checkout", "switch"):
        _checkout(ctx, cwd, rest)
        if any(a.split("=", 1)[0] in _UPSTREAM_FLAGS for a in rest):
            ctx.push_config_changed = True
        if {"-b", "-B", "-c", "-C"} & set(rest):
            ctx.upstream_changed = True  # a branch started from origin/main tracks it
    elif sub == "merge":
        _record(ctx, cwd, _positional(rest, _MERGE_VALUE))
    elif sub == "pull":
        refspecs = _positional(rest, frozenset({"-s", "-X", "--depth", "-j", "--strategy"}))[1:]
        _record(ctx, cwd, [r.split(":", 1)[0] for r in refspecs])
    elif sub == "rebase":
        _rebase(ctx, cwd, rest)
    elif sub == "reset" and "--hard" in rest:
        _record(ctx, cwd, _positional(rest, frozenset()))
    elif sub == "config":
        from hook.detect import gitremote
        from hook.detect.gitconfig import config_command

        config_command(ctx.git_aliases, rest)
        gitremote.config(ctx, cwd, rest)
        _configured(ctx, cwd, rest)
        keys = [w.lower() for w in rest if not w.startswith("-")][:2]
        if not keys or any(DYN in w for w in rest) or {"-e", "--edit"} & set(rest) or any(
                k.startswith(("push.", "remote.", "branch.", "include", "url.")) or k == "edit" for k in keys):
            ctx.push_config_changed = True  # push.default, remote.X.push, branch.X.merge: a bare push is unknown
    elif sub == "push":
        from hook.detect.push import push

        push(ctx, cwd, rest, settings, overrides)
        if {"-u", "--set-upstream"} & set(rest):
            ctx.push_config_changed = True
    elif sub == "remote":
        from hook.detect import gitremote

        gitremote.remote(ctx, cwd, rest)
    elif sub == "branch" and any(a.split("=", 1)[0] in _UPSTREAM_FLAGS for a in rest):
        ctx.push_config_changed = True
    elif sub in ("bisect", "submodule", "filter-branch"):
        _runs(ctx, sub, args[i + 1 :], cmd, overlay)
    elif DYN not in sub and sub not in _BUILTINS:
        _external(ctx, cwd, sub, rest)


def _configured(ctx: Ctx, cwd: str | None, rest: list[str]) -> None:
    """``git config [scope] KEY VALUE`` of an alias, a command-valued setting or ``core.hooksPath``: set up now,
    run by a later git (hook/detect/planted.py)."""
    from hook.detect.gitremote import config_words

    _, words, flags = config_words(rest)
    if len(words) < 2 or flags & {"--unset", "--unset-all", "unset", "--get", "--get-all", "-l", "--list", "get",
                                  "list", "--rename-section", "--remove-section", "rename-section", "remove-section"}:
        return
    from hook.detect.planted import setting

    saved, ctx.cwd = ctx.cwd, cwd
    try:
        setting(ctx, words[0], words[1])
    finally:
        ctx.cwd = saved


def _commands_in_settings(ctx: Ctx, settings: dict[str, str], overlay: dict[str, str | None]) -> None:
    """``-c core.pager=CMD``, ``GIT_SSH_COMMAND=CMD`` …: git runs such values as commands; merge-shaped ones
    make the answer undetermined (hook/detect/opaque.py)."""
    values = [v for k, v in settings.items() if not k or k.endswith(_COMMAND_KEYS) or k.startswith("pager.")]
    values += [v for v in (ctx.getenv(n, overlay) for n in _COMMAND_ENV) if v]
    if values:
        from hook.detect.opaque import handed, undetermined

        words: list[Arg] = [(v, None) for v in values]
        reason = handed(ctx, words, None, files=False)
        if reason is not None:
            undetermined(ctx, "git", [], f"git runs a configured command, and {reason}", via="git_ext")


def _runs(ctx: Ctx, sub: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``git bisect run CMD…`` (at other checkouts), ``git submodule foreach CMD`` (in each submodule, another
    repository), ``git filter-branch --tree-filter CMD`` (in a scratch tree): read, and undetermined."""
    words = [a[0] for a in args]
    mark = ctx.mark()
    if sub == "bisect" and words[:1] == ["run"]:
        ctx.simple_command(list(args[1:]), cmd, overlay)
    elif sub == "submodule" and "foreach" in words:
        text = " ".join(w for w in words[words.index("foreach") + 1 :] if w not in ("--recursive", "-q", "--quiet"))
        saved, ctx.cwd = ctx.cwd, None  # each submodule is another repository
        ctx.run_text(text)
        ctx.cwd = saved
    elif sub == "filter-branch":
        for k, w in enumerate(words[:-1]):
            if w.endswith("-filter") and w.startswith("--"):
                ctx.run_text(words[k + 1])
    ctx.uncertain(mark, f"git {sub} runs it at another checkout or in another repository")


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


def _alias(ctx: Ctx, before: list[Arg], name: str, value: str, rest: list[Arg], cwd: str | None,
           cmd: Command, overlay: dict[str, str | None]) -> None:
    """Run a git alias as git does: ``!text`` through ``sh -c 'text "$@"'`` at the top of the working
    tree; anything else as git arguments in place of the alias name."""
    if DYN in value or ctx.depth >= 6:
        found = ctx.repo(cwd)
        ctx.add(Merge(via="git_ext", repo=found[1] if found else None, host=found[0] if found else None,
                      undetermined=True, detail=f"git {name}: an alias this reader cannot see"))
        return
    if value.startswith("!"):
        from hook.detect.gitconfig import worktree_top

        ctx.run(["("])
        ctx.cwd = worktree_top(cwd) if cwd else None
        ctx.set_positional([arg[0] for arg in rest])
        ctx.run_text(value[1:] + (' "$@"' if rest else ""), powershell=False)
        ctx.run([")"])
        return
    words = _split_cmdline(value)
    if words is None:
        ctx.add(Merge(via="git_ext", undetermined=True, detail=f"git {name}: an alias this reader cannot split"))
        return
    ctx.depth += 1
    try:
        ctx.simple_command([*before, *((w, None) for w in words), *rest], cmd, overlay)
    finally:
        ctx.depth -= 1


def _split_cmdline(value: str) -> list[str] | None:
    """git's split_cmdline: blanks separate, single and double quotes group, backslash escapes."""
    words: list[str] = []
    cur: list[str] = []
    quote, has, i = "", False, 0
    while i < len(value):
        c = value[i]
        if c == "\\" and quote != "'":
            if i + 1 >= len(value):
                return None
            cur.append(value[i + 1])
            has, i = True, i + 2
            continue
        if quote:
            if c == quote:
                quote = ""
            else:
                cur.append(c)
        elif c in "'\"":
            quote, has = c, True
        elif c in " \t\n":
            if has:
                words.append("".join(cur))
                cur, has = [], False
        else:
            cur.append(c)
            has = True
        i += 1
    if quote:
        return None
    if has:
        words.append("".join(cur))
    return words


def _external(ctx: Ctx, cwd: str | None, sub: str, rest: list[str]) -> None:
    """A third-party ``git-NAME``: an unknown program (hook/detect/opaque.py); a merge-sounding one may merge."""
    from hook.detect.shaped import merge_shaped, words

    if _mergeish(words(sub)) or any(merge_shaped(r) for r in rest):
        number = next((r.lstrip("#") for r in rest if r.lstrip("#").isdigit()), None)
        found = ctx.repo(cwd)
        ctx.add(Merge(via="git_ext", repo=found[1] if found else None, host=found[0] if found else None,
                      pr=int(number) if number else None, undetermined=True,
                      detail=f"git {sub}: a third-party command"))


def _mergeish(parts: list[str]) -> bool:
    """A subcommand's words say merge, land or ship (``git merge-pr``, ``git land``; not ``git merged-report``)."""
    from hook.detect.shaped import acts

    return acts(parts) or "land" in parts or "ship" in parts
