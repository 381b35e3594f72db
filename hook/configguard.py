"""`merge-hold hook config-change --config SPEC`: guard the guard (design §6), Claude Code's ``ConfigChange`` hook.

Claude Code runs ``ConfigChange`` hooks when a settings file changes during a session, with ``source``
(``user_settings``, ``project_settings``, ``local_settings``, ``policy_settings``, ``skills``) and
``file_path`` on stdin; exit 2 (or ``{"decision": "block"}``) keeps the new settings from taking effect in
that session (``policy_settings`` cannot be blocked; the reason is never shown, only logged). An agent that
can write its own settings could otherwise drop merge-hold's entries, or switch every hook off, and merge.

Blocked: a change to a settings file that holds one of our recorded installs (`hook.tools.registry`) whose
entries are then gone or different (a matcher narrowed, a timeout cut, the command edited), a file that is
no longer valid JSON, and ``disableAllHooks: true`` in any settings file while a Claude Code install of the
guard is recorded. Everything else goes through; so does the guard's own trouble (it never blocks on its
own error: the required status check still decides). `merge-hold hook uninstall` forgets the record before
it edits the file, so removing the guard on purpose is not blocked.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BLOCKABLE = frozenset({"user_settings", "project_settings", "local_settings"})
USAGE = "usage: merge-hold hook config-change --config SPEC   (Claude Code's ConfigChange input on stdin)\n"


def judge(payload: dict[str, Any], installs: list[dict[str, Any]]) -> str | None:
    """The reason to block the change, or None to let it through."""
    import json
    from pathlib import Path

    from hook.tools.registry import OK, check

    source, file_path = payload.get("source"), payload.get("file_path")
    if source not in BLOCKABLE or not isinstance(file_path, str) or not file_path:
        return None
    changed = Path(file_path).absolute()
    try:
        text = changed.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        text = None
        why = f"{changed} cannot be read ({exc})"
    claude = [i for i in installs if i.get("agent") == "claude"]
    if text is None:
        return why if any(i.get("path") == str(changed) for i in claude) else None
    for install in claude:
        if install.get("path") != str(changed):
            continue
        state, detail = check(install, text)
        if state != OK:
            return f"merge-hold: this change to {changed} removes or weakens merge-hold's guard ({detail})"
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError:
        settings = {}
    if claude and isinstance(settings, dict) and settings.get("disableAllHooks") is True:
        return f"merge-hold: this change to {changed} sets `disableAllHooks`, which would switch merge-hold's guard off"
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE)
        return 0
    try:
        import json

        from hook.tools.registry import load

        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        reason = judge(payload if isinstance(payload, dict) else {}, load())
    except BaseException as exc:  # the guard's own trouble: let the change through, say why
        sys.stderr.write(f"merge-hold: config-change: {type(exc).__name__}: {exc} (not blocked)\n")
        return 0
    if reason is None:
        return 0
    note = (f"{reason}. Changing merge-hold's hooks is a person's act: run `merge-hold hook uninstall` (or "
            "install) yourself, outside the agent.")
    sys.stderr.write(note + "\n")
    return 2
