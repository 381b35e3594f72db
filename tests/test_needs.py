"""A program a test needs and the machine lacks leaves that test's rows out, saying why and how to install
it, and the run's summary lists what was skipped (tests/needs.py, issue #27 item 6). Checked for real: a
pytest run in a subprocess with a PATH that has no such program, and `.ci/run` installing every row."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.needs import NEEDS, WITHOUT, programs_in

PROBE = '''
import pytest
from tests.needs import needs

@needs("busybox")
def test_runs_busybox():
    raise AssertionError("ran without busybox")

@pytest.mark.parametrize("program", [pytest.param("busybox sh -c true", marks=needs("busybox")), "true"])
def test_rows(program):
    assert "busybox" not in program, "a busybox row ran without busybox"

@needs("busybox", partial=True)
def test_leaves_out_what_needs_it():
    pass
'''
CONFTEST = "from tests.needs import pytest_collection_modifyitems, pytest_configure, pytest_terminal_summary\n"


def _run(tmp_path: Path, path: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_probe.py").write_text(PROBE)
    environ = {k: v for k, v in os.environ.items() if k != WITHOUT}
    environ.update({"PATH": path, "PYTHONPATH": str(ROOT), **(env or {})})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120, check=False)


def test_a_program_missing_from_path_skips_its_rows_and_the_summary_says_why(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()  # a PATH with nothing on it: no busybox
    done = _run(tmp_path, str(bare))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"2 passed, 2 skipped", out), out
    assert "needs busybox (the guard's differential oracle runs BusyBox's shell and applets for real): " \
           "no `busybox` on PATH; install: apt-get install -y busybox" in out
    section = out.split("programs this machine lacks", 1)[1]
    assert "busybox: 2 test(s) skipped, 1 ran without what needs it — no `busybox` on PATH" in section
    assert "install: apt-get install -y busybox" in section


def test_nothing_is_skipped_or_listed_where_the_program_is_there(tmp_path: Path) -> None:
    if not any(Path(d, "busybox").exists() for d in os.environ.get("PATH", "").split(os.pathsep) if d):
        pytest.skip("busybox is not installed here: the other test covers this machine")
    done = _run(tmp_path, os.environ["PATH"])
    assert "2 failed, 2 passed" in done.stdout, done.stdout  # the busybox rows ran (and failed, as written)
    assert "programs this machine lacks" not in done.stdout


def test_without_hides_an_installed_program(tmp_path: Path) -> None:
    done = _run(tmp_path, os.environ["PATH"], {WITHOUT: "busybox"})
    assert done.returncode == 0 and "2 skipped" in done.stdout, done.stdout
    assert f"busybox: 2 test(s) skipped, 1 ran without what needs it — left out by {WITHOUT}" in done.stdout


@pytest.mark.parametrize(("program", "found"), [
    ("busybox sh -c 'gh pr merge 5'", ("busybox",)),
    ("echo 5 | busybox xargs gh pr merge", ("busybox",)),
    ("lua5.4 -e 'os.execute([[gh pr merge 5]])'", ("lua5.4",)),
    ("lua -e 'print(1 + 1)'", ("lua",)),
    ("tclsh <<'EOF'\nexec gh pr merge 5\nEOF", ("tclsh",)),
    ("echo 'puts [expr 1 + 1]' | tclsh", ("tclsh",)),
    ("expect -c 'spawn gh pr merge 5; expect eof' >/dev/null", ("expect",)),
    ("tmux ls 2>/dev/null || true", ("tmux",)),
    ("(tmux new-session -d 'x')", ("tmux",)),
    ("gh pr merge 5 -R acme/lua-tools", ()),
    ("git commit -m busybox-update", ()),
])
def test_the_programs_a_row_runs(program: str, found: tuple[str, ...]) -> None:
    assert programs_in(program, ("busybox", "lua", "lua5.4", "tclsh", "expect", "tmux")) == found


def test_ci_installs_every_debian_package_the_rows_name() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    pairs = dict(p.split(":", 1) for p in re.findall(r"\b([\w.+-]+:[\w.+-]+)\b", script.split("for pair in", 1)[1]
                                                     .split("; do", 1)[0]))
    for need in NEEDS.values():
        packages = re.findall(r"apt-get install -y ([\w.+ -]+?)(?:\s*\(|,|$)", need.install)
        for package in " ".join(packages).split():
            assert package in pairs.values(), f".ci/run does not install {package} ({need.name})"
