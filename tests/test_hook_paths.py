"""The reader's path arithmetic (hook/shell/paths.py) gives exactly what ``posixpath`` gives: it stands
in for ``os.path`` only to keep ``os`` out of the guard's start-up (design §7)."""

from __future__ import annotations

import itertools
import os
import posixpath

import pytest

from hook.shell import paths

PIECES = ["", ".", "..", "/", "//", "///", "a", "a/", "/a", "//a", "///a", "a/..", "../a", "a/./b", "a//b/",
          "/../..", "~", "a/b/../../..", "./", ".a", "a..", "x/../y/./z//", "/..//a/.", "é/ü", "-"]


@pytest.mark.parametrize("path", PIECES + ["/".join(p) for p in itertools.product(["", ".", "..", "a"], repeat=3)])
def test_normpath_isabs_abspath_match_posixpath(path: str) -> None:
    assert paths.normpath(path) == posixpath.normpath(path)
    assert paths.isabs(path) == posixpath.isabs(path)
    assert paths.abspath(path) == posixpath.abspath(path)
    assert os.getcwd() and paths.abspath(path).startswith("/")


@pytest.mark.parametrize(("first", "rest"), [(a, (b,)) for a, b in itertools.product(PIECES[:12], repeat=2)]
                         + [("a", ("b", "/c", "d")), ("", ("", "")), ("/", ("a/", "b")), ("a", ())])
def test_join_matches_posixpath(first: str, rest: tuple[str, ...]) -> None:
    assert paths.join(first, *rest) == posixpath.join(first, *rest)
