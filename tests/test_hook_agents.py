"""The guard for every coding agent (design §6, "Other agents"): each agent's stdin, in every documented
shape, becomes one tool call; a held merge is refused in that agent's own form and a free one allowed,
read back the way the agent reads answers (tests/agent_shapes.py); the guard's own trouble never blocks.

The guard runs as the agents run it: a subprocess with ``--agent NAME``, JSON on stdin, verdicts from a
real Redis.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from hook import agents
from hook.agents.call import ToolCall
from hook.spec import MAX_TIMEOUT_MS
from hook.tools.claude_settings import GUARD_MATCHERS
from tests.agent_shapes import AGENTS, BY_NAME, CALL, SESSION, Agent
from tests.hook_support import guard_argv, hold, record, store, write_spec

REPO = "acme/widgets"
HELD = "gh pr merge 5 --repo acme/widgets --squash"
FREE = "gh pr merge 6 --repo acme/widgets --squash"
HELD_ARGS = {"owner": "acme", "repo": "widgets", "pullNumber": 5, "merge_method": "squash"}
FREE_ARGS = {**HELD_ARGS, "pullNumber": 6}
SHELL_ROWS = [(a, shape) for a in AGENTS for shape in a.shell]
MCP_ROWS = [(a, shape) for a in AGENTS for shape in a.mcp]


def test_every_agent_has_a_row() -> None:
    assert [a.name for a in AGENTS] == list(agents.NAMES)
    with pytest.raises(agents.UnknownAgent):
        agents.load("hook.agents.call")


# -- stdin -> one tool call ------------------------------------------------------------------------------

@pytest.mark.parametrize(("agent", "shape"), SHELL_ROWS, ids=[f"{a.name}-{s}" for a, s in SHELL_ROWS])
def test_shell_shapes_normalise(agent: Agent, shape: str) -> None:
    call = agents.load(agent.name).tool_call(agent.shell[shape](HELD, "/work/widgets"))
    assert isinstance(call, ToolCall) and call.kind == "shell"
    assert (call.tool_name, call.command, call.cwd) == ("Bash", HELD, "/work/widgets")
    if agent.name not in ("kiro",):  # Kiro sends no session id
        assert call.session_id == SESSION


@pytest.mark.parametrize(("agent", "shape"), MCP_ROWS, ids=[f"{a.name}-{s}" for a, s in MCP_ROWS])
def test_mcp_shapes_normalise(agent: Agent, shape: str) -> None:
    call = agents.load(agent.name).tool_call(agent.mcp[shape]("github", "merge_pull_request", HELD_ARGS))
    assert isinstance(call, ToolCall) and call.kind == "mcp"
    server = "unknown" if agent.name == "cursor" else "github"  # Cursor does not name the server
    assert call.tool_name == f"mcp__{server}__merge_pull_request"
    assert call.tool_input == HELD_ARGS and call.command is None


ADVERSARIAL = [
    # (agent, stdin, the tool call it must be, or None for "nothing to judge")
    ("cursor", BY_NAME["cursor"].mcp["beforeMCPExecution"]("github", "get_pull_request", HELD_ARGS),
     ToolCall("mcp__unknown__get_pull_request", HELD_ARGS, cwd="/tmp", session_id=SESSION, tool_use_id="gen-1")),
    ("gemini", BY_NAME["gemini"].mcp["name only"]("my_gh_server", "merge_pull_request", HELD_ARGS),
     ToolCall("mcp__my_gh_server__merge_pull_request", HELD_ARGS, cwd="/tmp", session_id=SESSION)),
    ("gemini", BY_NAME["gemini"].mcp["name only"]("my_gh", "add_issue_comment", HELD_ARGS),
     ToolCall("mcp__my_gh__add_issue_comment", HELD_ARGS, cwd="/tmp", session_id=SESSION)),
    ("copilot", BY_NAME["copilot"].mcp["server-tool"]("github-mcp-server", "merge_pull_request", HELD_ARGS),
     ToolCall("mcp__github-mcp-server__merge_pull_request", HELD_ARGS, cwd="/tmp", session_id=SESSION)),
    ("opencode", BY_NAME["opencode"].mcp["server_tool"]("my_github", "merge_pull_request", HELD_ARGS),
     ToolCall("mcp__my_github__merge_pull_request", HELD_ARGS, session_id=SESSION, tool_use_id=CALL)),
    ("copilot", {"sessionId": "s", "toolName": "bash", "toolArgs": "{not json"}, None),
    ("copilot", {"sessionId": "s", "toolName": "powershell", "toolArgs": {"command": HELD}},
     ToolCall("PowerShell", {"command": HELD}, session_id="s")),
    ("codex", {**BY_NAME["codex"].shell["PreToolUse"](HELD, "/w"), "tool_name": "apply_patch"}, None),
    ("claude", {"tool_name": "Read", "tool_input": {"file_path": HELD}}, None),
    ("gemini", {"tool_name": "read_file", "tool_input": {"command": HELD}}, None),
    ("cursor", {"hook_event_name": "beforeReadFile", "file_path": "/x", "content": HELD}, None),
    ("windsurf", {"agent_action_name": "pre_read_code", "tool_info": {"file_path": HELD}}, None),
    ("cline", {"preToolUse": {"toolName": "read_file", "parameters": {"path": HELD}}}, None),
    ("kiro", {"tool_name": "fs_read", "tool_input": {"command": HELD}}, None),
    ("factory", {"tool_name": "Read", "tool_input": {"command": HELD}}, None),
    ("opencode", {"tool": "read", "args": {"command": HELD}}, None),
    ("cursor", {"hook_event_name": "beforeShellExecution", "command": 42}, None),
]


@pytest.mark.parametrize(("name", "stdin", "expected"), ADVERSARIAL,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(ADVERSARIAL)])
def test_adversarial_inputs(name: str, stdin: dict[str, Any], expected: ToolCall | None) -> None:
    assert agents.load(name).tool_call(stdin) == expected


# -- the answer, as each agent reads it ------------------------------------------------------------------

REASONS = ["acme/widgets#5 is on hold", 'a "quoted" reason\nwith a second line, a tab\t, ünïcode and \u2028',
           "  padded  \n"]


@pytest.mark.parametrize("agent", AGENTS, ids=[a.name for a in AGENTS])
@pytest.mark.parametrize("reason", REASONS)
def test_every_deny_is_well_formed_and_carries_the_reason(agent: Agent, reason: str) -> None:
    outcome = agent.reads(*agents.load(agent.name).deny(reason))
    assert outcome.blocked and reason.strip() in outcome.reason


@pytest.mark.parametrize("agent", AGENTS, ids=[a.name for a in AGENTS])
def test_allow_and_trouble_never_block(agent: Agent) -> None:
    module = agents.load(agent.name)
    assert not agent.reads(*module.allow()).blocked
    notice = "merge-hold: guard error (allowing): something\n"
    trouble = agent.reads(*module.trouble(notice))
    assert not trouble.blocked and trouble.reason == notice


def _timeouts_ms(name: str) -> list[int]:
    module = agents.load(name)
    if not hasattr(module, "hooks"):
        return [module.TIMEOUT_MS] if hasattr(module, "TIMEOUT_MS") else [30_000]  # Cline: fixed 30 s
    entries = [h for groups in module.hooks("g", "f", GUARD_MATCHERS).values() for e in groups
               for h in e.get("hooks", [e])]
    found = []
    for handler in entries:
        if "timeout_ms" in handler:
            found.append(handler["timeout_ms"])
        elif "timeoutSec" in handler:
            found.append(handler["timeoutSec"] * 1000)
        elif "timeout" in handler:  # seconds, except Gemini's, Qwen's and Auggie's milliseconds
            found.append(handler["timeout"] * (1 if name in ("gemini", "qwen", "auggie") else 1000))
    return found


@pytest.mark.parametrize("name", [n for n in agents.NAMES if n != "windsurf"])  # Windsurf has no timeout key
def test_registered_timeouts_leave_room_for_the_lookup_budget(name: str) -> None:
    """Most agents allow the call when the hook times out: the guard's whole lookup budget (the spec's
    largest ``timeout_ms``) must end well before the agent gives up on it."""
    timeouts = _timeouts_ms(name)
    assert timeouts and all(MAX_TIMEOUT_MS < t <= 30_000 for t in timeouts), timeouts


# -- the guard, run as each agent runs it ----------------------------------------------------------------

@pytest.fixture()
def spec(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> Path:
    store(redis_client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "waiting for the DB migration")]))
    store(redis_client, REPO, 6, record(REPO, 6, []))
    return write_spec(tmp_path, redis_url)


def run_guard(spec: Path, name: str, stdin: dict[str, Any]) -> tuple[int, str, str]:
    done = subprocess.run([*guard_argv(spec)[:-2], "--agent", name, "--config", str(spec)],
                          input=json.dumps(stdin).encode(), capture_output=True, timeout=30, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize(("agent", "shape"), SHELL_ROWS, ids=[f"{a.name}-{s}" for a, s in SHELL_ROWS])
def test_held_shell_merge_is_refused_in_the_agents_form(spec: Path, tmp_path: Path, agent: Agent,
                                                         shape: str) -> None:
    held = agent.reads(*run_guard(spec, agent.name, agent.shell[shape](HELD, str(tmp_path))))
    assert held.blocked and "acme/widgets#5 is on hold" in held.reason and "@alice" in held.reason
    for command in (FREE, "ls -la && git status", "echo 'gh pr merge 5 --repo acme/widgets'"):
        answer = run_guard(spec, agent.name, agent.shell[shape](command, str(tmp_path)))
        assert answer == agents.load(agent.name).allow(), (command, answer)


@pytest.mark.parametrize(("agent", "shape"), MCP_ROWS, ids=[f"{a.name}-{s}" for a, s in MCP_ROWS])
def test_held_mcp_merge_is_refused_in_the_agents_form(spec: Path, agent: Agent, shape: str) -> None:
    held = agent.reads(*run_guard(spec, agent.name, agent.mcp[shape]("github", "merge_pull_request", HELD_ARGS)))
    assert held.blocked and "acme/widgets#5 is on hold" in held.reason
    free = run_guard(spec, agent.name, agent.mcp[shape]("github", "merge_pull_request", FREE_ARGS))
    assert free == agents.load(agent.name).allow()


def test_records_carry_the_agents_session(spec: Path, tmp_path: Path) -> None:
    run_guard(spec, "windsurf", BY_NAME["windsurf"].shell["pre_run_command"](HELD, str(tmp_path)))
    (line,) = (tmp_path / "records.jsonl").read_text().splitlines()
    rec = json.loads(line)
    assert (rec["session_id"], rec["tool_use_id"], rec["tool_name"]) == (SESSION, CALL, "Bash")
    assert (rec["repo"], rec["pr"], rec["decision"]) == (REPO, 5, "block")


@pytest.mark.parametrize("agent", AGENTS, ids=[a.name for a in AGENTS])
def test_the_guards_own_trouble_lets_the_call_run(tmp_path: Path, agent: Agent) -> None:
    """A missing spec, or input that is not this agent's: the agent proceeds, and the user is told."""
    missing = tmp_path / "no-such-spec.json"
    outcome = agent.reads(*run_guard(missing, agent.name, next(iter(agent.shell.values()))(HELD, "/tmp")))
    assert not outcome.blocked and "merge-hold: guard error (allowing)" in outcome.reason


