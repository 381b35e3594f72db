"""The `merge-hold dev` instance on this machine (`make run`), for the commands that act on a deployment.

With no ``REDIS_URL`` set, `doctor`, `reconcile` and `token` mean the instance `merge-hold dev` runs from
the data folder (``MERGE_HOLD_DATA_DIR``, default ``.merge-hold``), as `simulate` does: they fill in what
it provides and the user's environment leaves unset — its embedded Redis, its tokens file, its dry run —
and say so on stderr. With ``REDIS_URL`` set the user has named a deployment, and nothing is filled in.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import TextIO

ADOPTING = frozenset({"doctor", "reconcile", "token"})
"""The `merge-hold` commands that act on the local instance when nothing else is configured."""


def provided(folder: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """What the dev instance in ``folder`` provides that ``environ`` leaves unset ({} when REDIS_URL is
    set, or there is no instance). Its Redis and dry run only while it runs (`dev.json`, removed at stop);
    its tokens file whenever it exists (the server re-reads the file when it next runs)."""
    if environ.get("REDIS_URL"):
        return {}
    from merge_hold.dev import read_state
    from merge_hold.supervise import alive

    state = read_state(folder)
    pid = state.get("pid")
    running = isinstance(pid, int) and alive(pid)
    found: dict[str, str] = {}
    if running and isinstance(state.get("redis_url"), str):
        found["REDIS_URL"] = state["redis_url"]
    if running and state.get("dry_run") and not environ.get("MERGE_HOLD_DRY_RUN"):
        found["MERGE_HOLD_DRY_RUN"] = "1"
    tokens = folder / "tokens"
    if tokens.is_file() and not environ.get("MERGE_HOLD_API_TOKENS_FILE"):
        found["MERGE_HOLD_API_TOKENS_FILE"] = str(tokens.resolve())
    return found


def adopt(command: str, argv: list[str], environ: MutableMapping[str, str],
          err: TextIO | None = None) -> dict[str, str]:
    """Fill ``environ`` in from the local dev instance for ``command`` (one of `ADOPTING`) run with
    ``argv``; returns what was filled in, after saying so."""
    if command not in ADOPTING or (command == "token" and any(a.split("=")[0] == "--file" for a in argv)):
        return {}
    from merge_hold.dev import data_dir

    folder = data_dir(None, environ)
    found = provided(folder, environ)
    if found:
        environ.update(found)
        print(f"merge-hold {command}: using the `merge-hold dev` instance in {folder} "
              f"({', '.join(sorted(found))} from it; set REDIS_URL to act on another)", file=err or sys.stderr)
    return found
