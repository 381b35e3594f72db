"""Where git sends a push, and which repository gh picks, as git and gh resolve remotes (design §6, issue 26
item 5): from git's files in git's order (system, global, the repository's ``config`` and ``config.worktree``,
``include.path`` followed), then what this same command changed — ``git remote add``, ``set-url [--push]
[--add]``, ``rename``, ``remove``, ``git config [--global] remote.NAME.url …`` or ``url.BASE.insteadOf …``, a
config file it wrote — then ``git -c KEY=VALUE`` for that one invocation.

A push goes to every ``remote.NAME.pushurl`` (``url.BASE.insteadOf`` rewriting each), else to every
``remote.NAME.url`` (``pushInsteadOf`` first, then ``insteadOf``; the longest matching prefix wins); a name that
is no remote is itself the URL. What cannot be followed exactly — a value only the run knows, an ``includeIf``
file that sets remotes, an edit in a region that may not run, a config file the command wrote with text the
reader does not know — makes the target unknown (None), never a guess.
"""

from __future__ import annotations

from hook.detect.gitrepo import (
    MAX_INCLUDES,
    config_files,
    config_lines,
    config_value,
    git_dirs,
    include_path,
    read_file,
    split_header,
)
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    Entry = tuple[str, str, str, str]  # (section, subsection, key, value): section and key lower case

    class Ctx(Protocol):
        """What this module reads of the detection context (hook/detect/context.py, which calls it back)."""

        env: Mapping[str, str]
        cwd: str | None
        files: dict[str, str]
        config_edits: list[tuple[str, str, str, str, str, str]]
        github_hosts: frozenset[str] | None

GLOBAL = "global"
UNKNOWN = "?"
_WATCHED = ("remote", "url", "branch")


def edit(ctx: Ctx, where: str | None, action: str, section: str, subsection: str, key: str, value: str) -> None:
    """Record a configuration change this command makes (``where``: a repository's common git directory,
    `GLOBAL`, or None when the reader cannot say which repository): ``set`` (replace every value), ``add``,
    ``first`` (replace the first value), ``unset``, ``rename`` (a remote's section to ``value``), ``remove``."""
    ctx.config_edits.append((where or UNKNOWN, action, section.lower(), subsection, key.lower(), value))


def where_of(cwd: str | None) -> str | None:
    dirs = git_dirs(cwd)
    return dirs[1] if dirs else None


def entries(ctx: Ctx, cwd: str | None, settings: list[tuple[str, str]] | None = None) -> list[Entry] | None:
    """Every ``remote.*``, ``url.*`` and ``branch.*`` entry git would read in ``cwd``, in order, ``settings`` (the
    invocation's ``-c KEY=VALUE``) last (None: unknown)."""
    found: list[Entry] = []
    for path in config_files(cwd, ctx.env):
        if path in ctx.files:  # written by this command
            text = ctx.files[path]
            if DYN in text:
                return None
            parsed = _parse_text(text, path, ctx.env, 0)
        else:
            parsed = _parse(path, ctx.env, 0)
        if parsed is None:
            return None
        found += parsed
    here = where_of(cwd)
    for where, action, section, subsection, key, value in ctx.config_edits:
        if where == UNKNOWN or (where != GLOBAL and here is None):
            return None
        if where not in (GLOBAL, here):
            continue
        if DYN in subsection + key + value:
            return None
        found = _apply(found, action, section, subsection, key, value)
    for name, value in settings or []:
        if not name or DYN in name + value:
            if not name or name.startswith(_WATCHED):
                return None
            continue
        section, _, rest = name.partition(".")
        subsection, _, key = rest.rpartition(".")
        if section in _WATCHED:
            found.append((section, subsection, key.lower(), value))
    return found


def push_urls(ctx: Ctx, cwd: str | None, remote: str, settings: list[tuple[str, str]] | None = None,
              ) -> list[tuple[str, str]] | None:
    """``[(URL as configured, URL as rewritten)]`` that ``git push REMOTE`` writes to (None: unknown)."""
    found = entries(ctx, cwd, settings)
    if found is None or DYN in remote:
        return None
    pushurls = [v for s, sub, k, v in found if s == "remote" and sub == remote and k == "pushurl"]
    urls = [v for s, sub, k, v in found if s == "remote" and sub == remote and k == "url"]
    if pushurls:
        return [(u, rewrite(found, u, push=False)) for u in pushurls]
    return [(u, rewrite(found, u, push=True)) for u in (urls or [remote])]


