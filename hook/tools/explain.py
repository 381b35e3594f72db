"""``merge-hold hook explain``: what the guard would see in a tool call, without reading any verdict.

Reads the same PreToolUse JSON as ``hook-guard`` on stdin and prints
``{"merges": [{"via", "repo", "pr", "branch"}], "lifts": [{…, "lift"}], "tampers": [{"via", "repo", "act"}],
"undetermined": bool}`` (design §5): the merges, the lifts of a hold, the acts that would weaken the gate;
``--verbose`` adds every field of each merge and the detector's notes. Exit 0 on success, 1 on unreadable
input, 64 on a bad option: never 2, which Claude Code reads as "block".
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hook.detect.model import Detection

USAGE = """usage: merge-hold hook explain [--verbose] [--agent NAME] < TOOL_CALL_JSON

Print the pull-request merges a Claude Code tool call would perform, the holds it would lift and
the acts that would weaken the gate, as the agent guard detects them, without reading any verdict:
{"merges": [...], "lifts": [...], "tampers": [{"via", "repo", "act"}], "undetermined": BOOL}.
Input: the PreToolUse JSON (tool_name, tool_input, cwd, ...), or with --agent the named agent's
hook input (codex, gemini, cursor, copilot, ...).

  -v, --verbose  also print push_target, host, undetermined and detail per merge, notes, and the branch
                 writes (pushes, contents API, MCP file tools) the guard checks against freezes
  --agent NAME   read NAME's hook input, as `hook-guard --agent NAME` does
  -h, --help     show this help
"""


class InputError(ValueError):
    """The stdin payload is not a PreToolUse tool call."""


def main(argv: list[str]) -> int:
    verbose = False
    agent = "claude"
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in ("-h", "--help"):
            sys.stdout.write(USAGE)
            return 0
        if arg in ("-v", "--verbose"):
            verbose = True
        elif arg == "--agent" and rest:
            agent = rest.pop(0)
        elif arg.startswith("--agent="):
            agent = arg.partition("=")[2]
        else:
            sys.stderr.write(f"merge-hold hook explain: unknown option {arg!r}\n\n{USAGE}")
            return 64
    try:
        detection = explain(sys.stdin.read(), os.environ, agent=agent)
    except InputError as exc:
        sys.stderr.write(f"merge-hold hook explain: {exc}\n")
        return 1
    sys.stdout.write(json.dumps(render(detection, verbose=verbose)) + "\n")
    return 0


def explain(raw: str, env: Mapping[str, str], *, agent: str = "claude") -> Detection:
    """Detection for one PreToolUse payload, or one hook input of ``agent`` (the guard's own reading)."""
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"stdin is not JSON ({exc.__class__.__name__}: {str(exc).splitlines()[0]})") from None
    if not isinstance(payload, dict):
        raise InputError("stdin JSON is not an object")
    if agent != "claude":
        return _explain_agent(agent, payload, env)
    tool_name = payload.get("tool_name")
    tool_input = payload.get("tool_input", {})
    if not isinstance(tool_name, str) or not tool_name:
        raise InputError("stdin JSON has no tool_name string")
    if not isinstance(tool_input, dict):
        raise InputError("tool_input is not an object")
    cwd = payload.get("cwd")
    from hook.detect.toolcall import detect

    return detect(tool_name, tool_input, cwd=cwd if isinstance(cwd, str) and cwd else None, env=env)


def _explain_agent(name: str, payload: dict[str, Any], env: Mapping[str, str]) -> Detection:
    from hook import agents
    from hook.agents.call import NotAToolCall
    from hook.detect.model import Detection
    from hook.detect.toolcall import detect

    try:
        call = agents.load(name).tool_call(payload)
    except (agents.UnknownAgent, NotAToolCall) as exc:
        raise InputError(str(exc)) from None
    if call is None:
        return Detection()
    return detect(call.tool_name, call.tool_input, cwd=call.cwd, env=env)


def render(detection: Detection, *, verbose: bool = False) -> dict[str, Any]:
    out = detection.to_json()
    if verbose:
        out["merges"] = [
            {**m.to_json(), "push_target": m.push_target, "host": m.host, "undetermined": m.undetermined,
             "detail": m.detail}
            for m in detection.merges
        ]
        out["notes"] = list(detection.notes)
        # what the guard also checks against the repo's freezes (a push into a freeze): pushes and other writes
        out["writes"] = [{"via": m.via, "repo": m.repo, "branch": m.writes if m.writes is not None else m.push_target,
                          "undetermined": m.undetermined}
                         for m in detection.gated if m.writes is not None or m.via == "git_push"]
    return out
