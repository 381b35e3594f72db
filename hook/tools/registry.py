"""What `merge-hold hook install` registered, and where: the install registry.

A guard that someone (or an agent) quietly removed from a settings file is no guard, and nothing else notices:
the agent just stops asking. So every install records, per agent and file, exactly what it wrote — the hook
entries it merged into a JSON file (event, matcher group, handler), the marked block of a TOML file, or the
digest of a whole file of its own (a hook script, a plugin: by absolute path) — and `doctor` compares each
record with the file as it is now (`check`: ``ok``, ``disappeared`` or ``edited``), as does Claude Code's
``ConfigChange`` hook (`hook.configguard`) for the settings file being changed. Uninstall forgets the record
first.
The registry is one JSON file, ``$XDG_CONFIG_HOME/merge-hold/installed-hooks.json`` (default
``~/.config/merge-hold/``, beside the plugin's spec), or ``MERGE_HOLD_HOOK_REGISTRY``. It holds no secret:
command lines carry only the spec path.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

FORMAT = 1
ENV = "MERGE_HOLD_HOOK_REGISTRY"
OK, DISAPPEARED, EDITED = "ok", "disappeared", "edited"


def registry_path() -> Path:
    given = os.environ.get(ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "merge-hold" / "installed-hooks.json"


def load() -> list[dict[str, Any]]:
    """The recorded installs (an unreadable registry reads as none: doctor says so, see `problem`)."""
    try:
        data = json.loads(registry_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    installs = data.get("installs") if isinstance(data, dict) else None
    return [i for i in installs if isinstance(i, dict)] if isinstance(installs, list) else []


def problem() -> str | None:
    """Why the registry cannot be read (None when it is fine or absent)."""
    path = registry_path()
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read ({exc})"
    return None if isinstance(data, dict) and isinstance(data.get("installs"), list) else f"{path} is not a registry"


def _save(installs: list[dict[str, Any]]) -> None:
    from hook.tools.config_files import write_text_atomically

    write_text_atomically(registry_path(), json.dumps({"f": FORMAT, "installs": installs}, indent=2) + "\n", 0o600)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remember(agent: str, scope: str, path: Path, *, hooks: dict[str, Any] | None = None, toml: str | None = None,
             files: dict[str, str] | None = None) -> None:
    """Record what an install wrote to ``path`` (one record per agent and file, replaced on reinstall)."""
    entry: dict[str, Any] = {"agent": agent, "scope": scope, "path": str(path.absolute())}
    if hooks is not None:
        entry["hooks"] = hooks
    if toml is not None:
        entry["toml"] = toml
    if files is not None:
        entry["files"] = {str(Path(name).absolute()): digest(text) for name, text in files.items()}
    _save([i for i in load() if not _same(i, agent, path)] + [entry])


def forget(agent: str, path: Path) -> None:
    installs = load()
    kept = [i for i in installs if not _same(i, agent, path)]
    if len(kept) != len(installs):
        _save(kept)


def _same(entry: dict[str, Any], agent: str, path: Path) -> bool:
    return entry.get("agent") == agent and entry.get("path") == str(path.absolute())


def ours_in(settings: object) -> list[tuple[str, str | None, dict[str, Any]]]:
    """Our handlers in a JSON hooks file, as ``(event, matcher, handler)``: in matcher groups (Claude Code's
    shape) or directly in an event's list (Cursor, Copilot, Windsurf, Kiro)."""
    from hook.tools.claude_settings import is_ours

    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    found: list[tuple[str, str | None, dict[str, Any]]] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            inner = group.get("hooks")
            handlers = inner if isinstance(inner, list) else [group]
            matcher = group.get("matcher") if isinstance(inner, list) else None
            for handler in handlers:
                if isinstance(handler, dict) and is_ours(handler.get("command", handler.get("bash"))):
                    found.append((event, matcher if isinstance(matcher, str) else None, handler))
    return found


def check_settings(recorded: dict[str, Any], settings: object) -> tuple[str, str]:
    """Our recorded hook entries against a JSON hooks file's content as it is."""
    wanted = sorted(json.dumps(e, sort_keys=True) for e in ours_in({"hooks": recorded}))
    present = sorted(json.dumps(e, sort_keys=True) for e in ours_in(settings))
    if isinstance(settings, dict) and settings.get("disableAllHooks") is True:
        return EDITED, "`disableAllHooks` is set: no hook of this file runs"
    if present == wanted:
        return OK, "as installed"
    if not present:
        return DISAPPEARED, "merge-hold's hook entries are gone"
    missing = [json.loads(e) for e in wanted if e not in present]
    events = sorted({e[0] for e in missing}) or sorted({json.loads(e)[0] for e in present if e not in wanted})
    return EDITED, f"merge-hold's entries for {', '.join(events)} differ from what was installed"


def check(entry: dict[str, Any], text: str | None = None) -> tuple[str, str]:
    """``(ok | disappeared | edited, why)`` for one recorded install; ``text`` is the file's content when the
    caller has it (ConfigChange reads the new file itself), else it is read."""
    path = Path(str(entry.get("path")))
    if "files" in entry:
        for name, wanted in (entry.get("files") or {}).items():
            try:
                found = Path(name).read_text(encoding="utf-8")
            except OSError:
                return DISAPPEARED, f"{name} is gone"
            if digest(found) != wanted:
                return EDITED, f"{name} was changed since it was installed"
        return OK, "as installed"
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return DISAPPEARED, f"{path} is gone"
        except OSError as exc:
            return EDITED, f"{path} cannot be read ({exc})"
    if "toml" in entry:
        from hook.tools.config_files import TOML_BEGIN

        if str(entry["toml"]) in text:
            return OK, "as installed"
        return (EDITED, "merge-hold's block was changed") if TOML_BEGIN in text else \
            (DISAPPEARED, "merge-hold's block is gone")
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError:
        return EDITED, f"{path} is no longer valid JSON (the agent may ignore the whole file)"
    return check_settings(entry.get("hooks") or {}, settings)
