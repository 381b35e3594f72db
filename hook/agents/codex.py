"""OpenAI Codex CLI: ``PreToolUse`` hooks, Claude Code's shape (codex-rs/hooks).

Stdin: ``session_id``, ``turn_id``, ``cwd``, ``tool_name`` (``Bash``; MCP tools ``mcp__<server>__<tool>``
with their raw arguments), ``tool_input``, ``tool_use_id``. Deny: exit 0 with stdout holding exactly
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": R}}``; the model sees ``Command blocked by PreToolUse hook: R``. Codex checks
that output against a schema with ``additionalProperties: false`` and treats anything else as a *failed*
hook, which does not block (it fails open): so nothing else is ever printed on stdout, and the tests
parse the answer against that schema. Exit 2 blocks only with non-empty stderr, and was seen classed
"Failed" on one platform: the JSON form is the reliable one. Timeout in seconds (default 600).

Files: ``.codex/hooks.json`` (project; Codex reads a project's ``.codex/`` only in a trusted project,
``[projects."<git root>"] trust_level = "trusted"`` in ``$CODEX_HOME/config.toml``, or else skips it
with one warning line, ``--dangerously-bypass-hook-trust`` or not: `hook.tools.codex_trust` says so at
install), ``~/.codex/hooks.json`` (``$CODEX_HOME/hooks.json`` when that is set), and for administrators
``/etc/codex/requirements.toml``, whose ``[hooks]`` are trusted by policy and cannot be turned off in
``/hooks`` (``allow_managed_hooks_only = true`` there also silences everyone else's). A user or project hook runs
only once it is trusted (reviewed in ``/hooks``; Codex keeps ``[hooks.state."<file>:pre_tool_use:<group>:
<handler>"] trusted_hash`` in ``config.toml``) or under ``--dangerously-bypass-hook-trust``; until then
``codex exec`` skips it silently. Checked with the real CLI 0.171.0 (tests/test_agent_clis.py): the
stdin, ``tool_name: "Bash"``, the deny form, and ``Command blocked by PreToolUse hook: R. Command: C``.
"""

from __future__ import annotations

from hook.agents.call import Answer, ToolCall, notice_exit_0, proceed, to_json
from hook.agents.claude import tool_call as claude_tool_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "codex"
SCOPES = {
    "project": ".codex/hooks.json",
    "user": "~/.codex/hooks.json",
    "managed": "/etc/codex/requirements.toml",
}
HOME_ENV = ("CODEX_HOME", "~/.codex")
"""Codex reads its user files from ``$CODEX_HOME`` when that is set (`hook.tools.agent_files.target`)."""
TIMEOUT_S = 10
TRUST_NOTE = ("Codex runs this hook only once the hook itself is trusted: review it in `/hooks` (again after "
              "every change), start automated sessions with --dangerously-bypass-hook-trust, or install with "
              "--scope managed; until then Codex skips it without a word")
"""Said after a user or project install (`hook.tools.install`): an untrusted hook is no guard at all."""


def tool_call(payload: dict[str, Any]) -> ToolCall | None:
    return claude_tool_call(payload)


allow, trouble = proceed, notice_exit_0


def deny(reason: str) -> Answer:
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                     "permissionDecisionReason": reason.strip() or "merge-hold: blocked"}}
    return (0, to_json(output) + "\n", "")


def hooks(guard: str, fold: str, matchers: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    from hook.agents.entries import groups, handler

    return groups("PreToolUse", matchers, handler(guard, TIMEOUT_S))


def session_hooks(command: str) -> dict[str, list[dict[str, Any]]]:
    """SessionStart: ``hookSpecificOutput.additionalContext`` (codex-rs/hooks/schema/generated/
    session-start.command.output.schema.json), as Claude Code's (`hook.session.claude_context`)."""
    from hook.agents.entries import session_start

    return session_start(command, TIMEOUT_S)
