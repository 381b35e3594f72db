"""`merge-hold hook settings --config SPEC`: the Claude Code settings JSON that registers the guard.

The block (Claude Code's documented hooks shape: event -> matcher groups -> command hooks)::

    {"hooks": {
       "PreToolUse": [
         {"matcher": "Bash|PowerShell|Monitor",
          "hooks": [{"type": "command", "command": "<guard> --config <SPEC>", "timeout": 10}]},
         {"matcher": "<every MCP tool the detector gates: `hook.detect.mcp.claude_matcher()`>",
          "hooks": [{"type": "command", "command": "<guard> --config <SPEC>", "timeout": 10}]}],
       "SessionStart": [
         {"hooks": [{"type": "command", "command": "<session-start> --config <SPEC>", "timeout": 10}]}],
       "ConfigChange": [
         {"matcher": "user_settings|project_settings|local_settings",
          "hooks": [{"type": "command", "command": "<merge-hold> hook config-change --config <SPEC>"}]}],
       "SessionEnd": [
         {"hooks": [{"type": "command", "command": "<merge-hold> hook fold --config <SPEC>"}]}]}}

SessionStart tells the agent which PRs of its repository are held and which branches are frozen
(`hook.session`, launched like the guard); ConfigChange blocks a settings change that removes or weakens
these entries (`hook.configguard`).

The command lines carry only the spec path (shell-quoted): no hold data, no secrets, no environment.

``<guard>`` is, by default, the *fast launcher*: ``<python> -I -S -c '<put the package root on
sys.path; run hook.guard>'``. Measured by `bench/bench_hook.py` on this kind of machine (medians
of 40 alternating runs), the console script ``merge-hold hook-guard`` takes about 2x the ``python -I
-c pass`` floor on a non-merge command (``site`` processes the venv's ``.pth`` files, pip's wrapper
imports ``re``), against a 1.3x budget, where the fast launcher takes 0.9x (1.5x on a held merge
with a Redis verdict, against 2.5x); the fast launcher skips ``site`` (``-S``), ignores the
environment and user site (``-I``), and puts back only the directory that holds ``hook`` and ``core``.
``--console-script`` emits ``<merge-hold> hook-guard`` instead (it works identically, just slower).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from hook.agents import claude as claude_agent
from hook.detect.mcp import claude_matcher

SHELL_MATCHER = "Bash|PowerShell|Monitor"
"""`hook.detect.prefilter.SHELL_TOOLS`, as Claude Code's exact-names list."""
GUARD_MATCHERS = (SHELL_MATCHER, claude_matcher())
"""Derived from the detector's MCP tool list (merge, auto-merge, enqueue, lifts): `hook.detect.mcp`."""
GUARD_TIMEOUT_S = 10
"""Claude Code kills the hook after this; the guard's own lookup budget (`timeout_ms`) is far below it."""


def package_root() -> str:
    """The directory that holds the ``hook`` and ``core`` packages (the checkout, or site-packages)."""
    import hook

    return str(Path(hook.__file__).resolve().parent.parent)


# What the guard's slow path imports from outside the standard library (hook/shell/treesitter.py).
SLOW_PATH_PACKAGES = ("tree_sitter", "tree_sitter_bash")


def launcher_path(root: str | None = None) -> list[str]:
    """The directories the ``-I -S`` launcher appends to ``sys.path``: the package root, then wherever
    the slow path's packages live. ``-S`` drops site-packages, and an editable install (``make
    install``) puts the package root in the checkout while tree-sitter stays in site-packages."""
    import importlib.util

    dirs = [root or package_root()]
    for name in SLOW_PATH_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)  # locates without importing
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin is None:
            continue  # not installed: the guard then judges such text undetermined
        origin = Path(spec.origin).resolve()  # .../site-packages/tree_sitter/__init__.py (or a .py module)
        where = str(origin.parent.parent if spec.submodule_search_locations else origin.parent)
        if where not in dirs:
            dirs.append(where)
    return dirs


def fast_guard_command(python: str | None = None, root: str | None = None) -> str:
    return fast_command("hook.guard", python, root)


