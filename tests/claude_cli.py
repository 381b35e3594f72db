"""The real Claude Code CLI for the tests: find it, or install the pinned version from npm, and run it
offline against a loopback Messages API (design §6, "The real client is testable offline").

Where the CLI comes from, first match wins: ``CLAUDE_CLI`` (a path), ``claude`` on ``PATH``, a cached
install of `PINNED_VERSION`, a fresh ``npm install`` of it into the cache. Anything that stops all four
(no npm, no registry, a failed install, a binary that does not start) is an `Unavailable` with the
reason, which the tests turn into a skip: CI must not fail for lack of a network.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = "@anthropic-ai/claude-code"
PINNED_VERSION = "2.1.328"
"""The version these tests were verified with: hooks, ``--settings``, ``ANTHROPIC_BASE_URL`` and the
``PreToolUse:Bash hook error: [<command>]: <stderr>`` tool result all behave as asserted."""

INSTALL_TIMEOUT_S = 300
"""The platform package is a ~370 MB native binary (about 70 MB to download)."""
FETCH_TIMEOUT_MS = 120_000

OFFLINE_ENV = {
    "ANTHROPIC_API_KEY": "dummy",
    # Without these the CLI also reaches for telemetry and update checks: off the loopback, so they
    # would only fail slowly here.
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


class Unavailable(Exception):
    """The CLI cannot be found or installed here; the message says why."""


def cache_dir() -> Path:
    """Outside the checkout, so CI's fresh clones on one machine share one install."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "merge-hold" / f"claude-code-{PINNED_VERSION}"


def _platform_key() -> str:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    system = platform.system().lower()
    if arch is None or system not in ("linux", "darwin"):
        raise Unavailable(f"no Claude Code native package for {platform.system()} {platform.machine()}")
    musl = system == "linux" and not platform.libc_ver()[0]
    return f"{system}-{arch}{'-musl' if musl else ''}"


def installed_binary(prefix: Path) -> Path | None:
    """The native binary of an npm install under ``prefix``. Taken from the platform package directly:
    the wrapper's ``bin/claude.exe`` is only a placeholder until its postinstall (which we skip) runs."""
    try:
        key = _platform_key()
    except Unavailable:
        return None
    binary = prefix / "node_modules" / "@anthropic-ai" / f"claude-code-{key}" / "claude"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def version_of(binary: str) -> str:
    """``claude --version`` (``2.1.328 (Claude Code)``) cut to the number; raises `Unavailable`."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{binary} --version failed: {exc}") from None
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        raise Unavailable(f"{binary} --version exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return words[0]


def _npm_reason(output: str) -> str:
    """npm's error in one line: its first few ``npm error`` lines (code, errno, the failed request)."""
    lines = [line.removeprefix("npm error").strip() for line in output.splitlines()]
    return "; ".join([line for line in lines if line][:3])[:400]


def npm_install(target: Path) -> Path:
    """Install the pinned CLI into ``target`` (atomically: a half-done install is never found)."""
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed, so the Claude Code CLI cannot be installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    # --ignore-scripts: the postinstall only copies the platform binary over a placeholder; we run the
    # platform binary where npm put it, and run no package's install code.
    # The retry bounds keep an unreachable registry to seconds (npm's defaults wait over a minute).
    argv = [npm, "install", "--prefix", str(partial), "--ignore-scripts", "--no-audit", "--no-fund",
            "--loglevel=error", "--fetch-retries=1", "--fetch-retry-mintimeout=2000",
            "--fetch-retry-maxtimeout=10000", f"--fetch-timeout={FETCH_TIMEOUT_MS}", f"{PACKAGE}@{PINNED_VERSION}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise Unavailable(f"npm install {PACKAGE}@{PINNED_VERSION} failed: {exc}") from None
    if done.returncode != 0 or installed_binary(partial) is None:
        shutil.rmtree(partial, ignore_errors=True)
        why = _npm_reason(done.stderr or done.stdout) or "no native binary for this platform"
        raise Unavailable(f"npm install {PACKAGE}@{PINNED_VERSION} failed (exit {done.returncode}): {why}")
    try:
        partial.rename(target)
    except OSError:  # another process finished first: use its install
        shutil.rmtree(partial, ignore_errors=True)
    found = installed_binary(target)
    if found is None:
        raise Unavailable(f"the install in {target} has no native binary")
    return found


def find_cli() -> str:
    """The CLI's path; raises `Unavailable`. The outcome, a failure too, is settled once per process."""
    found = _settle()
    if isinstance(found, Unavailable):
        raise found
    return found


@cache
def _settle() -> str | Unavailable:
    try:
        return _locate()
    except Unavailable as exc:
        return exc


def _locate() -> str:
    given = os.environ.get("CLAUDE_CLI")
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise Unavailable(f"CLAUDE_CLI={given} is not an executable file")
        version_of(given)
        return given
    on_path = shutil.which("claude")
    if on_path:
        version_of(on_path)
        return on_path
    binary = installed_binary(cache_dir()) or npm_install(cache_dir())
    found = version_of(str(binary))
    if found != PINNED_VERSION:
        raise Unavailable(f"{binary} reports version {found}, expected {PINNED_VERSION}")
    return str(binary)


@dataclass(frozen=True)
class Run:
    """One ``claude -p`` session: its exit status, output and wall time."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_print(cli: str, prompt: str, *, settings: Path, base_url: str, home: Path, cwd: Path,
              path_prefix: tuple[str, ...] = (), timeout_s: float = 90) -> Run:
    """``claude -p PROMPT --settings FILE --allowedTools Bash`` against ``base_url``.

    The environment is built, not inherited: a temp ``HOME`` (no user settings, hooks or credentials of
    the machine leak in), the loopback API and a dummy key, ``PATH`` with ``path_prefix`` first. As root
    the CLI refuses ``--dangerously-skip-permissions``, and ``--allowedTools Bash`` is what a headless
    run needs anyway: the hooks still run before the permission decision.
    """
    env = {
        "PATH": os.pathsep.join([*path_prefix, os.environ.get("PATH", os.defpath)]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        **OFFLINE_ENV,
    }
    argv = [cli, "-p", prompt, "--settings", str(settings), "--allowedTools", "Bash"]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL, check=False)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
