"""A git subcommand's positional arguments, as git's option parser leaves them (shared by the git and
push readers)."""

from __future__ import annotations

from hook.shell.syntax import DYN


def positional(rest: list[str], valued: frozenset[str]) -> list[str]:
    """``rest`` without its options; an option in ``valued`` takes the next word; ``--`` ends options."""
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
