"""The gh CLI: ``gh pr merge`` in every selector form, gh aliases and extensions, ``gh api``.

Target resolution follows gh: a PR URL wins, then ``-R``/``--repo``, then ``GH_REPO``, then the git
remote of the working directory. A selector-less merge targets the current branch's PR.
"""

from __future__ import annotations

import os

from hook.detect import gitrepo
from hook.detect.model import Merge
from hook.detect.prefilter import GH_BUILTINS
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hook.detect.context import Ctx
    from hook.shell.interpreter import Arg
    from hook.shell.syntax import Command

_MERGE_VALUE_SHORT = "AbFtR"
_MERGE_VALUE_LONG = frozenset({"--author-email", "--body", "--body-file", "--subject", "--match-head-commit",
                               "--repo"})
_MAX_ALIAS_BYTES = 1 << 18


def gh(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    rest = args[1:]
    i = next((k for k, a in enumerate(rest) if not a[0].startswith("-") or DYN in a[0]), None)
    if i is None:
        return
    top = rest[i][0]
    if DYN in top:
        after = rest[i + 1 :]
        after = after[1:] if after and after[0][0] == "merge" else after  # gh $(…) merge 5
        _opaque(ctx, after, overlay, "gh_alias", "gh subcommand computed at run time")
    elif top == "pr":
        _pr(ctx, rest[i + 1 :], overlay)
    elif top == "api":
        from hook.detect.api import gh_api

        gh_api(ctx, rest[i + 1 :], cmd, overlay)
    elif top == "alias" and len(rest) > i + 3 and rest[i + 1][0] == "set":
        ctx.gh_aliases[rest[i + 2][0]] = rest[i + 3][0]
    elif top in ("extension", "extensions", "ext") and len(rest) > i + 2 and rest[i + 1][0] == "exec":
        _unknown(ctx, rest[i + 2][0], rest[i + 3 :], overlay, aliases=False)
    elif top not in GH_BUILTINS:
        _unknown(ctx, top, rest[i + 1 :], overlay, aliases=True)


def hub(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """hub: only ``hub api`` reaches GitHub's merge endpoints (``hub merge`` merges locally)."""
    if len(args) > 1 and args[1][0] == "api":
        from hook.detect.api import gh_api

        gh_api(ctx, args[2:], cmd, overlay)


def dynamic_command(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``$(GH) pr merge``, ``"$GH" api ...``: read it as gh when it looks like gh, undetermined."""
    if len(args) > 1 and args[1][0] in ("pr", "api", "merge"):
        before = len(ctx.merges)
        if args[1][0] == "merge":
            _unknown(ctx, "merge", args[2:], overlay, aliases=False)
        else:
            gh(ctx, [("gh", None), *args[1:]], cmd, overlay)
        ctx.merges[before:] = [_undetermined(m, "program name computed at run time") for m in ctx.merges[before:]]


def _pr(ctx: Ctx, rest: list[Arg], overlay: dict[str, str | None]) -> None:
    repo_flag: str | None = None
    i = 0
    while i < len(rest):
        a = rest[i][0]
        if a in ("-R", "--repo"):
            repo_flag = rest[i + 1][0] if i + 1 < len(rest) else None
            i += 2
            continue
        if a.startswith(("--repo=", "-R")):
            repo_flag = a.split("=", 1)[1] if a.startswith("--repo=") else a[2:]
        elif a in ("-h", "--help"):
            return
        elif not a.startswith("-") or DYN in a:
            break
        i += 1
    if i >= len(rest):
        return
    sub = rest[i][0]
    if DYN in sub:
        _opaque(ctx, rest[i + 1 :], overlay, "gh_pr_merge", "gh pr subcommand computed at run time")
    elif sub == "create":
        ctx.created_pr = True
    elif sub == "merge":
        pr_merge(ctx, rest[i + 1 :], overlay, repo_flag)


def pr_merge(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None], repo_flag: str | None,
             via: str = "gh_pr_merge", opaque: bool = False) -> None:
    positional: list[str] = []
    i = 0
    while i < len(args):
        a = args[i][0]
        nxt = args[i + 1][0] if i + 1 < len(args) else None
        if a == "--":
            positional.extend(x[0] for x in args[i + 1 :])
            break
        if not a.startswith("-") or a == "-" or a.startswith(DYN):
            positional.append(a)
        elif a.startswith("--"):
            name, eq, value = a.partition("=")
            if name in ("--help", "--disable-auto") and not opaque:
                return  # help, or turning auto-merge OFF: nothing merges
            if name == "--repo":
                repo_flag = value if eq else nxt
            if name in _MERGE_VALUE_LONG and not eq:
                i += 1
        else:
            for k, flag in enumerate(a[1:]):
                if flag == "h" and not opaque:
                    return
                if flag in _MERGE_VALUE_SHORT:
                    value = a[k + 2 :]
                    if not value:
                        value, i = nxt or "", i + 1
                    if flag == "R":
                        repo_flag = value
                    break
        i += 1
    ctx.add(_target(ctx, positional[0] if positional else None, overlay, repo_flag, via, opaque))


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
    if number.isdigit():
        return Merge(via=via, repo=repo, host=host, pr=int(number), undetermined=unknown or opaque, detail=why)
    owner, _, branch = selector.rpartition(":")
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
    if not digits or not segments[1] or not segments[2]:
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
        for n, word in enumerate(words, 1):
            ctx.vars[str(n)] = word
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
