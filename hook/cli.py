"""`merge-hold hook SUBCOMMAND`: the agent hook's tools, each imported only when it runs."""

from __future__ import annotations

import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("hook.tools.explain", "print the merges a tool call (stdin) would perform; reads no verdict"),
    "settings": ("hook.tools.claude_settings", "print the Claude Code settings JSON that registers the guard"),
    "install": ("hook.tools.install", "register the guard with a coding agent (--agent NAME; idempotent)"),
    "uninstall": ("hook.tools.install", "remove the guard from a coding agent's configuration"),
    "fold": ("hook.tools.fold", "send this session's records to the server's audit log (SessionEnd)"),
    "session-start": ("hook.session", "tell the agent which PRs are held and which branches frozen (SessionStart)"),
    "config-change": ("hook.configguard",
                      "block a settings change that removes or weakens the guard (Claude Code's ConfigChange)"),
    "acl": ("hook.tools.acl", "print or apply the Redis ACL user the guard reads verdicts with"),
}

USAGE = "usage: merge-hold hook SUBCOMMAND [ARGS...]\n\nsubcommands:\n" + "".join(
    f"  {name:<14} {summary}\n" for name, (_, summary) in SUBCOMMANDS.items()
)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    entry = SUBCOMMANDS.get(argv[0])
    if entry is None:
        sys.stderr.write(f"merge-hold hook: unknown subcommand {argv[0]!r}\n\n{USAGE}")
        return 64
    from importlib import import_module

    module = import_module(entry[0])
    if argv[0] == "uninstall":
        return int(module.uninstall_main(argv[1:]))
    return int(module.main(argv[1:]))
