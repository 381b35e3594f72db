"""The git commands that change where a push goes (issue 26 item 5): ``git remote add|set-url|rename|remove`` and
``git config`` writes of ``remote.*``, ``url.*`` and ``branch.*``, recorded as edits (`hook.detect.remotes.edit`)
that later pushes and gh's repository choice in the same command follow exactly — or, where the edit is not
modelled (a value pattern, ``--edit``, another file, a key only the run knows), as unknown.
"""

from __future__ import annotations

from hook.detect.remotes import GLOBAL, UNKNOWN, edit, where_of
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx

_WATCHED = ("remote.", "url.", "branch.")
# git config's options that take a value (the file options are read separately)
_CONFIG_VALUE = frozenset({"--type", "--default", "--comment", "--value", "--blob", "-t"})
_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "get", "list",
                    "--show-origin", "--show-scope", "--get-color", "--get-colorbool"})
_REMOTE_ADD_VALUE = frozenset({"-t", "-m", "--track", "--master"})


def remote(ctx: Ctx, cwd: str | None, rest: list[str]) -> None:
    """``git remote …``: what it changes in the repository's configuration."""
    words = [w for w in rest if w not in ("-v", "--verbose")]
    if not words:
        return
    sub, args = words[0], words[1:]
    where = where_of(cwd) if cwd is not None else None
    if any(DYN in w for w in words):
        if sub in ("add", "set-url", "rename", "remove", "rm") or DYN in sub:
            edit(ctx, UNKNOWN, "unknown", "remote", "", "", "")
        return
    positional, flags = _split(args, _REMOTE_ADD_VALUE if sub == "add" else frozenset())
    if sub == "add" and len(positional) >= 2:
        edit(ctx, where, "set", "remote", positional[0], "url", positional[1])
        if any(f.startswith("--mirror") and f.split("=", 1)[-1] in ("--mirror", "push") for f in flags):
            edit(ctx, where, "set", "remote", positional[0], "mirror", "true")
    elif sub == "set-url" and len(positional) >= 2:
        key = "pushurl" if "--push" in flags else "url"
        if "--delete" in flags or len(positional) > 2:
            edit(ctx, UNKNOWN, "unknown", "remote", positional[0], key, "")  # URLs matching a pattern
        else:
            edit(ctx, where, "add" if "--add" in flags else "first", "remote", positional[0], key, positional[1])
    elif sub == "rename" and len(positional) >= 2:
        edit(ctx, where, "rename", "remote", positional[0], "", positional[1])
    elif sub in ("remove", "rm") and positional:
        edit(ctx, where, "remove", "remote", positional[0], "", "")


def config(ctx: Ctx, cwd: str | None, rest: list[str]) -> None:
    """``git config [scope] KEY VALUE`` (and ``--add``, ``--unset[-all]``, ``--replace-all``, ``set``, ``unset``,
    ``--rename-section``, ``--remove-section``) for the keys a push reads."""
    scope, words, flags = config_words(rest)
    if flags & _READS and not flags & {"--unset", "--unset-all", "unset"}:
        return
    if flags & {"-e", "--edit", "edit"} or any(DYN in w for w in words):
        edit(ctx, UNKNOWN, "unknown", "remote", "", "", "")
        return
    if scope == "file":
        if any(w.lower().startswith(_WATCHED) for w in words):
            edit(ctx, UNKNOWN, "unknown", "remote", "", "", "")
        return
    where = GLOBAL if scope == GLOBAL else (where_of(cwd) if cwd is not None else None)
    if flags & {"--rename-section", "rename-section", "--remove-section", "remove-section"}:
        if words and words[0].lower().startswith(("remote.", "url.")):
            section, _, subsection = words[0].partition(".")
            if flags & {"--rename-section", "rename-section"} and len(words) > 1:
                edit(ctx, where, "rename", section, subsection, "", words[1].partition(".")[2])
            else:
                edit(ctx, where, "remove", section, subsection, "", "")
        return
    if not words or not words[0].lower().startswith(_WATCHED):
        return
    section, _, tail = words[0].partition(".")
    subsection, _, key = tail.rpartition(".")
    value = words[1] if len(words) > 1 else ""
    if flags & {"--unset", "--unset-all", "unset"}:
        action = "unset" if len(words) == 1 else "unknown"  # a value pattern: some values only
    elif flags & {"--add", "--append"}:
        action = "add"
    elif len(words) > 2 or "--value" in flags:
        action = "unknown"  # a value pattern: the values that match only
    else:
        action = "set" if len(words) == 2 else "unknown"
    edit(ctx, where if action != "unknown" else UNKNOWN, action, section, subsection, key, value)


def config_words(rest: list[str]) -> tuple[str, list[str], set[str]]:
    """``(scope: "global" | "file" | "local", positional words, flags)`` of a ``git config`` command line."""
    scope, words, flags = "local", list[str](), set[str]()
    i = 0
    while i < len(rest):
        w = rest[i]
        name = w.split("=", 1)[0]
        if name in ("--global", "--system"):
            scope = GLOBAL
        elif name in ("-f", "--file", "--blob"):
            scope = "file"
            i += 0 if "=" in w else 1
        elif name in _CONFIG_VALUE:
            flags.add(name)
            i += 0 if "=" in w else 1
        elif w.startswith("-"):
            flags.add(name)
        elif not words and not flags & {"set", "unset", "get", "list", "edit", "rename-section", "remove-section"} \
                and w in ("set", "unset", "get", "list", "edit", "rename-section", "remove-section"):
            flags.add(w)
        else:
            words.append(w)
        i += 1
    return scope, words, flags


def _split(args: list[str], valued: frozenset[str]) -> tuple[list[str], set[str]]:
    positional, flags, i = [], set(), 0
    while i < len(args):
        a = args[i]
        if a == "--":
            positional += args[i + 1 :]
            break
        if a.startswith("-"):
            flags.add(a)
            i += 2 if a in valued else 1
            continue
        positional.append(a)
        i += 1
    return positional, flags
