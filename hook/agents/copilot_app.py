"""The GitHub Copilot app: repository hooks and hooks from plugins (github/docs content/copilot/reference/
hooks-reference.md: hooks are loaded from ``.github/hooks/*.json``, the user's ``~/.copilot/hooks``, settings
files, and "hooks contributed by installed plugins — declared by each plugin in its own ``hooks.json``").

The app runs Copilot's agent, so the contract is the Copilot CLI's (`hook.agents.copilot`): ``preToolUse`` with
``toolName``/``toolArgs``, deny as ``{"permissionDecision": "deny", "permissionDecisionReason": R}``. Scopes:
``project`` is the repository's ``.github/hooks/merge-hold.json`` (what the app and the cloud agent load), and
``plugin`` a plugin directory of ours, ``merge-hold-copilot-plugin/`` (``plugin.json`` and ``hooks.json``),
for ``copilot plugin install ./merge-hold-copilot-plugin`` or the app's plugin settings.
"""

from __future__ import annotations

from hook.agents.call import to_json
from hook.agents.copilot import NEW_FILE, allow, context, deny, hooks, session_hooks, tool_call, trouble

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["NEW_FILE", "allow", "companion_files", "context", "deny", "hooks", "session_hooks", "tool_call",
           "trouble"]

NAME = "copilot-app"
SCOPES = {"project": ".github/hooks/merge-hold.json", "plugin": "merge-hold-copilot-plugin/hooks.json"}


def companion_files(path: Path) -> dict[str, str]:
    """A plugin's manifest beside its ``hooks.json`` (the repository hooks file needs none)."""
    if path.parent.name != "merge-hold-copilot-plugin":
        return {}
    manifest = {"name": "merge-hold", "version": "1.0.0",
                "description": "merge-hold guard (written by `merge-hold hook install --agent copilot-app`)",
                "hooks": "hooks.json"}
    return {str(path.parent / "plugin.json"): to_json(manifest) + "\n"}
