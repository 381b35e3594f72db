"""Codex's two trust gates, as `merge-hold hook install --agent codex` reports them after installing.

Checked with the real CLI 0.171.0 (tests/test_agent_clis.py):

1. **The project.** Codex loads a project's ``.codex/`` (its ``hooks.json`` included) only when the
   project is trusted: ``[projects."<root>"] trust_level = "trusted"`` in ``$CODEX_HOME/config.toml``
   (default ``~/.codex``), which ``codex exec --trust`` (or the first-run prompt) writes. The root is the
   git repository's (the main checkout's for a linked worktree: ``--trust`` writes that path), else the
   directory itself; in a linked worktree Codex loads no project ``.codex/`` at all. An untrusted project
   gets only a one-line warning on stderr, and ``--dangerously-bypass-hook-trust`` does not change it: the
   guard never runs. ``trust_level = "untrusted"`` is an explicit no that only the user may change.
2. **The hook.** A user or project hook runs only once reviewed in ``/hooks`` (Codex stores its hash), or
   under ``--dangerously-bypass-hook-trust`` (`hook.agents.codex.TRUST_NOTE`).

The install never trusts a project itself: that also lets the project's MCP servers and configuration
in, a decision for the user. It reads ``config.toml`` to say where things stand, so running the install
again is also the check.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

GIT_TIMEOUT_S = 10


def config_path(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CODEX_HOME") or "~/.codex").expanduser() / "config.toml"


def _git(directory: Path, *args: str) -> Path | None:
    try:
        done = subprocess.run(["git", "-C", str(directory), "rev-parse", "--path-format=absolute", *args],
                              capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return Path(out).resolve() if done.returncode == 0 and out else None


def project_root(directory: Path) -> Path:
    """The directory Codex keys a project's trust by: the git root — for a linked worktree its main
    checkout (`codex exec --trust` run in one writes the main checkout's path) — else the directory."""
    common = _git(directory, "--git-common-dir")
    if common is not None and common.name == ".git":
        return common.parent
    return directory.resolve()


def linked_worktree(directory: Path) -> bool:
    """Whether ``directory`` is in a linked git worktree (its checkout is not the main one)."""
    top = _git(directory, "--show-toplevel")
    return top is not None and top != project_root(directory)


def trust_level(config: Path, root: Path) -> str | None:
    """``trusted``, ``untrusted``, another word, or None when the file says nothing (or cannot be read:
    then Codex would not trust it either)."""
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    projects = data.get("projects")
    entry = projects.get(str(root)) if isinstance(projects, dict) else None
    level = entry.get("trust_level") if isinstance(entry, dict) else None
    return str(level) if level is not None else None


def snippet(root: Path) -> str:
    """The table that trusts ``root`` (a JSON string is a valid TOML basic string)."""
    return f'[projects.{json.dumps(str(root))}]\ntrust_level = "trusted"'


def project_note(hooks_file: Path, environ: dict[str, str] | None = None) -> tuple[bool, str]:
    """(whether Codex will load ``hooks_file``'s project, what to tell the user)."""
    root = project_root(hooks_file.parent.parent)
    config = config_path(environ)
    level = trust_level(config, root)
    if linked_worktree(hooks_file.parent.parent):
        return False, (f"Codex will NOT load {hooks_file}: it is in a linked git worktree of {root}, and Codex "
                       f"(0.171.0, seen in tests/test_agent_clis.py) loads no project .codex/ in a linked "
                       f"worktree, trusted or not. Install with --scope user (or managed) for sessions there")
    if level == "trusted":
        return True, (f"Codex trusts the project {root} ({config}), so it loads {hooks_file}; the hook "
                      f"itself must still be trusted (below)")
    if level == "untrusted":
        return False, (f"Codex will NOT load {hooks_file}: {config} marks the project {root} "
                       f'trust_level = "untrusted". Only you can change that: set it to "trusted" there. '
                       f"Until then the guard does not run in this project, with or without "
                       f"--dangerously-bypass-hook-trust")
    return False, (f"Codex will NOT load {hooks_file} yet: it reads a project's .codex/ only once the project "
                   f"is trusted, and {root} is not trusted in {config}. Add\n{snippet(root)}\nto {config} "
                   f"(or run `codex exec --trust` once in the project). Until then the guard does not run in "
                   f"this project, with or without --dangerously-bypass-hook-trust (Codex only warns "
                   f"\"Untrusted project-local configuration is disabled\"); run this install again to check")
