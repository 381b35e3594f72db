"""Each agent's hook input in its documented shapes, and its answer read back the way that agent reads it.

One row per agent (`AGENTS`): how it sends a shell command and an MCP tool call (every documented dialect),
and `Reads`: what the agent does with the guard's ``(exit status, stdout, stderr)``. The readers are
strict where the agent fails open on a malformed answer (Codex checks a schema, Cursor and Cline parse
JSON, Gemini needs a non-empty reason): an answer they would not accept fails the test instead of
passing as "allowed". Sources: docs/hook.md's agent table and each `hook.agents` module.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.hook_support import payload as claude_payload

SESSION = "sess-0b6c3a1e"
CALL = "call-01"


@dataclass(frozen=True)
class Outcome:
    blocked: bool
    reason: str  # what reaches the model when blocked; the notice otherwise


Shape = Callable[[str, str], dict[str, Any]]
"""(command, cwd) -> the agent's stdin for a shell call of ``command`` in ``cwd``."""
McpShape = Callable[[str, str, dict[str, Any]], dict[str, Any]]
"""(server, tool, arguments) -> the agent's stdin for that MCP tool call."""


@dataclass(frozen=True)
class Agent:
    name: str
    shell: dict[str, Shape]
    mcp: dict[str, McpShape]
    reads: Callable[[int, str, str], Outcome]


# -- readers ---------------------------------------------------------------------------------------------

def exit_2_stderr(code: int, out: str, err: str) -> Outcome:
    """Claude Code, Qwen Code, Factory, Kiro, Windsurf: exit 2 blocks with stderr; other exits proceed."""
    if code == 2:
        assert err.strip(), "exit 2 with an empty stderr gives the model no reason"
        return Outcome(True, err)
    assert not out.strip() or code != 0, f"unexpected stdout on allow: {out!r}"
    return Outcome(False, err)


def gemini_reads(code: int, out: str, err: str) -> Outcome:
    """Gemini CLI: ``stdout.trim() || stderr.trim()`` is the output; exit 0 + ``{"decision": "deny"}`` or
    exit >= 2 with text denies; exit 2 with no output at all *allows*."""
    text = out.strip() or err.strip()
    if code == 0:
        if out.strip():
            decision = json.loads(out)
            if decision.get("decision") in ("deny", "block"):
                return Outcome(True, decision.get("reason", ""))
        return Outcome(False, err)
    if code >= 2:
        assert text, "Gemini CLI allows an exit 2 that prints nothing"
        return Outcome(True, text)
    return Outcome(False, err)


_CODEX_TOP = {"continue", "hookSpecificOutput", "stopReason", "suppressOutput", "systemMessage"}
_CODEX_SPECIFIC = {"additionalContext", "hookEventName", "permissionDecision", "permissionDecisionReason",
                   "updatedInput"}


def codex_reads(code: int, out: str, err: str) -> Outcome:
    """Codex: stdout must match pre-tool-use.command.output.schema.json (``additionalProperties: false``)
    and its parser's rules, or the hook is "Failed" and the call runs."""
    if code == 2:
        assert err.strip(), "Codex ignores exit 2 with an empty stderr"
        return Outcome(True, err)
    if code != 0 or not out.strip():
        return Outcome(False, err)
    data = json.loads(out)
    assert isinstance(data, dict) and set(data) <= _CODEX_TOP, f"not Codex's output schema: {out!r}"
    assert "continue" not in data and "stopReason" not in data and "suppressOutput" not in data
    specific = data.get("hookSpecificOutput")
    assert isinstance(specific, dict) and set(specific) <= _CODEX_SPECIFIC, out
    assert specific["hookEventName"] == "PreToolUse", out
    assert specific.get("permissionDecision") == "deny", "ask, or allow without updatedInput, is rejected"
    reason = specific.get("permissionDecisionReason")
    assert isinstance(reason, str) and reason.strip(), "a deny needs a non-empty reason"
    return Outcome(True, reason)


def cursor_reads(code: int, out: str, err: str) -> Outcome:
    """Cursor: exit 0 and one JSON object ``{"permission": …}``; anything unparsable fails open."""
    assert code == 0, f"Cursor reads a non-zero exit as a failed hook (exit {code})"
    data = json.loads(out)
    assert isinstance(data, dict) and data.get("permission") in ("allow", "deny", "ask"), out
    if data["permission"] == "allow":
        return Outcome(False, err)
    assert data["permission"] == "deny"
    assert data["user_message"] == data["agent_message"] and data["user_message"].strip(), out
    return Outcome(True, data["user_message"])