def fetch_urls(ctx: Ctx, cwd: str | None) -> list[tuple[str, str]] | None:
    """``[(remote name, URL)]`` as ``git remote -v`` lists them for fetching (gh's view), or None: unknown."""
    found = entries(ctx, cwd)
    if found is None:
        return None
    from hook.detect.gitrepo import parse_remote_url
    from hook.detect.hosts import is_git_host

    urls: dict[str, str] = {}
    for s, sub, k, v in found:
        if s == "remote" and k == "url" and sub not in urls:
            rewritten = rewrite(found, v, push=False)
            parsed = parse_remote_url(rewritten)
            urls[sub] = rewritten if parsed is not None and is_git_host(ctx, parsed[0]) else v
    return list(urls.items())


def repo_of(ctx: Ctx, cwd: str | None) -> tuple[str | None, str] | None:
    """``(host, owner/name)`` gh picks in ``cwd`` after this command's edits (None: none, or unknown)."""
    from hook.detect.gitrepo import choose_remote

    urls = fetch_urls(ctx, cwd)
    found = entries(ctx, cwd) if urls is not None else None
    if urls is None or found is None:
        return None
    return choose_remote(urls, {sub: v for s, sub, k, v in found if s == "remote" and k == "gh-resolved"})


def setting(found: list[Entry], section: str, subsection: str, key: str) -> str | None:
    """The last value of one key among `entries`."""
    values = [v for s, sub, k, v in found if (s, sub, k) == (section, subsection, key)]
    return values[-1] if values else None


def rewrite(found: list[Entry], url: str, *, push: bool) -> str:
    """``url.BASE.pushInsteadOf`` (for a push to a remote without a pushurl), else ``url.BASE.insteadOf``: the
    longest matching prefix is replaced by its BASE."""
    for kind in (("pushinsteadof", "insteadof") if push else ("insteadof",)):
        best = max(((v, sub) for s, sub, k, v in found if s == "url" and k == kind and url.startswith(v)),
                   key=lambda pair: len(pair[0]), default=None)
        if best is not None:
            return best[1] + url[len(best[0]) :]
    return url


def _apply(found: list[Entry], action: str, section: str, subsection: str, key: str, value: str) -> list[Entry]:
    same = [(section, subsection, key) == e[:3] for e in found]
    if action == "set":
        return [*(e for e, s in zip(found, same, strict=True) if not s), (section, subsection, key, value)]
    if action == "add":
        return [*found, (section, subsection, key, value)]
    if action == "first":
        if not any(same):
            return [*found, (section, subsection, key, value)]
        k = same.index(True)
        return [*found[:k], (section, subsection, key, value), *found[k + 1 :]]
    if action == "unset":
        return [e for e, s in zip(found, same, strict=True) if not s]
    if action == "rename":
        return [(e[0], value, e[2], e[3]) if e[:2] == (section, subsection) else e
                for e in found if e[:2] != (section, value)]
    if action == "remove":
        return [e for e in found if e[:2] != (section, subsection)]
    return found


def _parse(path: str, env: Mapping[str, str], depth: int) -> list[Entry] | None:
    text = read_file(path)
    return [] if text is None else _parse_text(text, path, env, depth)


def _parse_text(text: str, path: str, env: Mapping[str, str], depth: int) -> list[Entry] | None:
    """The watched entries of one config file and what it includes (None: one may be set where the reader
    cannot follow: an ``includeIf`` file, a value continued over lines, includes nested too deep)."""
    if depth > MAX_INCLUDES:
        return None
    found: list[Entry] = []
    for header, line in config_lines(text):
        section, subsection = split_header(header)
        name, eq, value = line.partition("=")
        name = name.strip().lower()
        if value.rstrip().endswith("\\"):
            if section in _WATCHED:
                return None
            continue
        if section in _WATCHED:
            found.append((section, subsection, name, config_value(value) if eq else "true"))
        elif section == "include" and name == "path" and eq:
            included = _parse(include_path(config_value(value), path, env), env, depth + 1)
            if included is None:
                return None
            found += included
        elif section.startswith("includeif") and name == "path" and eq:
            included = _parse(include_path(config_value(value), path, env), env, depth + 1)
            if included is None or included:
                return None  # its condition is not evaluated here
    return found
