"""Path scope of room holds and freeze windows: gitignore-style globs, and the files a PR changes (pure).

A hold or window with ``paths`` holds a PR only when one of the files the PR changes matches (design §3
"Path scope"). The patterns read as in ``.gitignore`` (git's PATTERN FORMAT):

- ``*`` matches anything but ``/``, ``?`` one character but ``/``, ``[a-z]`` / ``[!a-z]`` one of (or none
  of) a set; ``\\`` quotes the next character; trailing spaces are dropped unless quoted.
- A pattern with a ``/`` at its start or in its middle is anchored at the repository root (``/docs``,
  ``db/migrations``); one without (``*.sql``, ``vendor``) matches at any depth.
- A trailing ``/`` matches directories only; a pattern that matches a directory matches everything in it.
- ``**/`` leading matches in every directory, ``/**`` trailing everything inside, ``/**/`` zero or more
  directories; other ``**`` are plain ``*``.
- ``!`` excludes what the patterns before it matched; the last pattern that matches a path decides.

One deliberate difference, toward what a freeze's author means: git cannot re-include a file whose
directory is excluded (it never looks inside), so ``db/`` then ``!db/README.md`` still ignores the README.
Here a path is decided by the deepest of the file and its directories that any pattern matches, so that
exclude works: a PR changing only ``db/README.md`` is not held. Everything else agrees with git, which
``tests/test_paths.py`` checks row by row against git itself.

A renamed file counts under both its names: moving a file out of a frozen directory changes that
directory. What GitHub cannot list (more than `GITHUB_FILE_LIMIT` files) or what could not be read is
`ChangedFiles.unknown`: a path-scoped hold then holds (never success on doubt).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_PATTERNS = 50
"""Patterns per hold or window: enough for any directory list a person writes, small enough to show."""
MAX_PATTERN = 255
GITHUB_FILE_LIMIT = 3000
"""GitHub's `GET /pulls/{n}/files` lists at most this many files: a PR listing that many may have more."""

_CLASSES = {"alnum": r"a-zA-Z0-9", "alpha": r"a-zA-Z", "blank": r" \t", "cntrl": r"\x00-\x1f\x7f",
            "digit": r"0-9", "graph": r"!-~", "lower": r"a-z", "print": r" -~",
            "punct": r"!-\.:-@\[-`{-~", "space": r" \t\n\r\f\v", "upper": r"A-Z", "xdigit": r"0-9A-Fa-f"}
"""POSIX character classes inside brackets (``[[:digit:]]``), as git's wildmatch knows them."""


class PathsError(ValueError):
    """A pattern list that cannot be used; the message says which pattern and why."""


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


@dataclass(frozen=True)
class ChangedFiles:
    """The files a PR's head changes, a fact the verdict is given: ``paths`` (a rename under both its
    names), or None when unknown, with ``why`` for the people reading the status."""

    paths: tuple[str, ...] | None
    why: str = ""

    @classmethod
    def unknown(cls, why: str) -> ChangedFiles:
        return cls(None, why)

    @property
    def known(self) -> bool:
        return self.paths is not None


NOT_READ = ChangedFiles.unknown("its changed files were not read")


def _bracket(text: str, start: int) -> tuple[str, int] | None:
    """The regex of the bracket expression opening at ``text[start]`` and the index after it; None when
    it is not closed (then ``[`` is a plain character, as git reads it)."""
    i, out = start + 1, list[str]()
    negate = i < len(text) and text[i] in "!^"
    if negate:
        i += 1
    first = True
    while i < len(text):
        char = text[i]
        if char == "]" and not first:
            body = "".join(out)
            # A bracket never matches "/" (git's wildmatch with WM_PATHNAME).
            return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), i + 1
        first = False
        if char == "[" and text.startswith("[:", i):
            end = text.find(":]", i + 2)
            name = text[i + 2:end] if end != -1 else ""
            if name not in _CLASSES:
                return None
            out.append(_CLASSES[name])
            i = end + 2
            continue
        if char == "\\" and i + 1 < len(text):
            i += 1
            char = text[i]
        if i + 2 < len(text) and text[i + 1] == "-" and text[i + 2] != "]":
            high = text[i + 3] if text[i + 2] == "\\" and i + 3 < len(text) else text[i + 2]
            out.append(f"{re.escape(char)}-{re.escape(high)}")
            i += 4 if text[i + 2] == "\\" else 3
            continue
        out.append(re.escape(char))
        i += 1
    return None


