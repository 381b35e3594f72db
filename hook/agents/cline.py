"""Cline: a ``PreToolUse`` executable in a hooks directory (cline/cline src/core/hooks).

A hook is an executable file named after its event: ``.clinerules/hooks/PreToolUse`` (project) or
``~/Documents/Cline/Hooks/PreToolUse`` (user); both run, and hooks must be enabled in Cline's settings.
Ours is a short ``sh`` script that runs the guard (`file_text`); a ``PreToolUse`` that is not ours is
left alone and the install refuses, naming it.

Stdin: ``clineVersion``, ``hookName``, ``timestamp``, ``taskId``, ``workspaceRoots``, ``userId``,
``preToolUse: {toolName, parameters}``. Shell commands are ``execute_command`` (``parameters.command``);
MCP tools are ``use_mcp_tool`` (``server_name``, ``tool_name``, ``arguments`` as a JSON string).

Answer: JSON on stdout, honoured whatever the exit status: ``{"cancel": true, "errorMessage": R}``
denies, and Cline then **cancels the whole task** (there is no per-call deny). A non-zero exit without
JSON is a hook error and fails open, so every answer, allow included, is JSON. Timeout: 30 s, fixed.
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, first_root, mcp, shell, text, to_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cline"
SCOPES = {"project": ".clinerules/hooks/PreToolUse", "user": "~/Documents/Cline/Hooks/PreToolUse"}
FILE_MODE = 0o755
_ALLOW = '{"cancel":false}\n'


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    pre = payload.get("preToolUse")
    if not isinstance(pre, dict):
        return None
    tool, params = pre.get("toolName", pre.get("tool")), pre.get("parameters")
    if not isinstance(params, dict):
        return None
    ids: dict[str, Any] = {"cwd": first_root(payload.get("workspaceRoots")), "session_id": payload.get("taskId")}
    if tool == "execute_command":
        return shell(params.get("command"), **ids)
    if tool == "use_mcp_tool":
        return mcp(text(params.get("server_name")), params.get("tool_name"), params.get("arguments"), **ids)
    return None


def allow() -> Answer:
    return (0, _ALLOW, "")


def deny(reason: str) -> Answer:
    return (0, to_json({"cancel": True, "errorMessage": reason.strip()}) + "\n", "")


def trouble(notice: str) -> Answer:
    return (0, _ALLOW, notice)


def file_text(guard: str) -> str:
    """The whole hook file (Cline runs an executable, not a configured command line)."""
    return ("#!/bin/sh\n# merge-hold guard for Cline (written by `merge-hold hook install --agent cline`)\n"
            f"exec {guard}\n")
