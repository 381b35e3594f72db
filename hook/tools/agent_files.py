"""Where and how the guard is registered with each agent (`merge-hold hook install --agent NAME`).

An agent module (`hook.agents`) says *what* to register: its configuration file per scope, and either
hook entries (``hooks(guard, fold, matchers)``) or a whole file of its own (``file_text(guard)``: Cline's
hook script, opencode's plugin). This module picks the file and the command lines; `hook.tools.config_files`
does the writing (JSON merge, a marked TOML block, or a whole file). A new JSON file starts from the
agent's ``NEW_FILE`` skeleton (Cursor's and Copilot's ``"version": 1``).
The command line carries the spec path and, for every agent but Claude Code (the default), ``--agent
NAME``: ``<guard> --agent gemini --config /abs/spec.json``. An agent module with ``session_hooks(command)``
also gets the SessionStart hook (`hook.session`), one with ``config_hooks(command)`` the ConfigChange hook
(`hook.configguard`). Every install is recorded in the install registry (`hook.tools.registry`) with what it
wrote, for `doctor` and the ConfigChange hook; uninstall forgets it first.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from hook.tools import registry
from hook.tools.claude_settings import GUARD_MATCHERS, fast_command, fast_guard_command, merge_hold_command
from hook.tools.config_files import (
    FILE_MARK,
    apply,
    edit_toml,
    read_text,
    toml_text,
    with_block,
    without_ours,
    write_own_file,
)


def command_lines(agent_name: str, spec_path: str, *, console_script: bool = False) -> tuple[str, str]:
    """The guard's command line for ``agent_name``, and the records fold's (absolute, shell-quoted spec)."""
    spec = shlex.quote(str(Path(spec_path).expanduser().absolute()))
    command = merge_hold_command()
    guard = f"{command} hook-guard" if console_script else fast_guard_command()
    agent = "" if agent_name == "claude" else f" --agent {shlex.quote(agent_name)}"
    return f"{guard}{agent} --config {spec}", f"{command} hook fold --config {spec}"


def extra_lines(agent_name: str, spec_path: str, *, console_script: bool = False) -> tuple[str, str]:
    """The SessionStart hook's command line for ``agent_name`` and the ConfigChange hook's."""
    spec = shlex.quote(str(Path(spec_path).expanduser().absolute()))
    command = merge_hold_command()
    session = f"{command} hook session-start" if console_script else fast_command("hook.session")
    agent = "" if agent_name == "claude" else f" --agent {shlex.quote(agent_name)}"
    return f"{session}{agent} --config {spec}", f"{command} hook config-change --config {spec}"


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


def install(agent: Any, path: Path, guard: str, fold: str, *, session: str | None = None,
            config: str | None = None, scope: str = "") -> bool:
    """Register the guard in ``path`` (and the SessionStart and ConfigChange hooks, where the agent has them);
    returns whether the file changed; records what it wrote. Raises `SettingsError`."""
    if hasattr(agent, "file_text"):
        text = agent.file_text(guard)
        changed = write_own_file(path, text, agent.FILE_MODE)
        registry.remember(agent.NAME, scope, path, files={str(path): text})
        return changed
    scripts = agent.scripts(guard, session) if hasattr(agent, "scripts") else {}
    for name, text in scripts.items():  # an agent that runs script files only (Auggie: `.sh`)
        write_own_file(path.parent / "hooks" / name, text, 0o755)
    if scripts:
        guard = str(path.parent / "hooks" / agent.GUARD_SCRIPT)
        session = str(path.parent / "hooks" / agent.SESSION_SCRIPT) if agent.SESSION_SCRIPT in scripts else None
    for name, text in getattr(agent, "companion_files", lambda _p: {})(path).items():
        write_own_file(Path(name), text, 0o644)  # goose: the plugin's manifest beside its hooks
    hooks = agent_hooks(agent, guard, fold, session, config)
    style = getattr(agent, "TOML_STYLE", "codex")
    if path.suffix == ".toml":
        changed = edit_toml(path, hooks, style=style)
        registry.remember(agent.NAME, scope, path, toml=toml_text(hooks, style))
        return changed
    skeleton = getattr(agent, "NEW_FILE", {})
    changed = apply(path, lambda settings: with_block(settings or dict(skeleton), {"hooks": hooks}))
    registry.remember(agent.NAME, scope, path, hooks=hooks)
    if scripts:
        registry.remember(agent.NAME + " scripts", scope, path.parent / "hooks",
                          files={str(path.parent / "hooks" / name): text for name, text in scripts.items()})
    return changed


def agent_hooks(agent: Any, guard: str, fold: str, session: str | None, config: str | None) -> dict[str, Any]:
    """Every entry an install merges into the agent's hooks file: the guard's, then SessionStart's and
    ConfigChange's where the agent has them."""
    hooks: dict[str, Any] = agent.hooks(guard, fold, GUARD_MATCHERS)
    if session is not None and hasattr(agent, "session_hooks"):
        hooks.update(agent.session_hooks(session))
    if config is not None and hasattr(agent, "config_hooks"):
        hooks.update(agent.config_hooks(config))
    return hooks


def uninstall(agent: Any, path: Path) -> bool:
    """Remove only what `install` wrote (its record first: the ConfigChange hook then lets it go); returns
    whether anything changed."""
    registry.forget(agent.NAME, path)
    if hasattr(agent, "scripts"):
        registry.forget(agent.NAME + " scripts", path.parent / "hooks")
        for name in agent.scripts("", ""):
            script = path.parent / "hooks" / name
            if script.exists() and FILE_MARK in read_text(script):
                script.unlink()
    for name in getattr(agent, "companion_files", lambda _p: {})(path):
        if Path(name).exists() and FILE_MARK in read_text(Path(name)):
            Path(name).unlink()
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