def copilot_reads(code: int, out: str, err: str) -> Outcome:
    """Copilot: stdout holds at most one JSON object, parsed on exit 0 only (the current reference: exit 2 is a
    warning for ``preToolUse``), whose ``permissionDecision: "deny"`` denies with ``permissionDecisionReason``
    (required); older releases also denied on any non-zero exit, so a non-zero exit here is never an allow."""
    data = json.loads(out) if out.strip() else {}  # json.loads refuses a second object
    assert isinstance(data, dict), out
    assert code == 0 or data.get("permissionDecision") != "deny", "a deny on a non-zero exit is read as a warning"
    denied = code != 0 or data.get("permissionDecision") == "deny"
    if denied:
        reason = data.get("permissionDecisionReason")
        assert isinstance(reason, str) and reason.strip(), f"a deny without a reason: {out!r}"
        return Outcome(True, reason)
    return Outcome(False, err)


def vscode_reads(code: int, out: str, err: str) -> Outcome:
    """VS Code (and the Copilot CLI reading the same file): exit 0 and ``hookSpecificOutput.permissionDecision``
    (the most restrictive wins); exit 2 blocks in VS Code only, so a deny must be the JSON form."""
    assert code == 0, f"a non-zero exit is a warning in VS Code and a deny in older Copilot CLIs (exit {code})"
    if not out.strip():
        return Outcome(False, err)
    specific = json.loads(out)["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse" and specific["permissionDecision"] == "deny", out
    assert specific["permissionDecisionReason"].strip() and specific["additionalContext"].strip(), out
    return Outcome(True, specific["additionalContext"])


def cline_reads(code: int, out: str, err: str) -> Outcome:
    """Cline: stdout JSON ``{"cancel": bool, "errorMessage"?}``, honoured whatever the exit status."""
    data = json.loads(out)
    assert isinstance(data, dict) and isinstance(data.get("cancel"), bool), out
    if data["cancel"]:
        assert data["errorMessage"].strip(), out
        return Outcome(True, data["errorMessage"])
    return Outcome(False, err)


def plugin_reads(code: int, out: str, err: str) -> Outcome:
    """opencode's plugin (`hook.agents.opencode`): exit 2 throws ``Error(stderr)``; anything else runs."""
    if code == 2:
        assert err.strip()
        return Outcome(True, err)
    return Outcome(False, err)


# -- shapes ----------------------------------------------------------------------------------------------

def _claude_mcp(server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return claude_payload(json.dumps(args), cwd="/tmp", tool_name=f"mcp__{server}__{tool}")


def _codex(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": SESSION, "turn_id": "turn-1", "transcript_path": "/root/.codex/sessions/x.jsonl",
            "cwd": cwd, "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": CALL}


def _gemini(command: str, cwd: str, *, tool: str = "run_shell_command", **extra: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": "/root/.gemini/tmp/chats/s.jsonl", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T10:58:24.629Z", "tool_name": tool,
            "tool_input": {"command": command, **extra}}


def _gemini_mcp(server: str, tool: str, args: dict[str, Any], *, context: bool = True) -> dict[str, Any]:
    data = {"session_id": SESSION, "cwd": "/tmp", "hook_event_name": "BeforeTool",
            "tool_name": f"mcp_{server}_{tool}", "tool_input": args}
    if context:
        data["mcp_context"] = {"server_name": server, "tool_name": tool, "command": "github-mcp-server stdio"}
    return data


def _qwen(command: str, cwd: str) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": "/root/.qwen/x.jsonl", "cwd": cwd,
            "hook_event_name": "PreToolUse", "timestamp": "2026-12-01T10:00:00Z", "permission_mode": "default",
            "tool_name": "run_shell_command", "tool_input": {"command": command, "is_background": False},
            "tool_use_id": CALL}


def _cursor_shell(command: str, cwd: str, *, given_cwd: str = "") -> dict[str, Any]:
    return {"conversation_id": SESSION, "generation_id": "gen-1", "hook_event_name": "beforeShellExecution",
            "workspace_roots": [cwd], "command": command, "cwd": given_cwd, "sandbox": False,
            "model": "auto", "cursor_version": "3.9.16"}


def _cursor_pre_tool(command: str, cwd: str) -> dict[str, Any]:
    return {"conversation_id": SESSION, "generation_id": "gen-1", "hook_event_name": "preToolUse",
            "workspace_roots": ["/elsewhere"], "tool_name": "Shell",
            "tool_input": {"command": command, "cwd": cwd, "timeout": 30000}, "tool_use_id": CALL}


def _cursor_mcp(server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"conversation_id": SESSION, "generation_id": "gen-1", "hook_event_name": "beforeMCPExecution",
            "workspace_roots": ["/tmp"], "tool_name": tool, "tool_input": json.dumps(args),
            "command": "gh pr merge 5 --repo acme/widgets"}  # the *server's* command: never read as shell


def _copilot(command: str, cwd: str, *, as_string: bool = True) -> dict[str, Any]:
    args = {"command": command, "description": "run it"}
    return {"sessionId": SESSION, "timestamp": 1764583200000, "cwd": cwd, "toolName": "bash",
            "toolArgs": json.dumps(args) if as_string else args}


def _copilot_pascal(command: str, cwd: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "session_id": SESSION, "timestamp": "2026-12-01T10:00:00Z",
            "cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command}}


def _windsurf(command: str, cwd: str) -> dict[str, Any]:
    return {"agent_action_name": "pre_run_command", "trajectory_id": SESSION, "execution_id": CALL,
            "timestamp": "2026-12-01T10:00:00Z", "model_name": "swe-1",
            "tool_info": {"command_line": command, "cwd": cwd}}


def _windsurf_mcp(server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"agent_action_name": "pre_mcp_tool_use", "trajectory_id": SESSION, "execution_id": CALL,
            "tool_info": {"mcp_server_name": server, "mcp_tool_name": tool, "mcp_tool_arguments": args}}


def _cline(tool: str, parameters: dict[str, Any], cwd: str) -> dict[str, Any]:
    return {"clineVersion": "3.40.0", "hookName": "PreToolUse", "timestamp": "1764583200000", "taskId": SESSION,
            "workspaceRoots": [cwd], "userId": "u-1", "preToolUse": {"toolName": tool, "parameters": parameters}}


def _factory(command: str, cwd: str, *, camel: bool = True) -> dict[str, Any]:
    ids = ({"sessionId": SESSION, "hookEventName": "PreToolUse", "transcriptPath": "/x.jsonl"} if camel
           else {"session_id": SESSION, "hook_event_name": "PreToolUse"})
    return {**ids, "cwd": cwd, "permissionMode": "auto-low", "tool_name": "Execute",
            "tool_input": {"command": command}}


def _kiro(command: str, cwd: str, *, tool: str = "execute_bash") -> dict[str, Any]:
    return {"hook_event_name": "preToolUse", "cwd": cwd, "tool_name": tool,
            "tool_input": {"command": command, "summary": "run"}}


def _opencode(command: str, cwd: str) -> dict[str, Any]:
    return {"tool": "bash", "sessionID": SESSION, "callID": CALL,
            "args": {"command": command, "description": "run"}, "cwd": cwd}


def _vscode(command: str, cwd: str, *, tool: str = "run_in_terminal") -> dict[str, Any]:
    return {"timestamp": "2026-12-01T10:30:00.000Z", "cwd": cwd, "sessionId": SESSION, "hookEventName": "PreToolUse",
            "transcript_path": None, "tool_name": tool,
            "tool_input": {"command": command, "explanation": "run it", "isBackground": False}, "tool_use_id": CALL}


def _auggie(command: str, cwd: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "conversation_id": SESSION, "workspace_roots": [cwd],
            "tool_name": "launch-process", "tool_input": {"command": command, "wait": True, "max_wait_seconds": 60}}


def _kimi(command: str, cwd: str, *, tool: str = "Bash") -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "session_id": SESSION, "cwd": cwd, "tool_name": tool,
            "tool_input": {"command": command}, "tool_call_id": CALL}


def _goose(command: str, cwd: str) -> dict[str, Any]:
    return {"event": "PreToolUse", "session_id": SESSION, "matcher_context": "developer__shell",
            "tool_name": "developer__shell", "tool_input": {"command": command}, "working_dir": cwd}


AGENTS = [
    Agent("claude", {"PreToolUse": lambda c, d: claude_payload(c, cwd=d, session_id=SESSION)},
          {"mcp__s__t": _claude_mcp},
          exit_2_stderr),
    Agent("codex", {"PreToolUse": _codex},
          {"mcp__s__t": lambda s, t, a: {**_codex("", "/tmp"), "tool_name": f"mcp__{s}__{t}", "tool_input": a}},
          codex_reads),
    Agent("gemini", {"BeforeTool": _gemini,
                     "dir_path": lambda c, d: _gemini(c, "/", dir_path=d.lstrip("/"))},
          {"mcp_context": _gemini_mcp, "name only": lambda s, t, a: _gemini_mcp(s, t, a, context=False)},
          gemini_reads),
    Agent("cursor", {"beforeShellExecution": _cursor_shell,
                     "with cwd": lambda c, d: _cursor_shell(c, "/elsewhere", given_cwd=d),
                     "preToolUse": _cursor_pre_tool},
          {"beforeMCPExecution": _cursor_mcp,
           "preToolUse MCP:": lambda s, t, a: {**_cursor_pre_tool("", "/tmp"), "tool_name": f"MCP:{t}",
                                               "tool_input": a}},
          cursor_reads),
    Agent("copilot", {"toolArgs string": _copilot, "toolArgs object": lambda c, d: _copilot(c, d, as_string=False),
                      "PascalCase": _copilot_pascal},
          {"server-tool": lambda s, t, a: {"sessionId": SESSION, "cwd": "/tmp", "toolName": f"{s}-{t}",
                                           "toolArgs": json.dumps(a)}},
          copilot_reads),
    Agent("windsurf", {"pre_run_command": _windsurf}, {"pre_mcp_tool_use": _windsurf_mcp}, exit_2_stderr),
    Agent("cline", {"execute_command": lambda c, d: _cline("execute_command", {"command": c,
                                                                               "requires_approval": "false"}, d)},
          {"use_mcp_tool": lambda s, t, a: _cline("use_mcp_tool", {"server_name": s, "tool_name": t,
                                                                  "arguments": json.dumps(a)}, "/tmp")},
          cline_reads),
    Agent("factory", {"camelCase": _factory, "snake_case": lambda c, d: _factory(c, d, camel=False)},
          {"mcp__s__t": lambda s, t, a: {**_factory("", "/tmp"), "tool_name": f"mcp__{s}__{t}", "tool_input": a}},
          exit_2_stderr),
    Agent("kiro", {"execute_bash": _kiro, "shell": lambda c, d: _kiro(c, d, tool="shell")},
          {"@server/tool": lambda s, t, a: {"hook_event_name": "preToolUse", "cwd": "/tmp",
                                            "tool_name": f"@{s}/{t}", "tool_input": a}},
          exit_2_stderr),
    Agent("qwen", {"PreToolUse": _qwen},
          {"mcp_context": lambda s, t, a: {**_gemini_mcp(s, t, a), "hook_event_name": "PreToolUse"}},
          exit_2_stderr),
    Agent("opencode", {"tool.execute.before": _opencode},
          {"server_tool": lambda s, t, a: {"tool": f"{s}_{t}", "sessionID": SESSION, "callID": CALL, "args": a}},
          plugin_reads),
    Agent("vscode", {"run_in_terminal": _vscode,
                     "Copilot CLI PascalCase": lambda c, d: {**_copilot_pascal(c, d), "tool_use_id": CALL}},
          {"mcp_server_tool": lambda s, t, a: {**_vscode("", "/tmp"), "tool_name": f"mcp_{s}_{t}", "tool_input": a}},
          vscode_reads),
    Agent("copilot-app", {"toolArgs string": _copilot, "PascalCase": _copilot_pascal},
          {"server-tool": lambda s, t, a: {"sessionId": SESSION, "cwd": "/tmp", "toolName": f"{s}-{t}",
                                           "toolArgs": json.dumps(a)}},
          copilot_reads),
    Agent("auggie", {"launch-process": _auggie},
          {"mcp:tool_server": lambda s, t, a: {"hook_event_name": "PreToolUse", "conversation_id": SESSION,
                                               "tool_name": f"mcp:{t}_{s}", "tool_input": a}},
          exit_2_stderr),
    Agent("qoder", {"PreToolUse": lambda c, d: claude_payload(c, cwd=d, session_id=SESSION)},
          {"mcp__s__t": _claude_mcp},
          exit_2_stderr),
    Agent("kimi", {"Bash": _kimi, "Shell (kimi-cli)": lambda c, d: _kimi(c, d, tool="Shell")},
          {"mcp__s__t": lambda s, t, a: {**_kimi("", "/tmp"), "tool_name": f"mcp__{s}__{t}", "tool_input": a}},
          exit_2_stderr),
    Agent("goose", {"developer__shell": _goose},
          {"extension__tool": lambda s, t, a: {**_goose("", "/tmp"), "tool_name": f"{s}__{t}", "tool_input": a}},
          exit_2_stderr),
]
BY_NAME = {agent.name: agent for agent in AGENTS}
