"""The hook's tools, run by people rather than agents (`merge-hold hook SUBCOMMAND`): install,
Claude Code settings, ACL, fold, explain. Imports nothing here."""
