"""The gh CLI: ``gh pr merge`` in every selector form, gh aliases and extensions, ``gh api``.

Target resolution follows gh: a PR URL wins, then ``-R``/``--repo``, then ``GH_REPO``, then the git
remote of the working directory. A selector-less merge targets the current branch's PR.
"""

from __future__ import annotations

import os

from hook.detect import gitrepo
from hook.detect.model import Merge
from hook.detect.pflag import FlagSet, exact, parse
from hook.detect.prefilter import GH_BUILTINS
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

# gh pr merge's flags (gh 2.x) plus the persistent ``--repo`` of ``gh pr`` and cobra's ``--help``;
# any other flag makes the reading undetermined (gh would refuse it, or a newer gh means something)
_MERGE_FLAGS = FlagSet(
    bools=frozenset({"admin", "auto", "delete-branch", "disable-auto", "merge", "rebase", "squash", "help"}),
    values=frozenset({"body", "body-file", "subject", "match-head-commit", "author-email", "repo"}),
    shorts={"d": "delete-branch", "m": "merge", "r": "rebase", "s": "squash", "h": "help", "b": "body",
            "F": "body-file", "t": "subject", "A": "author-email", "R": "repo"},
)
# flags that may stand before a subcommand (`gh -R o/r pr merge 5`): cobra finds the command path by
# skipping them (a flag without "=" takes the next argument) and the leaf command then parses them
_BEFORE_COMMAND = FlagSet(bools=frozenset({"help"}), values=frozenset({"repo"}), shorts={"h": "help", "R": "repo"})
_MAX_ALIAS_BYTES = 1 << 18
_DIGITS = frozenset("0123456789")


