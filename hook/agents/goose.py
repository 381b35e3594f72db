"""goose: hooks from plugins, the Open Plugins hooks format (block/goose documentation/docs/guides/
context-engineering/hooks.md; the runner crates/goose/src/hooks/mod.rs).

A plugin is a directory ``~/.agents/plugins/<name>/`` (user) or ``<project>/.agents/plugins/<name>/`` with a
``plugin.json`` manifest and ``hooks/hooks.json``: ``{"hooks": {"PreToolUse": [{"matcher": REGEX, "hooks":
[{"type": "command", "command": …, "timeout": 10}]}]}}`` (timeout in seconds, default 30). Ours is
``merge-hold``. Stdin: ``event``, ``session_id``, ``matcher_context``, ``tool_name`` (the shell is
``developer__shell``, ``tool_input.command``; extension tools ``<extension>__<tool>``), ``tool_input``,
``working_dir``. Deny: exit 2 with the reason on stderr on a blockable event (or exit 0 with
``{"decision": "block", "reason": R}``); a hook that fails or times out is logged and the call goes on
(fail open). SessionStart: stdout that is not JSON becomes context. A plugin listed in ``disabledPlugins``
(goose settings) is skipped.
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, mcp, notice_exit_1, proceed, shell, stderr_deny, to_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

NAME = "goose"
SCOPES = {"user": "~/.agents/plugins/merge-hold/hooks/hooks.json",
          "project": ".agents/plugins/merge-hold/hooks/hooks.json"}
TIMEOUT_S = 10
SHELL_TOOL = "developer__shell"
FAILS_OPEN = "goose lets a tool call run when its hook fails or times out"


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    name, args = payload.get("tool_name"), payload.get("tool_input")
    ids: dict[str, Any] = {"cwd": payload.get("working_dir", payload.get("cwd")),
                           "session_id": payload.get("session_id")}
    if name == SHELL_TOOL and isinstance(args, dict):
        return shell(args.get("command"), **ids)
    if isinstance(name, str) and "__" in name:
        server, _, tool = name.partition("__")
        return mcp(server, tool, args, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def context(said: str) -> Answer:
    """SessionStart: plain stdout is added as context."""
    return (0, said.rstrip("\n") + "\n", "")


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    gated = matchers[1].replace("^mcp__.*__", "^.*__", 1)  # goose names extension tools `<extension>__<tool>`
    return groups("PreToolUse", (f"^{SHELL_TOOL}$", gated), handler(guard, TIMEOUT_S))


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import session_start

    return session_start(command, TIMEOUT_S)


def companion_files(path: Path) -> dict[str, str]:
    """The plugin's manifest, ``plugin.json``, beside ``hooks/``."""
    manifest = {"name": "merge-hold", "version": "1.0.0",
                "description": "merge-hold guard (written by `merge-hold hook install --agent goose`)"}
    return {str(path.parent.parent / "plugin.json"): to_json(manifest) + "\n"}
