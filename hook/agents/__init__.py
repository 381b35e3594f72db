"""The coding agents the guard serves (design §6, "Other agents"): one module per agent.

Each module is the whole contract with its agent, as that agent documents it (its docstring says
where from; the table is in docs/hook.md):

- ``tool_call(payload) -> ToolCall | None``: the agent's hook stdin as one tool call in the guard's
  vocabulary (`hook.agents.call`), or None for a call with nothing to judge (it is allowed);
- ``allow()``, ``deny(reason)``, ``trouble(notice)``: the answer as ``(exit status, stdout, stderr)``,
  in the form that makes the agent proceed, refuse with the reason shown to the model, or proceed
  while telling the user the guard had a problem (the guard fails open on its own errors);
- ``SCOPES`` (scope -> configuration file; a tuple: the first that exists, else the last) and either
  ``hooks(guard, fold, matchers)`` (event -> entries that `hook.tools.agent_files` merges into that
  file; ``matchers`` are Claude Code's, for agents that name tools as it does) or ``file_text(guard)``
  (a whole file that is ours: a script or a plugin) with ``FILE_MODE``; ``NEW_FILE`` (optional) is the
  skeleton of a configuration file that does not exist yet;
- optionally: ``session_hooks(command)`` (the SessionStart hook, `hook.session`) and ``context(text)`` when the
  agent takes its context in another form than Claude Code's ``additionalContext``; ``config_hooks(command)``
  (Claude Code's ConfigChange); ``scripts(guard, session)`` for an agent that runs script files only;
  ``companion_files(path)`` (a plugin's manifest); ``FAILS_OPEN`` (what `doctor` says on its row).

What agents share is written once: the answers told by the exit status alone (`hook.agents.call`:
``allow, deny, trouble = proceed, stderr_deny, notice_exit_1``) and entries in Claude Code's settings
format (`hook.agents.entries`, loaded by installs only).

Adding an agent is one module here, one name in `NAMES`, one row in tests/agent_shapes.py (its input
shapes and how it reads answers) and its files in tests/test_hook_agents_install.py.
Nothing is imported at load time: the guard loads only the module its ``--agent`` names.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

NAMES = ("claude", "codex", "gemini", "cursor", "copilot", "windsurf", "cline", "factory", "kiro", "qwen",
         "opencode", "vscode", "copilot-app", "auggie", "qoder", "kimi", "goose")
DEFAULT = "claude"


class UnknownAgent(ValueError):
    pass


def load(name: str) -> ModuleType:
    """The agent's module; raises `UnknownAgent` for a name not in `NAMES`."""
    if name not in NAMES:
        raise UnknownAgent(f"unknown agent {name!r} (known: {', '.join(NAMES)})")
    import sys

    module_name = f"hook.agents.{name.replace('-', '_')}"
    __import__(module_name)
    return sys.modules[module_name]
