"""Detecting merges: the prefilter (prefilter.py), the entry point (toolcall.py), the detection context
(context.py), the dispatcher (dispatch.py) and one detector per program family (gh, api, http, git,
make, script, mcp). Imports nothing here so that the guard's prefilter stays cheap (design §7)."""
