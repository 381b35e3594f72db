"""Augment's Auggie CLI (and the Augment IDE extensions): ``PreToolUse`` hooks in ``settings.json``
(docs.augmentcode.com/cli/hooks and /cli/hooks-examples).

Files, highest precedence first: ``/etc/augment/settings.json`` — system-wide, for administrators, and it
"cannot be overridden by any other configuration source" — then ``.augment/settings.local.json`` and
``.augment/settings.json`` (project, CLI) and ``~/.augment/settings.json`` (user). ``{"hooks": {"PreToolUse":
[{"matcher": "launch-process", "hooks": [{"type": "command", "command": "/etc/augment/hooks/x.sh",
"timeout": 5000}]}]}}``: the command is the path of a shell script (``.sh``), the timeout in milliseconds
(default 60000), the matcher a case-sensitive regex on the tool name (``mcp:*`` every MCP tool). So ours is a
script beside the settings file, ``hooks/merge-hold-guard.sh``, that execs the guard.

Stdin: ``tool_name`` (the shell tool is ``launch-process``, its ``tool_input.command``), ``tool_input``, and
the workspace. Deny: exit 2 with the reason on stderr (the documented example). The guard's own trouble
exits 0 with a notice on stderr. No SessionStart context form is documented: none is installed.
"""

from __future__ import annotations

from hook.agents.call import ToolCall, first_root, mcp, notice_exit_0, proceed, shell, stderr_deny, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "auggie"
SCOPES = {"user": "~/.augment/settings.json", "project": ".augment/settings.json",
          "local": ".augment/settings.local.json", "managed": "/etc/augment/settings.json"}
SHELL_TOOL = "launch-process"
TIMEOUT_MS = 10_000
GUARD_SCRIPT = "merge-hold-guard.sh"
SESSION_SCRIPT = "merge-hold-session.sh"


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    name, args = payload.get("tool_name"), payload.get("tool_input")
    ids: dict[str, Any] = {"cwd": text(payload.get("cwd")) or first_root(payload.get("workspace_roots")),
                           "session_id": payload.get("conversation_id", payload.get("session_id"))}
    if name == SHELL_TOOL and isinstance(args, dict):
        return shell(args.get("command"), **ids)
    if isinstance(name, str) and name.startswith("mcp:"):
        from hook.detect.mcp import is_gated_tool

        tool, _, server = name[len("mcp:"):].partition("_")
        parts = name[len("mcp:"):].split("_")
        for at in range(len(parts), 0, -1):  # the tool's own name first: `merge_pull_request_github`
            if is_gated_tool(f"mcp__s__{'_'.join(parts[:at])}"):
                tool, server = "_".join(parts[:at]), "_".join(parts[at:])
                break
        return mcp(server, tool, args, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_0


def scripts(guard: str, session: str | None) -> dict[str, str]:
    """The script Auggie runs (it takes a script path, not a command line)."""
    return {GUARD_SCRIPT: "#!/bin/sh\n# merge-hold guard for Auggie (written by `merge-hold hook install --agent "
                          f"auggie`)\nexec {guard}\n"}


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("PreToolUse", (SHELL_TOOL, "mcp:*"), handler(guard, TIMEOUT_MS))
