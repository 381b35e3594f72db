"""git aliases, found where git finds them: ``-c alias.NAME=…`` on the command line, then (read in
git's order, the last value winning) the system file, the global files (``$XDG_CONFIG_HOME/git/config``
and ``~/.gitconfig``, or ``GIT_CONFIG_GLOBAL``), the repository's ``config``, with ``include.path``
followed where it appears. An alias set in an ``includeIf`` file, a value continued over lines or an
environment we cannot read makes the answer unknown rather than guessed (the soundness rule).
"""

from __future__ import annotations

import os

from hook.detect.gitrepo import MAX_INCLUDES, config_files, config_lines, config_value, include_path, read_file
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

UNKNOWN = DYN  # an alias value this reader cannot know


def alias(name: str, cwd: str | None, env: Mapping[str, str], command_line: Mapping[str, str]) -> str | None:
    """The value of ``alias.NAME`` (None when no alias; `UNKNOWN` when it cannot be read exactly)."""
    key = name.lower()
    if key in command_line:
        return command_line[key]
    if any(k.startswith("GIT_CONFIG") and k != "GIT_CONFIG_NOSYSTEM" for k in env):
        return UNKNOWN if _any_alias(env) else None  # GIT_CONFIG_COUNT/KEY/VALUE, GIT_CONFIG_PARAMETERS ...
    return value("alias", key, cwd, env)


def value(section: str, key: str, cwd: str | None, env: Mapping[str, str]) -> str | None:
    """The last ``KEY`` of ``[SECTION]`` (``section`` as written in a header, lower case: ``push``,
    ``remote "origin"``) in git's files, in git's order; None when unset, `UNKNOWN` when unreadable."""
    found: str | None = None
    for path in config_files(cwd, env):
        got = _lookup(path, key, env, 0, section)
        if got is not None:
            found = got
    return found


def _any_alias(env: Mapping[str, str]) -> bool:
    return any("alias" in v.lower() for k, v in env.items() if k.startswith("GIT_CONFIG")) or \
        "GIT_CONFIG_GLOBAL" in env or "GIT_CONFIG_SYSTEM" in env


def _lookup(path: str, key: str, env: Mapping[str, str], depth: int, wanted: str = "alias") -> str | None:
    """The last ``KEY`` of section ``wanted`` in ``path`` and what it includes, in order."""
    text = read_file(path)
    if text is None:
        return None
    if depth > MAX_INCLUDES:
        return UNKNOWN
    found: str | None = None
    for header, line in config_lines(text):
        section = header.strip().lower()
        name, eq, value = line.partition("=")
        name = name.strip().lower()
        if value.rstrip().endswith("\\"):
            if section == wanted and name == key:
                found = UNKNOWN  # continued over lines
            continue
        if section == wanted and name == key:
            found = config_value(value) if eq else "true"
        elif section == "include" and name == "path" and eq:
            included = _lookup(include_path(config_value(value), path, env), key, env, depth + 1, wanted)
            found = included if included is not None else found
        elif section.startswith("includeif") and name == "path" and eq:
            included = _lookup(include_path(config_value(value), path, env), key, env, depth + 1, wanted)
            found = UNKNOWN if included is not None else found  # its condition is not evaluated here
    return found


def worktree_top(cwd: str | None) -> str | None:
    """Where git runs a shell alias: the top of the working tree holding ``cwd``."""
    if not cwd:
        return None
    path = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


_CONFIG_VALUE = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})
_CONFIG_SUBCOMMANDS = frozenset({"set", "unset", "get", "list", "edit", "rename-section", "remove-section"})


def config_command(aliases: dict[str, str], rest: list[str]) -> None:
    """`git config [--global|--local|…] alias.NAME VALUE` earlier in the same command defines an alias
    a later `git NAME` runs: it is recorded exactly; any other write that may touch an alias (another
    file, `--unset`, `--add`, a key computed at run time, `--edit`) makes that alias, or every alias,
    unknown — never a guessed "no alias"."""
    positional: list[str] = []
    flags: set[str] = set()
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in _CONFIG_VALUE or (word.startswith("-") and DYN in word):
            flags.add(word.split("=", 1)[0])
            i += 2
            continue
        if word.startswith("-"):
            flags.add(word.split("=", 1)[0])
        else:
            positional.append(word)
        i += 1
    if positional and positional[0] in _CONFIG_SUBCOMMANDS:
        flags.add(positional.pop(0))
    key = positional[0] if positional else ""
    if not key or DYN in key:
        if flags & {"-e", "--edit", "edit", "rename-section", "remove-section"} or DYN in key:
            aliases[""] = UNKNOWN
        return
    if not key.lower().startswith("alias."):
        return
    name = key[6:].lower()
    reads = flags & {"--get", "--get-all", "--get-regexp", "-l", "--list", "get", "list"}
    if reads and not flags & {"--unset", "--unset-all", "unset"}:
        return
    exact = len(positional) == 2 and not flags & {"-f", "--file", "--blob", "--add", "--replace-all", "--unset",
                                                  "--unset-all", "unset", "--type"}
    aliases[name] = positional[1] if exact else UNKNOWN