def test_an_unknown_agent_is_an_error_not_a_block(spec: Path) -> None:
    code, out, err = run_guard(spec, "vim", {"tool_name": "Bash", "tool_input": {"command": HELD}})
    assert (code, out) == (1, "") and "unknown agent 'vim'" in err


# -- start-up cost ---------------------------------------------------------------------------------------

ALSO_LOADS = {"codex": {"claude"}, "copilot": {"claude"}, "qwen": {"gemini"}, "vscode": {"claude"},
              "copilot-app": {"copilot", "claude"}, "qoder": {"claude"}, "kimi": {"claude"}}
"""Agent modules that reuse another's reader."""


@pytest.mark.parametrize("agent", AGENTS, ids=[a.name for a in AGENTS])
def test_the_guard_loads_only_the_named_agent(spec: Path, agent: Agent) -> None:
    """A non-merge call pays for its own agent's module and nothing else (design §7)."""
    from tests.test_hook_imports import NOT_FOR_NON_MERGES, fast, imported

    argv = fast(spec)
    code, names = imported([*argv[:-2], "--agent", agent.name, *argv[-2:]],
                           next(iter(agent.shell.values()))("ls -la && git status", "/tmp"))
    assert code == agents.load(agent.name).allow()[0]
    loaded = {n.rsplit(".", 1)[1] for n in names if n.startswith("hook.agents.")}
    assert loaded == {"call", agent.name.replace("-", "_")} | {
        n.replace("-", "_") for n in ALSO_LOADS.get(agent.name, set())}
    assert names & NOT_FOR_NON_MERGES == set()


@pytest.mark.parametrize("agent", AGENTS, ids=[a.name for a in AGENTS])
def test_explain_reads_each_agents_input(agent: Agent) -> None:
    stdin = json.dumps(next(iter(agent.shell.values()))(HELD, "/tmp"))
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "explain", "--agent", agent.name],
                          input=stdin, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["merges"] == [{"via": "gh_pr_merge", "repo": REPO, "pr": 5, "branch": None}]


@pytest.mark.parametrize(("agent", "shape"), MCP_ROWS, ids=[f"{a.name}-{s}" for a, s in MCP_ROWS])
def test_an_agent_lifting_a_hold_over_mcp_is_refused(spec: Path, agent: Agent, shape: str) -> None:
    """`/unhold` posted through an MCP comment tool is a person's act, whichever agent tries it."""
    args = {"owner": "acme", "repo": "widgets", "issue_number": 5, "body": "/unhold"}
    outcome = agent.reads(*run_guard(spec, agent.name, agent.mcp[shape]("github", "add_issue_comment", args)))
    assert outcome.blocked and "acme/widgets#5" in outcome.reason
