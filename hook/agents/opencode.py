"""opencode: a plugin file whose ``tool.execute.before`` runs the guard (opencode has no process hooks).

A JS plugin in ``.opencode/plugin/`` (project) or ``~/.config/opencode/plugin/`` (user) is loaded at
start-up; ``"tool.execute.before": async (input: {tool, sessionID, callID}, output: {args})`` runs before
every tool call, and throwing refuses the call with the error as the tool's result. Ours (`file_text`)
sends ``{tool, sessionID, callID, args, cwd}`` to the guard on stdin and throws ``Error(stderr)`` when it
exits 2; any other exit lets the call run (the guard's own trouble is printed, not enforced).

Tool names: ``bash`` (``args.command``, ``args.workdir``); MCP tools ``<server>_<tool>``. Known gaps
in opencode itself: MCP calls were not hooked before its issue #2319, and ``batch`` sub-calls bypass
plugins (#5894).
"""

from __future__ import annotations

from hook.agents.call import ToolCall, mcp, notice_exit_1, proceed, shell, split_mcp_name, stderr_deny, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "opencode"
SCOPES = {"project": ".opencode/plugin/merge-hold.js", "user": "~/.config/opencode/plugin/merge-hold.js"}
FILE_MODE = 0o644
TIMEOUT_MS = 10_000
_PLUGIN = """\
// merge-hold guard for opencode (written by `merge-hold hook install --agent opencode`).
// Runs the guard before every tool call; when it exits 2, the call is refused with its reason.
import {{ spawn }} from "node:child_process";

const GUARD = {guard};
const TIMEOUT_MS = {timeout_ms};

function runGuard(call) {{
  return new Promise((resolve) => {{
    const child = spawn("/bin/sh", ["-c", GUARD], {{ stdio: ["pipe", "ignore", "pipe"] }});
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.stderr.on("data", (chunk) => {{ stderr += chunk; }});
    child.on("error", (error) => {{ clearTimeout(timer); resolve({{ code: null, stderr: String(error) }}); }});
    child.on("close", (code) => {{ clearTimeout(timer); resolve({{ code, stderr }}); }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify(call));
  }});
}}

export const MergeHoldGuard = async ({{ directory }}) => ({{
  "tool.execute.before": async (input, output) => {{
    const call = {{ tool: input.tool, sessionID: input.sessionID, callID: input.callID,
                   args: output.args, cwd: directory }};
    const {{ code, stderr }} = await runGuard(call);
    if (code === 2) throw new Error(stderr.trim() || "merge-hold: blocked");
    if (code !== 0 && stderr.trim()) console.error(stderr.trim());
  }},
}});
"""


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    tool, args = payload.get("tool"), payload.get("args")
    if not isinstance(tool, str) or not isinstance(args, dict):
        return None
    ids: dict[str, Any] = {"session_id": payload.get("sessionID"), "tool_use_id": payload.get("callID")}
    cwd = text(payload.get("cwd"))
    if tool == "bash":
        workdir = text(args.get("workdir"))
        return shell(args.get("command"), cwd=workdir or cwd, **ids)
    if "_" in tool:
        server, name = split_mcp_name(tool, "_")
        return mcp(server, name, args, cwd=cwd, **ids)
    return None


allow, deny, trouble = proceed, stderr_deny, notice_exit_1


def file_text(guard: str) -> str:
    """The whole plugin file; the guard command line is embedded as a JS string literal (JSON)."""
    from hook.agents.call import to_json

    return _PLUGIN.format(guard=to_json(guard), timeout_ms=TIMEOUT_MS)
