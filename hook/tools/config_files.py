"""Writing agents' configuration files without losing anything else in them.

JSON settings and hooks files (every agent's): our hook entries — recognised by their command line,
`hook.tools.claude_settings.is_ours` — are removed and appended again, whether they sit in matcher groups
(Claude Code's shape) or directly in an event's list (Cursor, Copilot, Windsurf, Kiro); every other key,
hook, group and event is kept as it was. TOML (Codex's ``requirements.toml``): a block between two
marker comments at the end, replaced on reinstall; the result must parse. Whole files of our own (a
hook script, a plugin): written when absent or ours (`FILE_MARK`), refused when someone else's.

Writes are atomic (a temporary file in the same directory, then a rename) and keep the file's mode; a
file that would not change is not written; a file that is not what it should be (not JSON, not an
object, not TOML) is refused rather than overwritten.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hook.agents.call import to_json
from hook.tools.claude_settings import is_ours

TOML_BEGIN = "# >>> merge-hold guard (written by `merge-hold hook install`; replaced on reinstall) >>>"
TOML_END = "# <<< merge-hold guard <<<"
FILE_MARK = "merge-hold hook install --agent"
"""In every whole file we write: what makes a file ours to replace or remove."""


class SettingsError(Exception):
    pass


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` minus our hook entries (and any matcher group or event list they leave empty)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                # a flat handler list (Cursor, Copilot, Windsurf, Kiro): the entry is the handler
                if not (isinstance(group, dict) and is_ours(group.get("command", group.get("bash")))):
                    kept_groups.append(group)
                continue
            kept = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
            if kept:
                kept_groups.append({**group, "hooks": kept} if len(kept) != len(inner) else group)
            elif not inner:
                kept_groups.append(group)  # an empty group that was not ours: not ours to remove
        if kept_groups:
            hooks[event] = kept_groups
        elif groups:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del out["hooks"]  # emptied by removing ours; an empty object the user wrote stays
    return out


def with_block(settings: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    out = without_ours(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError("the settings' \"hooks\" is not an object")
    for event, groups in block["hooks"].items():
        existing = hooks.setdefault(event, [])
        if not isinstance(existing, list):
            raise SettingsError(f"the settings' hooks.{event} is not a list")
        existing.extend(copy.deepcopy(groups))
    return out


def read_settings(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); fix it first, it was not changed") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} is not a JSON object; it was not changed")
    return data


def write_atomically(path: Path, data: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                          0o600 if path.name.endswith(".local.json") else 0o644)


def write_text_atomically(path: Path, text: str, new_mode: int) -> None:
    """Replace ``path`` with ``text`` in one rename; an existing file keeps its mode, a new one gets
    ``new_mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = new_mode
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def apply(path: Path, change: Any) -> bool:
    """Rewrite ``path`` with ``change(settings)``; returns whether anything changed."""
    before = read_settings(path)
    after = change(before)
    if after == before:
        return False
    write_atomically(path, after)
    return True


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise SettingsError(f"{path} is not UTF-8 text; it was not changed") from None


def write_own_file(path: Path, text: str, mode: int) -> bool:
    current = read_text(path) if path.exists() else None
    if current == text:
        return False
    if current is not None and FILE_MARK not in current:
        raise SettingsError(f"{path} exists and is not merge-hold's; it was not changed (merge it by hand, "
                            "or move it away and install again)")
    write_text_atomically(path, text, mode)
    return True


def toml_block(hooks: dict[str, list[dict[str, Any]]]) -> str:
    """Matcher groups as TOML arrays of tables under ``[hooks]`` (Codex's ``HookEventsToml``). A JSON
    string written with ASCII escapes is a valid TOML basic string."""
    lines = [TOML_BEGIN]
    for event, groups in hooks.items():
        for group in groups:
            lines.append(f"[[hooks.{event}]]")
            if "matcher" in group:
                lines.append(f"matcher = {to_json(group['matcher'])}")
            for handler in group.get("hooks", []):
                lines.append(f"[[hooks.{event}.hooks]]")
                lines.extend(f"{key} = {to_json(value)}" for key, value in handler.items())
    lines.append(TOML_END)
    return "\n".join(lines) + "\n"


def toml_flat_block(hooks: dict[str, list[dict[str, Any]]]) -> str:
    """Each handler as one ``[[hooks]]`` table with ``event``, ``matcher``, ``command``, ``timeout`` (Kimi Code
    CLI's shape: no other field is allowed there)."""
    lines = [TOML_BEGIN]
    for event, groups in hooks.items():
        for group in groups:
            for handler in group.get("hooks", []):
                lines.append("[[hooks]]")
                lines.append(f"event = {to_json(event)}")
                if group.get("matcher"):
                    lines.append(f"matcher = {to_json(group['matcher'])}")
                lines.extend(f"{key} = {to_json(handler[key])}" for key in ("command", "timeout") if key in handler)
    lines.append(TOML_END)
    return "\n".join(lines) + "\n"


def toml_text(hooks: dict[str, list[dict[str, Any]]], style: str = "codex") -> str:
    """Our marked TOML block in the agent's style (``codex``: nested under ``[hooks]``; ``flat``: Kimi's)."""
    return toml_flat_block(hooks) if style == "flat" else toml_block(hooks)


def toml_without_ours(text: str) -> str:
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.rstrip("\n") == TOML_BEGIN:
            inside = True
        elif inside and line.rstrip("\n") == TOML_END:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept)


def edit_toml(path: Path, hooks: dict[str, list[dict[str, Any]]] | None, *, style: str = "codex") -> bool:
    import tomllib

    text = read_text(path)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path} is not valid TOML ({exc}); fix it first, it was not changed") from None
    rest = toml_without_ours(text).rstrip("\n")
    new = rest + "\n" if rest else ""
    if hooks:
        new += ("\n" if rest else "") + toml_text(hooks, style)
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:  # e.g. an inline `hooks = {…}` table cannot take more entries
        raise SettingsError(f"cannot add the guard to {path} ({exc}); it was not changed") from None
    if new == text:
        return False
    write_text_atomically(path, new, 0o644)
    return True
