"""Where and how the guard is registered with each agent (`merge-hold hook install --agent NAME`).

An agent module (`hook.agents`) says *what* to register: its configuration file per scope, and either
hook entries (``hooks(guard, fold, matchers)``) or a whole file of its own (``file_text(guard)``: Cline's
hook script, opencode's plugin). This module picks the file and the command lines; `hook.tools.config_files`
does the writing (JSON merge, a marked TOML block, or a whole file). A new JSON file starts from the
agent's ``NEW_FILE`` skeleton (Cursor's and Copilot's ``"version": 1``).
The command line carries the spec path and, for every agent but Claude Code (the default), ``--agent
NAME``: ``<guard> --agent gemini --config /abs/spec.json``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from hook.tools.claude_settings import GUARD_MATCHERS, fast_guard_command, merge_hold_command
from hook.tools.config_files import FILE_MARK, apply, edit_toml, read_text, with_block, without_ours, write_own_file


def command_lines(agent_name: str, spec_path: str, *, console_script: bool = False) -> tuple[str, str]:
    """The guard's command line for ``agent_name``, and the records fold's (absolute, shell-quoted spec)."""
    spec = shlex.quote(str(Path(spec_path).expanduser().absolute()))
    command = merge_hold_command()
    guard = f"{command} hook-guard" if console_script else fast_guard_command()
    agent = "" if agent_name == "claude" else f" --agent {shlex.quote(agent_name)}"
    return f"{guard}{agent} --config {spec}", f"{command} hook fold --config {spec}"


def target(agent: Any, scope: str, project_dir: str | None = None) -> Path:
    """The file ``scope`` means for ``agent``: ``~`` is the home directory, a relative path is under the
    project; of several candidates, the first that exists, else the last. KeyError for an unknown scope."""
    where = agent.SCOPES[scope]
    candidates = [where] if isinstance(where, str) else list(where)
    # An agent whose home directory moves with a variable (Codex: ``CODEX_HOME``, default ``~/.codex``)
    # reads its user file there, so that is where the guard must go.
    variable, default = getattr(agent, "HOME_ENV", ("", ""))
    moved = os.environ.get(variable) if variable else None
    if moved:
        candidates = [moved + c[len(default) :] if c.startswith(default + "/") else c for c in candidates]
    paths = []
    for candidate in candidates:
        path = Path(candidate).expanduser()
        paths.append(path if path.is_absolute() else Path(project_dir or ".").absolute() / path)
    return next((p for p in paths if p.exists()), paths[-1])


def install(agent: Any, path: Path, guard: str, fold: str) -> bool:
    """Register the guard in ``path``; returns whether the file changed. Raises `SettingsError`."""
    if hasattr(agent, "file_text"):
        return write_own_file(path, agent.file_text(guard), agent.FILE_MODE)
    hooks = agent.hooks(guard, fold, GUARD_MATCHERS)
    if path.suffix == ".toml":
        return edit_toml(path, hooks)
    skeleton = getattr(agent, "NEW_FILE", {})
    return apply(path, lambda settings: with_block(settings or dict(skeleton), {"hooks": hooks}))


def uninstall(agent: Any, path: Path) -> bool:
    """Remove only what `install` wrote; returns whether anything changed."""
    if not path.exists():
        return False
    if hasattr(agent, "file_text"):
        if FILE_MARK not in read_text(path):
            return False
        path.unlink()
        return True
    if path.suffix == ".toml":
        return edit_toml(path, None)
    return apply(path, without_ours)


