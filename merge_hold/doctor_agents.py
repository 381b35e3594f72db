"""`merge-hold doctor`'s look at the coding agents' configuration it can see from here.

A guard that is installed but never run is no guard, and the one case a file here can tell is Codex's
project gate: a `.codex/hooks.json` with merge-hold's guard in this directory or above (up to the
project's root), in a project `$CODEX_HOME/config.toml` does not trust, is never loaded
(`hook.tools.codex_trust`). No such file: no check, nothing to say.
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


def agent_checks(start: Path) -> list[Check]:
    hooks_file = codex_project_hooks(start)
    if hooks_file is None:
        return []
    loads, said = project_note(hooks_file)
    fix = "" if loads else "trust the project in Codex's config.toml (the lines above), or use --scope user or managed"
    return [Check("codex project hook", loads, said, fix)]
