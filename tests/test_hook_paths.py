"""The reader's path arithmetic (hook/shell/paths.py) gives exactly what ``posixpath`` gives: it stands
in for ``os.path`` only to keep ``os`` out of the guard's start-up (design §7); likewise the
environment the guard reads without ``os``."""

from __future__ import annotations

import itertools
import os
import posixpath
import subprocess
import sys
from pathlib import Path

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


def test_the_environment_without_os_is_os_environ(tmp_path: Path) -> None:
    """`hook.guard._environ` (``posix.environ`` decoded) gives what ``os.environ`` gives, undecodable
    bytes included, in a process where nothing has imported ``os`` yet (the fast launcher's)."""
    code = ("import sys;sys.path.append(sys.argv[1]);import hook.guard as g;e=dict(g._environ());"
            "ok='os' not in sys.modules;import os;print(ok and e==dict(os.environ) and e['MH_X']=='\\udcff\\u00e9')")
    env = {b"PATH": os.environb.get(b"PATH", b"/usr/bin"), b"MH_X": b"\xff\xc3\xa9"}
    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, root], env=env, capture_output=True,
                          check=False, cwd=tmp_path)
    assert done.stdout.strip() == b"True", done.stderr.decode()