def _segment(text: str) -> str:
    """One path segment's glob as a regex (no ``/`` in it)."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "*":
            while i < len(text) and text[i] == "*":
                i += 1  # `**` inside a segment is a plain `*`
            out.append("[^/]*")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            found = _bracket(text, i)
            if found is not None:
                out.append(found[0])
                i = found[1]
                continue
            out.append(re.escape(char))
        elif char == "\\" and i + 1 < len(text):
            i += 1
            out.append(re.escape(text[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _strip_trailing_spaces(text: str) -> str:
    end = len(text)
    while end > 0 and text[end - 1] == " " and not (end > 1 and text[end - 2] == "\\"):
        end -= 1
    return text[:end]


@lru_cache(maxsize=1024)
def _rule(pattern: str) -> _Rule | None:
    body = _strip_trailing_spaces(pattern)
    negated = body.startswith("!")
    if negated or body.startswith(("\\!", "\\#")):
        body = body[1:]
    dir_only = body.endswith("/") and not body.endswith("\\/")
    body = body.rstrip("/") if dir_only else body
    if not body:
        return None
    anchored = "/" in body
    body = body.removeprefix("/")
    segments = body.split("/")
    regex = "" if anchored else "(?:.*/)?"
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            regex += ".*" if last else "(?:.*/)?"
        else:
            regex += _segment(segment) + ("" if last else "/")
    try:
        return _Rule(re.compile(f"^{regex}$", re.DOTALL), negated, dir_only)
    except re.error:  # a reversed range such as [z-a]: git's wildmatch matches nothing with it either
        return None


def check(patterns: Sequence[str]) -> tuple[str, ...]:
    """The patterns as given, once they are usable; `PathsError` says what is wrong."""
    if not patterns:
        raise PathsError("paths needs at least one pattern")
    if len(patterns) > MAX_PATTERNS:
        raise PathsError(f"at most {MAX_PATTERNS} path patterns")
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > MAX_PATTERN:
            raise PathsError(f"each path pattern is a non-empty string of at most {MAX_PATTERN} characters")
        if any(ord(c) < 0x20 for c in pattern):
            raise PathsError(f"path pattern {pattern!r} has a control character")
        if pattern.startswith("#"):
            raise PathsError(f"path pattern {pattern!r} would be a comment in .gitignore: write \\# for a #")
        if _rule(pattern) is None:
            raise PathsError(f"path pattern {pattern!r} matches nothing (or is not a glob)")
    if all(pattern.startswith("!") for pattern in patterns):
        raise PathsError("paths needs a pattern that includes files: only `!` excludes match nothing")
    return tuple(dict.fromkeys(patterns))


def _decide(rules: list[_Rule], path: str, is_dir: bool) -> bool | None:
    decided = None
    for rule in rules:
        if (is_dir or not rule.dir_only) and rule.regex.match(path):
            decided = not rule.negated
    return decided


def matches(patterns: Sequence[str], path: str) -> bool:
    """Whether ``path`` (relative to the repository root, ``/``-separated) is in ``patterns``' scope."""
    rules = [rule for p in patterns if (rule := _rule(p)) is not None]
    parts = path.strip("/").split("/")
    for depth in range(len(parts), 0, -1):  # the file, then its directories, deepest first
        decided = _decide(rules, "/".join(parts[:depth]), is_dir=depth < len(parts))
        if decided is not None:
            return decided
    return False


def touches(patterns: Sequence[str], files: ChangedFiles) -> bool:
    """Whether a PR with these changed files is in scope: any file matches, or the files are unknown."""
    return files.paths is None or any(matches(patterns, path) for path in files.paths)


def from_listing(entries: Iterable[Mapping[str, object]]) -> tuple[str, ...]:
    """The paths of GitHub's ``GET /pulls/{n}/files`` entries (``filename``, and ``previous_filename``
    for a rename), in order, each once."""
    found: dict[str, None] = {}
    for entry in entries:
        for name in (entry.get("filename"), entry.get("previous_filename")):
            if isinstance(name, str) and name:
                found[name] = None
    return tuple(found)


def split_list(text: str) -> list[str]:
    """``db/migrations/**,!db/migrations/README.md`` (chat, a form field) -> the patterns; a comma or a
    newline separates them (a pattern that needs a comma is written in the repo config)."""
    return [part.strip() for part in re.split(r"[,\n]", text) if part.strip()]


def describe(patterns: Sequence[str]) -> str:
    """``db/migrations/** (not db/migrations/README.md)`` for a status or a chat line."""
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]
    return ", ".join(include) + (f" (not {', '.join(exclude)})" if exclude else "")