def gh(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    rest = args[1:]
    i, problem = _skip_flags(rest)
    if i >= len(rest):
        return
    top = rest[i][0]
    if DYN in top:
        after = rest[i + 1 :]
        after = after[1:] if after and after[0][0] == "merge" else after  # gh $(…) merge 5
        _opaque(ctx, after, overlay, "gh_alias", "gh subcommand computed at run time")
    elif top in ("pr", "issue"):
        _pr(ctx, rest[:i], rest[i + 1 :], overlay, problem, cmd, issue=top == "issue")
    elif top in ("label", "repo"):  # the hold label, the repository's settings, a fork's sync (ghadmin.py)
        from hook.detect import ghadmin

        admin = ghadmin.label if top == "label" else ghadmin.repo
        admin(ctx, [*rest[:i], *rest[i + 1 :]], overlay, problem)
    elif i > 0 and top != "alias" and top in GH_BUILTINS:
        # a flag before another gh command: only `pr` is modelled with one (api has no --repo)
        before = len(ctx.merges)
        gh(ctx, [args[0], *rest[i:]], cmd, overlay)
        ctx.merges[before:] = [_undetermined(m, "a flag before the gh command") for m in ctx.merges[before:]]
    elif top == "api":
        from hook.detect.api import gh_api

        gh_api(ctx, rest[i + 1 :], cmd, overlay)
    elif top == "alias" and len(rest) > i + 3 and rest[i + 1][0] == "set":
        ctx.gh_aliases[rest[i + 2][0]] = rest[i + 3][0]
        _alias_set(ctx, rest[i + 2 :])
    elif top in ("codespace", "cs") and len(rest) > i + 1 and rest[i + 1][0] in ("ssh", "exec"):
        from hook.detect.opaque import handed, undetermined  # runs a command in a codespace: elsewhere

        remote: list[Arg] = list(rest[i + 2 :])
        reason = handed(ctx, remote, cmd, files=False)
        if reason is not None:
            dashes = next((k for k, a in enumerate(remote) if a[0] == "--"), len(remote))
            undetermined(ctx, "gh", remote[dashes + 1 :], f"gh codespace ssh: {reason}", via="gh_alias", cmd=cmd)
    elif top in ("extension", "extensions", "ext") and len(rest) > i + 2 and rest[i + 1][0] == "exec":
        _unknown(ctx, rest[i + 2][0], rest[i + 3 :], overlay, aliases=False)
    elif top not in GH_BUILTINS:
        if i > 0:  # gh expands aliases only in first position: a flag first makes it cobra's error
            return
        _unknown(ctx, top, rest[i + 1 :], overlay, aliases=True)


def _skip_flags(args: list[Arg]) -> tuple[int, str | None]:
    """Where cobra finds the next command name: flags without ``=`` take the next argument along."""
    i, problem = 0, None
    while i < len(args):
        text = args[i][0]
        if not exact(args[i]) or text.startswith(DYN):
            return i, "an argument computed at run time"
        if not text.startswith("-") or text == "-" or text == "--":
            return i, problem
        name = text.lstrip("-").partition("=")[0]
        known = (name in _BEFORE_COMMAND.values or name in _BEFORE_COMMAND.shorts) if text.startswith("--") \
            else text[1:2] in _BEFORE_COMMAND.shorts
        if not known:
            problem = problem or f"{text}: a flag before the gh command"
        takes_next = "=" not in text and (len(text) == 2 or text.startswith("--")) \
            and name not in ("help", "h")
        i += 2 if takes_next else 1
    return i, problem


def hub(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """hub: only ``hub api`` reaches GitHub's merge endpoints (``hub merge`` merges locally); every other
    command but hub's own is git's (hub wraps git), so ``hub push origin main`` is judged as git's push."""
    if len(args) > 1 and args[1][0] == "api":
        from hook.detect.api import gh_api

        gh_api(ctx, args[2:], cmd, overlay)
    elif len(args) > 1 and args[1][0] not in _HUB_OWN:
        from hook.detect.git import git

        git(ctx, [("git", args[0][1]), *args[1:]], cmd, overlay)


_HUB_OWN = frozenset({"merge", "alias", "browse", "ci-status", "compare", "create", "delete", "fork", "gist",
                      "help", "issue", "pr", "pull-request", "release", "sync", "version", "--version", "--help"})
"""hub's commands of its own (hub(1)); ``hub merge`` merges a PR's commits locally, a push then lands them."""


def dynamic_command(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``$(GH) pr merge``, ``"$GH" api ...``: read it as gh when it looks like gh, undetermined; any
    other program named only at run time (``$CMD``, ``$(cat f)``) may be anything: undetermined."""
    ctx.runtime("a command name produced at run time")
    if len(args) > 1 and args[1][0] in ("pr", "api", "merge"):
        before = len(ctx.merges)
        if args[1][0] == "merge":
            _unknown(ctx, "merge", args[2:], overlay, aliases=False)
        else:
            gh(ctx, [("gh", None), *args[1:]], cmd, overlay)
        ctx.merges[before:] = [_undetermined(m, "program name computed at run time") for m in ctx.merges[before:]]


def _pr(ctx: Ctx, before: list[Arg], rest: list[Arg], overlay: dict[str, str | None], problem: str | None,
        cmd: Command, *, issue: bool = False) -> None:
    i, between = _skip_flags(rest)
    if i >= len(rest):
        return
    sub = rest[i][0]
    if sub in ("edit", "comment", "review") and not (issue and sub == "review"):
        from hook.detect.lift import gh_edit_or_comment  # lifting a hold is judged like a merge

        noun = "issue" if issue else "pr"
        gh_edit_or_comment(ctx, sub, [*before, *rest[:i], *rest[i + 1 :]], cmd, overlay, None, _target,
                           via=f"gh_{noun}_{sub}")
    elif issue:
        return
    elif DYN in sub:
        _opaque(ctx, rest[i + 1 :], overlay, "gh_pr_merge", "gh pr subcommand computed at run time")
    elif sub == "create":
        ctx.created_pr = True
    elif sub == "merge":
        pr_merge(ctx, [*before, *rest[:i], *rest[i + 1 :]], overlay, None, problem=problem or between)


def pr_merge(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None], repo_flag: str | None,
             via: str = "gh_pr_merge", opaque: bool = False, problem: str | None = None) -> None:
    """``gh pr merge ARGS``, read as pflag reads them. Help and ``--disable-auto`` merge nothing; any
    reading that is not exact is a merge of an undetermined target."""
    parsed = parse(args, _MERGE_FLAGS)
    flags = parsed.flags
    if parsed.problem is None and not opaque and (flags.get("help") == "true" or flags.get("disable-auto") == "true"):
        return  # help, or turning auto-merge OFF: nothing merges
    repo_flag = flags.get("repo", repo_flag)
    why = problem or parsed.problem
    if not parsed.sure("repo"):  # an argument computed at run time may be `-R other/repo`
        ctx.add(Merge(via=via, undetermined=True, detail=why or ""))
        return
    if why is None and len(parsed.positional) > 1:
        why = "more than one selector (gh refuses)"
    selector = parsed.positional[0] if parsed.positional else None
    merge = _target(ctx, selector, overlay, repo_flag, via, opaque)
    ctx.add(merge if why is None else _undetermined(merge, why))


def _target(ctx: Ctx, selector: str | None, overlay: Mapping[str, str | None], repo_flag: str | None,
            via: str, opaque: bool) -> Merge:
    host, repo, unknown = ctx.gh_repo(overlay, repo_flag)
    why = "alias or extension: its effect is not in the text" if opaque else ""
    if selector is None:
        branch = ctx.branch()
        if branch is None or DYN in branch:
            return Merge(via=via, repo=repo, host=host, undetermined=True, detail="no current branch")
        fresh = ctx.created_pr and not opaque
        why = why or ("the current branch's PR is created by this same command" if fresh else "")
        return Merge(via=via, repo=repo, host=host, branch=branch, undetermined=unknown or fresh or opaque,
                     detail=why)
    if DYN in selector:
        return Merge(via=via, repo=repo, host=host, undetermined=True, detail="selector computed at run time")
    url = parse_pr_url(selector)
    if url is not None:
        return Merge(via=via, host=url[0], repo=url[1], pr=url[2], undetermined=opaque, detail=why)
    number = selector[1:] if selector.startswith("#") else selector
    if number and len(number) <= 9 and all(c in _DIGITS for c in number):
        return Merge(via=via, repo=repo, host=host, pr=int(number), undetermined=unknown or opaque, detail=why)
    owner, _, branch = selector.rpartition(":")
    if not gitrepo.plausible_branch(branch) or (owner and not gitrepo.plausible_owner(owner)):
        return Merge(via=via, repo=repo, host=host, undetermined=True,
                     detail=f"not a PR selector gh reads: {selector!r}")
    return Merge(via=via, repo=repo, host=host, branch=branch, undetermined=unknown or opaque,
                 detail=why or (f"head owner {owner}" if owner else ""))


def parse_pr_url(text: str) -> tuple[str | None, str, int] | None:
    """``https://HOST/OWNER/REPO/pull/N[/...]`` -> ``(host, owner/repo, N)`` (gh's prefix match)."""
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return None
    segments = rest.split("?")[0].split("#")[0].split("/")
    if len(segments) < 5 or segments[3] != "pull":
        return None
    digits = ""
    for c in segments[4]:
        if not c.isdigit():
            break
        digits += c
    if not digits or len(digits) > 9 or not gitrepo.plausible_repo(f"{segments[1]}/{segments[2]}"):
        return None
    return gitrepo.normalize_host(segments[0].lower()), f"{segments[1]}/{segments[2]}", int(digits)


def _unknown(ctx: Ctx, name: str, rest: list[Arg], overlay: dict[str, str | None], *, aliases: bool) -> None:
    """A gh alias or extension. A known alias is expanded; anything else may merge, unseen."""
    if any(a[0] in ("--help", "-h") for a in rest):
        return
    expansion = ctx.gh_aliases.get(name) or (gh_config_alias(ctx.env, name) if aliases else None)
    if expansion is None:
        _opaque(ctx, rest, overlay, "gh_alias", f"gh {name}: an alias or extension")
        return
    words = [a[0] for a in rest]
    if expansion.startswith("!"):  # a shell alias: sh -c EXPANSION with the arguments as $1...
        ctx.run(["("])
        ctx.set_positional(words)
        ctx.run_text(expansion[1:], powershell=False)
        ctx.run([")"])
        return
    used = set()
    for n, word in enumerate(words, 1):
        if f"${n}" in expansion:
            expansion = expansion.replace(f"${n}", _quote(word))
            used.add(n)
    extra = " ".join(_quote(w) for n, w in enumerate(words, 1) if n not in used)
    ctx.run_text(f"gh {expansion} {extra}", powershell=False)


def _alias_set(ctx: Ctx, rest: list[Arg]) -> None:
    """``gh alias set NAME EXPANSION [--shell]``: a command set up for a later ``gh NAME`` (hook/detect/planted.py)
    — judged now, undetermined."""
    name, expansion = rest[0][0], rest[1][0]
    shell = expansion.startswith("!") or any(a[0] in ("-s", "--shell") for a in rest[2:])
    mark = ctx.mark()
    ctx.run(["("])
    if DYN in expansion:
        ctx.runtime(f"gh alias {name}: an expansion only the run knows")
    else:
        ctx.run_text(expansion.removeprefix("!") if shell else f"gh {expansion}", powershell=False)
    ctx.run([")"])
    ctx.uncertain(mark, f"gh alias {name}: set up now, run by a later gh {name}")


def _opaque(ctx: Ctx, rest: list[Arg], overlay: dict[str, str | None], via: str, why: str) -> None:
    """Read the arguments like ``gh pr merge``'s (a number, URL or branch) but flag it undetermined."""
    before = len(ctx.merges)
    pr_merge(ctx, rest, overlay, None, via=via, opaque=True)
    ctx.merges[before:] = [_undetermined(m, why) for m in ctx.merges[before:]]


def gh_config_alias(env: Mapping[str, str], name: str) -> str | None:
    """The expansion of alias ``name`` in gh's config.yml (``aliases:`` block), if any."""
    base = env.get("GH_CONFIG_DIR") or (
        os.path.join(env["XDG_CONFIG_HOME"], "gh") if env.get("XDG_CONFIG_HOME")
        else os.path.join(env.get("HOME") or "~", ".config", "gh"))
    try:
        with open(os.path.join(base, "config.yml"), encoding="utf-8") as handle:
            text = handle.read(_MAX_ALIAS_BYTES)
    except OSError:
        return None
    inside = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            inside = line.rstrip() == "aliases:"
            continue
        key, sep, value = line.strip().partition(":")
        if inside and sep and _unquote(key.strip()) == name:
            return _unquote(value.strip())
    return None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _quote(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./:#=@%+," or c == DYN for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _undetermined(merge: Merge, why: str) -> Merge:
    return merge.replace(undetermined=True, detail=merge.detail or why)
