"""`merge-hold hook install|uninstall --config SPEC [--scope user|project|local]`.

Merges the guard's settings block (`hook.tools.claude_settings`) into Claude Code's settings file for the
scope, idempotently: our previous entries are removed first (recognised by their command line, see
`is_ours`), everything else — other hooks, other matcher groups, other keys — is kept as it was, and a
file that would not change is not written. Writes are atomic (a temporary file in the same directory,
then a rename), keep the file's mode, and refuse a file that is not a JSON object rather than overwrite
it. Uninstall removes only our entries and the groups and events they leave empty.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hook.tools.claude_settings import block_for, is_ours

SCOPES = {
    "user": "~/.claude/settings.json",
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
}


class SettingsError(Exception):
    pass


def settings_path(scope: str, project_dir: str | None = None) -> Path:
    relative = SCOPES[scope]
    if scope == "user":
        return Path(relative).expanduser()
    return Path(project_dir or os.getcwd()) / relative


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
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600 if path.name.endswith(".local.json") else 0o644
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
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


def _parser(prog: str, with_console: bool) -> Any:
    from merge_hold.cliargs import ArgumentParser

    parser = ArgumentParser(prog=prog)
    parser.add_argument("--config", required=with_console, metavar="SPEC", help="the guard's spec file")
    parser.add_argument("--scope", choices=sorted(SCOPES), default="user",
                        help="user (~/.claude/settings.json, default), project or local")
    parser.add_argument("--project-dir", default=None, help="project root for project/local (default: cwd)")
    if with_console:
        parser.add_argument("--console-script", action="store_true",
                            help="run the guard as `merge-hold hook-guard` (slower start-up)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser("merge-hold hook install", True).parse_args(argv)
    path = settings_path(args.scope, args.project_dir)
    if not Path(args.config).expanduser().is_file():
        print(f"merge-hold: warning: spec {args.config} does not exist yet; the guard fails open until it does")
    block = block_for(args.config, console_script=args.console_script)
    try:
        changed = apply(path, lambda settings: with_block(settings, block))
    except (SettingsError, OSError) as exc:
        print(f"merge-hold: install failed: {exc}")
        return 1
    print(f"merge-hold: guard {'installed in' if changed else 'already installed in'} {path}")
    return 0


def uninstall_main(argv: list[str]) -> int:
    args = _parser("merge-hold hook uninstall", False).parse_args(argv)
    path = settings_path(args.scope, args.project_dir)
    try:
        changed = apply(path, without_ours) if path.exists() else False
    except (SettingsError, OSError) as exc:
        print(f"merge-hold: uninstall failed: {exc}")
        return 1
    print(f"merge-hold: guard {'removed from' if changed else 'was not installed in'} {path}")
    return 0
