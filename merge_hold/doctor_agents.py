"""`merge-hold doctor`'s look at the coding agents' configuration it can see from here.

A guard that is installed but never run is no guard. Two things a file here can tell:

- every install `merge-hold hook install` recorded (`hook.tools.registry`), for every agent: one row each,
  a problem when the registered hook has disappeared (the file or our entries are gone) or been edited (a
  matcher narrowed, a timeout cut, a command changed, ``disableAllHooks`` set), with the command that puts
  it back. An agent that lets a call through when its hook times out says so in its row (``FAILS_OPEN``);
- Codex's project gate: a `.codex/hooks.json` with merge-hold's guard in this directory or above (up to the
  project's root), in a project `$CODEX_HOME/config.toml` does not trust, is never loaded
  (`hook.tools.codex_trust`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hook.tools.claude_settings import is_ours
from hook.tools.codex_trust import project_note, project_root
from merge_hold.doctor_github import Check


def _commands(data: Any) -> list[str]:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found: list[str] = []
    for groups in (hooks or {}).values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if isinstance(handler, dict) and isinstance(handler.get("command"), str):
                    found.append(handler["command"])
    return found


def codex_project_hooks(start: Path) -> Path | None:
    """The nearest `.codex/hooks.json` holding merge-hold's guard, from ``start`` up to the project root."""
    root = project_root(start)
    for folder in (start.resolve(), *start.resolve().parents):
        candidate = folder / ".codex" / "hooks.json"
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if data is not None and any(is_ours(c) and "--agent codex" in c for c in _commands(data)):
            return candidate
        if folder == root:
            break
    return None


def registered_checks() -> list[Check]:
    """One row per recorded install: as installed, disappeared or edited."""
    from hook import agents
    from hook.tools.registry import OK, check, load, problem

    unreadable = problem()
    checks = [Check("agent hooks registry", False, unreadable, "install the guard again (`merge-hold hook install`)")] \
        if unreadable else []
    for install in load():
        name = str(install.get("agent") or "?")
        scope = str(install.get("scope") or "")
        state, detail = check(install)
        agent_name = name.split()[0]
        fix = (f"merge-hold hook install --agent {agent_name} --config SPEC" + (f" --scope {scope}" if scope else "")
               + " (and find out who changed it: an agent may not remove its own guard)")
        where = f"{install.get('path')}: {detail}"
        module = agents.load(agent_name) if agent_name in agents.NAMES else None
        fails_open = getattr(module, "FAILS_OPEN", "")
        if fails_open and state == OK:
            where += f"; note: {fails_open}"
        checks.append(Check(f"{name} hook{f' ({scope})' if scope else ''}", state == OK,
                            where if state == OK else f"{state}: {where}", "" if state == OK else fix))
    return checks


def agent_checks(start: Path) -> list[Check]:
    checks = registered_checks()
    hooks_file = codex_project_hooks(start)
    if hooks_file is None:
        return checks
    loads, said = project_note(hooks_file)
    fix = "" if loads else "trust the project in Codex's config.toml (the lines above), or use --scope user or managed"
    return [*checks, Check("codex project hook", loads, said, fix)]