def fast_command(module: str, python: str | None = None, root: str | None = None) -> str:
    """The fast launcher of ``module``'s ``launch()``: the guard, and the SessionStart hook (`hook.session`)."""
    # Appended, not prepended: when a directory is site-packages, nothing in it may shadow the
    # standard library. A JSON list is a Python literal too, and its double quotes keep the
    # shell-quoted command readable.
    code = (f"import sys;sys.path.extend({json.dumps(launcher_path(root))});"
            f"from {module} import launch;launch()")
    return shlex.join([python or sys.executable, "-I", "-S", "-c", code])


def merge_hold_command() -> str:
    """How to run ``merge-hold`` from a hook: the console script beside this interpreter, else ``-m``."""
    script = Path(sys.executable).parent / "merge-hold"
    if script.is_file():
        return shlex.quote(str(script))
    return shlex.join([sys.executable, "-m", "merge_hold.cli"])


def settings_block(spec_path: str, command: str, *, guard: str | None = None,
                   session: str | None = None) -> dict[str, Any]:
    """The hooks block. ``command`` runs ``merge-hold`` (already shell-quoted); ``guard`` runs the guard
    (default ``<command> hook-guard``) and ``session`` the SessionStart hook (default ``<command> hook
    session-start``). All get ``--config <spec_path>`` appended, shell-quoted."""
    spec = shlex.quote(spec_path)
    guard_line = f"{guard or f'{command} hook-guard'} --config {spec}"
    guard_hook = {"type": "command", "command": guard_line, "timeout": GUARD_TIMEOUT_S}
    session_line = f"{session or f'{command} hook session-start'} --config {spec}"
    return {
        "hooks": {
            "PreToolUse": [{"matcher": m, "hooks": [dict(guard_hook)]} for m in GUARD_MATCHERS],
            "SessionStart": [{"hooks": [{"type": "command", "command": session_line, "timeout": GUARD_TIMEOUT_S}]}],
            "ConfigChange": [{"matcher": CONFIG_MATCHER, "hooks": [
                {"type": "command", "command": f"{command} hook config-change --config {spec}"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": f"{command} hook fold --config {spec}"}]}],
        }
    }


CONFIG_MATCHER = claude_agent.CONFIG_MATCHER
"""The ConfigChange sources Claude Code lets a hook block (``policy_settings`` cannot be blocked)."""


def is_ours(hook_command: object) -> bool:
    """Whether a settings hook command is one of ours (what uninstall removes, install replaces)."""
    if not isinstance(hook_command, str):
        return False
    return ("from hook.guard import " in hook_command  # `launch` now, `main` in older installs
            or "from hook.session import " in hook_command
            or " hook-guard --config" in hook_command
            or " hook-guard --agent " in hook_command
            or " hook session-start " in hook_command
            or " hook config-change --config" in hook_command
            or " hook fold --config" in hook_command
            # Auggie runs a script of ours, not a command line (`hook.agents.auggie`)
            or hook_command.endswith("/hooks/merge-hold-guard.sh"))


def block_for(spec_path: str, *, console_script: bool = False) -> dict[str, Any]:
    """The block for this installation: absolute spec path, fast launcher unless asked otherwise."""
    absolute = str(Path(spec_path).expanduser().absolute())
    command = merge_hold_command()
    return settings_block(absolute, command, guard=None if console_script else fast_guard_command(),
                          session=None if console_script else fast_command("hook.session"))


def main(argv: list[str]) -> int:
    from foundation.cliargs import ArgumentParser

    parser = ArgumentParser(prog="merge-hold hook settings",
                            description="print the Claude Code settings JSON that registers the guard")
    parser.add_argument("--config", required=True, metavar="SPEC", help="the guard's spec file")
    parser.add_argument("--console-script", action="store_true",
                        help="run the guard as `merge-hold hook-guard` (slower start-up)")
    args = parser.parse_args(argv)
    print(json.dumps(block_for(args.config, console_script=args.console_script), indent=2))
    return 0
