"""The `merge-hold` entry point: a table of subcommands, each imported only when it runs.

The agent hook runs as ``merge-hold hook-guard`` inside every agent tool call, so this module imports
nothing at the top and dispatches before any argument parser loads (pip-audit's `__main__` pattern).
"""

from __future__ import annotations

import sys

# name -> (module, summary). Each module has `main(argv: list[str]) -> int`.
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("merge_hold.serve", "run the web app (webhooks, chat, API, dashboard)"),
    "worker": ("workers.ops.cli", "run an rq worker with the scheduler"),
    "dev": ("merge_hold.dev", "everything on one machine: embedded Redis, web, worker, dry-run GitHub"),
    "simulate": ("merge_hold.simulate", "post a signed sample webhook to a running server"),
    "reconcile": ("workers.ops.reconcile", "republish verdicts (--rebuild re-reads GitHub)"),
    "token": ("merge_hold.tokens", "API tokens with scopes: create, list, revoke (stored hashed)"),
    "hook-guard": ("hook.guard", "the agent guard (--agent NAME): allow, or block in that agent's own form"),
    "setup": ("merge_hold.setup", "register the GitHub App through GitHub's manifest flow (/setup)"),
    "doctor": ("merge_hold.doctor", "check credentials, Redis, App settings and that each repo requires merge-hold"),
    "hook": ("hook.cli", "agent hook tools: explain, settings, install, uninstall, fold, acl, "
                         "session-start (SessionStart), config-change (ConfigChange)"),
}

USAGE = "usage: merge-hold COMMAND [ARGS...]\n\ncommands:\n" + "".join(
    f"  {name:<12} {summary}\n" for name, (_, summary) in COMMANDS.items()
) + "\nRun `merge-hold COMMAND --help` for a command's options.\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] == "--version":
        sys.stdout.write("merge-hold 0.1.0\n")
        return 0
    entry = COMMANDS.get(args[0])
    if entry is None:
        sys.stderr.write(f"merge-hold: unknown command {args[0]!r}\n\n{USAGE}")
        return 64  # EX_USAGE; never 2, which the agent hook reserves for "block"
    if args[0] not in ("hook-guard", "hook"):  # the guard's start-up stays bare
        import os

        from merge_hold.local_instance import adopt

        adopt(args[0], args[1:], os.environ)  # doctor, reconcile, token: the `make run` instance when unset
    from importlib import import_module

    command: int = import_module(entry[0]).main(args[1:])
    return command


if __name__ == "__main__":
    raise SystemExit(main())
