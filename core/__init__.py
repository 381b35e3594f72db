"""The pure domain core of merge-hold: holds, verdicts, grammars, repo config, status text, key names.

Nothing here does I/O or imports outside the standard library, so that the web app, the workers and
the agent hook share one set of rules. Modules are imported individually; this file stays empty so
that importing one of them (the hook imports `core.keys` and `core.verdict_format`) costs nothing more.
"""
