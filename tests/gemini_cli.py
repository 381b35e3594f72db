"""The real Gemini CLI for the tests: find it, or install the pinned version from npm, and run it offline
against a loopback Gemini API (`tests.gemini_stub`).

Where the CLI comes from, first match wins: ``GEMINI_CLI`` (a ``gemini.js`` or an executable), a cached
install of `PINNED_VERSION`, a fresh ``npm install`` of it into the cache. Anything that stops all three
(no node or npm, no registry, a failed install) is an `Unavailable` with the reason, which the tests turn
into a skip. The package is one bundled JavaScript file tree (~100 MB installed) that runs on Node 20+.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.claude_cli import FETCH_TIMEOUT_MS, Unavailable, _npm_reason

PACKAGE = "@google/gemini-cli"
PINNED_VERSION = "0.61.0"
"""Verified with: ``BeforeTool`` hooks from ``~/.gemini/settings.json``, ``GOOGLE_GEMINI_BASE_URL`` with
``security.auth.selectedType: "gemini-api-key"``, and the ``Tool execution blocked: <stderr>`` response."""
INSTALL_TIMEOUT_S = 300

SETTINGS = {
    # The key is a dummy and the API is the loopback stub: select API-key auth explicitly (the base URL
    # alone selects a "gateway" auth that headless mode refuses).
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    # Off the loopback these would only fail slowly.
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
"""User settings the offline run needs; ``merge-hold hook install --agent gemini`` must keep them."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "merge-hold" / f"gemini-cli-{PINNED_VERSION}"


def _entry(prefix: Path) -> Path | None:
    script = prefix / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"
    return script if script.is_file() else None


def _argv(cli: str) -> list[str]:
    return ["node", cli] if cli.endswith(".js") else [cli]


def version_of(cli: str) -> str:
    try:
        done = subprocess.run([*_argv(cli), "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, "GEMINI_CLI_NO_RELAUNCH": "true"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{cli} --version failed: {exc}") from None
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        raise Unavailable(f"{cli} --version exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return words[-1]


def npm_install(target: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise Unavailable("node/npm are not installed, so the Gemini CLI cannot be installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    # --ignore-scripts: run no package's install code; the bundle needs none (node-pty is optional).
    argv = [npm, "install", "--prefix", str(partial), "--ignore-scripts", "--no-audit", "--no-fund",
            "--loglevel=error", "--fetch-retries=1", "--fetch-retry-mintimeout=2000",
            "--fetch-retry-maxtimeout=10000", f"--fetch-timeout={FETCH_TIMEOUT_MS}", f"{PACKAGE}@{PINNED_VERSION}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise Unavailable(f"npm install {PACKAGE}@{PINNED_VERSION} failed: {exc}") from None
    if done.returncode != 0 or _entry(partial) is None:
        shutil.rmtree(partial, ignore_errors=True)
        why = _npm_reason(done.stderr or done.stdout) or "no bundle/gemini.js in the package"
        raise Unavailable(f"npm install {PACKAGE}@{PINNED_VERSION} failed (exit {done.returncode}): {why}")
    try:
        partial.rename(target)
    except OSError:  # another process finished first: use its install
        shutil.rmtree(partial, ignore_errors=True)
    found = _entry(target)
    if found is None:
        raise Unavailable(f"the install in {target} has no bundle/gemini.js")
    return found


def find_cli() -> str:
    """The CLI (a ``gemini.js`` path or an executable); raises `Unavailable`. Settled once per process."""
    found = _settle()
    if isinstance(found, Unavailable):
        raise found
    return found


@cache
def _settle() -> str | Unavailable:
    try:
        given = os.environ.get("GEMINI_CLI")
        if given:
            version_of(given)
            return given
        if shutil.which("node") is None:
            raise Unavailable("node is not installed")
        script = _entry(cache_dir()) or npm_install(cache_dir())
        found = version_of(str(script))
        if found != PINNED_VERSION:
            raise Unavailable(f"{script} reports version {found}, expected {PINNED_VERSION}")
        return str(script)
    except Unavailable as exc:
        return exc


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_prompt(cli: str, prompt: str, *, base_url: str, home: Path, cwd: Path, path_prefix: tuple[str, ...] = (),
               timeout_s: float = 120) -> Run:
    """``gemini -p PROMPT --yolo`` against ``base_url`` with a built environment (a temp ``HOME`` whose
    ``.gemini/settings.json`` is the only configuration; ``--yolo`` so the shell tool runs headless —
    the hooks run before it either way)."""
    env = {
        "PATH": os.pathsep.join([*path_prefix, os.environ.get("PATH", os.defpath)]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(home),
        "GEMINI_API_KEY": "dummy",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",  # one process: no re-exec with a bigger heap
    }
    argv = [*_argv(cli), "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL, check=False)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
