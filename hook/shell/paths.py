"""POSIX path arithmetic on strings for the shell reader: `normpath`, `join`, `isabs`, `abspath`, with
the exact results of ``posixpath``'s functions of the same names (pinned by tests/test_hook_paths.py).

Why not ``os.path``: the guard is started with ``-S`` (design §7), so nothing has imported ``os`` when a
command reaches the reader, and ``import os`` pulls in ``_collections_abc`` (a few dozen ABC classes):
1-3 ms, a tenth of the interpreter floor, paid by every command the prefilter cannot settle. The
reader needs only string arithmetic and the working directory, which `posix` (built in) gives.
"""

from __future__ import annotations

import posix


def isabs(path: str) -> bool:
    return path.startswith("/")


def join(first: str, *rest: str) -> str:
    path = first
    for part in rest:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def normpath(path: str) -> str:
    """``.``, ``..`` and repeated slashes resolved as text (like ``posixpath.normpath``: no symlinks)."""
    if not path:
        return "."
    # POSIX leaves the meaning of exactly two leading slashes to the system, so posixpath keeps them
    slashes = 2 if path.startswith("//") and not path.startswith("///") else 1 if path.startswith("/") else 0
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not slashes and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    return "/" * slashes + "/".join(parts) or "."


def abspath(path: str) -> str:
    return normpath(path if isabs(path) else join(posix.getcwd(), path))
