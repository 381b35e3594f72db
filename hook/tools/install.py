"""`merge-hold hook install|uninstall --config SPEC [--agent NAME] [--scope user|project|local|managed]`.

Merges the guard's hooks (`hook.tools.claude_settings` for Claude Code, `hook.agents` for the others; the
writing per kind of file is `hook.tools.agent_files`) into the agent's settings file for the scope — with the
SessionStart hook that tells the agent what is held and frozen, and Claude Code's ConfigChange hook that keeps
these entries from being removed or weakened — idempotently: our previous entries are removed first
(recognised by their command line, see `is_ours`), everything else — other hooks, other matcher groups, other
keys — is kept as it was, and a file that would not change is not written. Writes are atomic (a temporary
file in the same directory, then a rename), keep the file's mode, and refuse a file that is not a JSON object
rather than overwrite it. Uninstall removes only our entries and the groups and events they leave empty. Each install is
recorded in the install registry (`hook.tools.registry`): `merge-hold doctor` then reports an entry that
disappeared or was edited.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from hook.tools.config_files import SettingsError, with_block, without_ours

__all__ = ["SCOPES", "SettingsError", "main", "settings_path", "uninstall_main", "with_block", "without_ours"]

SCOPES = {
    "user": "~/.claude/settings.json",
    "project": ".claude/settings.json",
    "local": ".claude/settings.local.json",
}


def settings_path(scope: str, project_dir: str | None = None) -> Path:
    relative = SCOPES[scope]
    if scope == "user":
        return Path(relative).expanduser()
    return Path(project_dir or os.getcwd()) / relative


def _parser(prog: str, with_console: bool) -> Any:
    from foundation.cliargs import ArgumentParser
    from hook.agents import DEFAULT, NAMES

    parser = ArgumentParser(prog=prog, description=(
        "Register merge-hold's hooks with a coding agent: the PreToolUse guard, the SessionStart hook that tells "
        "the agent which PRs are held and which branches frozen (where the agent has one), Claude Code's "
        "ConfigChange hook that keeps these entries from being removed or weakened, and the SessionEnd fold. "
        "Every install is recorded so that `merge-hold doctor` reports a hook that disappeared or was edited.")
        if with_console else "Remove merge-hold's hooks from a coding agent's configuration (and its record).")
    parser.add_argument("--config", metavar="SPEC", help="the guard's spec file (required, unless --demo)")
    parser.add_argument("--agent", choices=NAMES, default=DEFAULT, help="the coding agent (default: claude)")
    parser.add_argument("--scope", choices=("user", "project", "local", "managed", "plugin"), default="user",
                        help="user (default), project, local (Claude Code, Auggie, Qoder), managed (the agent's "
                             "administrator-enforced file, where it has one) or plugin (a plugin directory: "
                             "copilot-app); see docs/hook.md")
    parser.add_argument("--project-dir", default=None, help="project root for project/local (default: cwd)")
    parser.add_argument("--path", default=None, metavar="FILE",
                        help="write this file instead of the scope's (another location, or a test)")
    if with_console:
        parser.add_argument("--console-script", action="store_true",
                            help="run the guard as `merge-hold hook-guard` (slower start-up)")
        parser.add_argument("--demo", action="store_true",
                            help="against the running `merge-hold dev` demo (`make run`): its spec, for its demo "
                                 "checkout of acme/widgets (project scope); see hook/tools/demo.py")
    return parser


def _target(args: Any, prog: str) -> tuple[Any, Path] | None:
    """The agent module and the file to change, or None (after saying why) for a scope it lacks."""
    from hook import agents
    from hook.tools.agent_files import target

    agent = agents.load(args.agent)
    if args.path:
        return agent, Path(args.path).expanduser()
    if args.scope not in agent.SCOPES:
        print(f"{prog}: {args.agent} has no {args.scope} scope (it has: {', '.join(agent.SCOPES)})",
              file=sys.stderr)
        return None
    return agent, target(agent, args.scope, args.project_dir)


def main(argv: list[str]) -> int:
    from hook.tools.agent_files import command_lines, extra_lines, install

    prog = "merge-hold hook install"
    parser = _parser(prog, True)
    args = parser.parse_args(argv)
    demo = None
    if args.demo:
        from hook.tools.demo import demo_target

        demo = demo_target()
        if isinstance(demo, str):
            print(f"{prog}: {demo}")
            return 69  # EX_UNAVAILABLE
        args.config, args.project_dir, args.scope = demo[0], demo[1], "project"
    elif not args.config:
        parser.error("--config SPEC is required (or --demo, against `make run`)")
    found = _target(args, prog)
    if found is None:
        return 64
    agent, path = found
    if not Path(args.config).expanduser().is_file():
        print(f"merge-hold: warning: spec {args.config} does not exist yet; the guard fails open until it does")
    guard, fold = command_lines(args.agent, args.config, console_script=args.console_script)
    session, config = extra_lines(args.agent, args.config, console_script=args.console_script)
    try:
        changed = install(agent, path, guard, fold, session=session, config=config, scope=args.scope)
    except (SettingsError, OSError) as exc:
        print(f"merge-hold: install failed: {exc}")
        return 1
    print(f"merge-hold: guard {'installed in' if changed else 'already installed in'} {path}")
    if args.agent == "codex" and args.scope == "project" and not args.path:
        # Codex's first gate: a project's .codex/ loads only in a trusted project (hook.tools.codex_trust).
        from hook.tools.codex_trust import project_note

        loads, said = project_note(path)
        print(f"merge-hold: {'note' if loads else 'WARNING'}: {said}")
    note = getattr(agent, "TRUST_NOTE", None)
    if note and args.scope != "managed":
        print(f"merge-hold: note: {note}")
    if demo is not None:
        from hook.tools.demo import try_it

        print(try_it(demo[0], demo[1], args.agent))
    return 0


def uninstall_main(argv: list[str]) -> int:
    from hook.tools.agent_files import uninstall

    prog = "merge-hold hook uninstall"
    args = _parser(prog, False).parse_args(argv)
    found = _target(args, prog)
    if found is None:
        return 64
    agent, path = found
    try:
        changed = uninstall(agent, path)
    except (SettingsError, OSError) as exc:
        print(f"merge-hold: uninstall failed: {exc}")
        return 1
    print(f"merge-hold: guard {'removed from' if changed else 'was not installed in'} {path}")
    return 0
