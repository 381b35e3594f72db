"""Agent CLIs published on npm, for the real-client tests: find one, or install its pinned version,
and run it offline against a loopback model API (`tests.gemini_stub`, `tests.openai_stub`,
`tests.responses_stub`).

Where a CLI comes from, first match wins: its environment variable (``GEMINI_CLI``, ``QWEN_CLI``,
``CODEX_CLI``: a ``.js`` entry or an executable), a cached install of the pinned version, a fresh ``npm install`` of it
into the cache. Anything that stops all three (no node or npm, no registry, a failed install) is an
`Unavailable` with the reason, which the tests turn into a skip. Gemini CLI and Qwen Code are bundled
JavaScript that runs on Node 20+; Codex is a Node launcher for a native binary that npm installs as an
optional dependency (its platform package). None needs install scripts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.claude_cli import FETCH_TIMEOUT_MS, Unavailable, _npm_reason

INSTALL_TIMEOUT_S = 300


@dataclass(frozen=True)
class NpmCli:
    package: str
    version: str
    entry: str
    """The CLI's script, relative to the package directory."""
    env_var: str
    no_relaunch: str
    """The variable that keeps the CLI in one process (no re-exec with a bigger heap); "" for none."""
    settings: dict[str, Any]
    """User settings the offline run needs; ``merge-hold hook install`` must keep them."""

    def cache_dir(self) -> Path:
        """Outside the checkout, so CI's fresh clones on one machine share one install."""
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "merge-hold" / f"{self.package.rsplit('/', 1)[-1]}-{self.version}"

    def installed(self, prefix: Path) -> Path | None:
        script = prefix / "node_modules" / self.package / self.entry
        return script if script.is_file() else None


GEMINI = NpmCli(
    package="@google/gemini-cli", version="0.61.0", entry="bundle/gemini.js", env_var="GEMINI_CLI",
    no_relaunch="GEMINI_CLI_NO_RELAUNCH",
    settings={
        # The key is a dummy and the API is the loopback stub: select API-key auth explicitly (the base
        # URL alone selects a "gateway" auth that headless mode refuses).
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        # Off the loopback these would only fail slowly.
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    },
)
"""Verified with: ``BeforeTool`` hooks from ``~/.gemini/settings.json``, ``GOOGLE_GEMINI_BASE_URL`` with
API-key auth, and the ``Tool execution blocked: <stderr>`` function response."""

QWEN = NpmCli(
    package="@qwen-code/qwen-code", version="0.24.4", entry="cli.js", env_var="QWEN_CLI",
    no_relaunch="QWEN_CODE_NO_RELAUNCH",
    settings={
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
    },
)
"""Verified with: ``PreToolUse`` hooks from ``~/.qwen/settings.json``, ``OPENAI_BASE_URL``, and the hook's
stderr as the tool message."""

CODEX = NpmCli(
    package="@openai/codex", version="0.171.0", entry="bin/codex.js", env_var="CODEX_CLI", no_relaunch="",
    settings={},
)
"""A launcher for the native binary in the platform package npm installs beside it
(``@openai/codex-linux-x64``). Its configuration is TOML, written by the test. Verified with:
``PreToolUse`` hooks from ``$CODEX_HOME/hooks.json`` (run only once trusted, or with
``--dangerously-bypass-hook-trust``), a ``model_providers`` entry with ``wire_api = "responses"``, and
``Command blocked by PreToolUse hook: <reason>`` as the tool output."""


def _argv(cli: str) -> list[str]:
    return ["node", cli] if cli.endswith(".js") else [cli]


def _no_relaunch(spec: NpmCli) -> dict[str, str]:
    return {spec.no_relaunch: "true"} if spec.no_relaunch else {}


def version_of(cli: str, spec: NpmCli) -> str:
    try:
        done = subprocess.run([*_argv(cli), "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False, env={**os.environ, **_no_relaunch(spec)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{cli} --version failed: {exc}") from None
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        raise Unavailable(f"{cli} --version exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return words[-1]


def npm_install(spec: NpmCli) -> Path:
    """Install the pinned CLI into its cache directory (atomically: a half-done install is never found)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise Unavailable(f"node/npm are not installed, so {spec.package} cannot be installed")
    target = spec.cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    # --ignore-scripts: run no package's install code; the bundles need none.
    argv = [npm, "install", "--prefix", str(partial), "--ignore-scripts", "--no-audit", "--no-fund",
            "--loglevel=error", "--fetch-retries=1", "--fetch-retry-mintimeout=2000",
            "--fetch-retry-maxtimeout=10000", f"--fetch-timeout={FETCH_TIMEOUT_MS}", f"{spec.package}@{spec.version}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise Unavailable(f"npm install {spec.package}@{spec.version} failed: {exc}") from None
    if done.returncode != 0 or spec.installed(partial) is None:
        shutil.rmtree(partial, ignore_errors=True)
        why = _npm_reason(done.stderr or done.stdout) or f"no {spec.entry} in the package"
        raise Unavailable(f"npm install {spec.package}@{spec.version} failed (exit {done.returncode}): {why}")
    try:
        partial.rename(target)
    except OSError:  # another process finished first: use its install
        shutil.rmtree(partial, ignore_errors=True)
    found = spec.installed(target)
    if found is None:
        raise Unavailable(f"the install in {target} has no {spec.entry}")
    return found


_SETTLED: dict[str, str | Unavailable] = {}


def find_cli(spec: NpmCli) -> str:
    """The CLI (a ``.js`` path or an executable); raises `Unavailable`. Settled once per process."""
    if spec.package not in _SETTLED:
        _SETTLED[spec.package] = _locate(spec)
    found = _SETTLED[spec.package]
    if isinstance(found, Unavailable):
        raise found
    return found


def _locate(spec: NpmCli) -> str | Unavailable:
    try:
        given = os.environ.get(spec.env_var)
        if given:
            version_of(given, spec)
            return given
        if shutil.which("node") is None:
            raise Unavailable("node is not installed")
        script = spec.installed(spec.cache_dir()) or npm_install(spec)
        found = version_of(str(script), spec)
        if found != spec.version:
            raise Unavailable(f"{script} reports version {found}, expected {spec.version}")
        return str(script)
    except Unavailable as exc:
        return exc


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_prompt(cli: str, spec: NpmCli, prompt: str, *, env: dict[str, str], home: Path, cwd: Path,
               path_prefix: tuple[str, ...] = (), extra_args: tuple[str, ...] = (), timeout_s: float = 180,
               argv_prefix: tuple[str, ...] = ()) -> Run:
    """``CLI -p PROMPT --yolo`` with a built environment: a temp ``HOME`` whose settings file is the only
    configuration, ``PATH`` with ``path_prefix`` first, and ``env`` (the API's base URL and a dummy
    key). ``--yolo`` lets the shell tool run headless; the hooks run before it either way. A CLI with
    another grammar gives ``argv_prefix`` (Codex: ``exec …``), and the prompt goes last."""
    full_env = {
        "PATH": os.pathsep.join([*path_prefix, os.environ.get("PATH", os.defpath)]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(home),
        **_no_relaunch(spec),
        **env,
    }
    argv = [*_argv(cli), *(argv_prefix or ("-p", prompt, "--yolo")), *extra_args]
    if argv_prefix:
        argv.append(prompt)
    started = time.monotonic()
    done = subprocess.run(argv, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                          stdin=subprocess.DEVNULL, check=False)
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)
