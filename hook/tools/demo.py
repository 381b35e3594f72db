"""`merge-hold hook install --demo`: the guard against the running `merge-hold dev` demo (`make run`).

`merge-hold dev` keeps a spec, its token and a demo checkout of acme/widgets in ``<data folder>/hook/``
(`merge_hold.dev_hook`, which this module may not import: the hook depends on the core alone). Here
that folder is found the way dev finds its data folder (``MERGE_HOLD_DATA_DIR``, default
``.merge-hold``), and the install targets that spec, for that checkout, at project scope.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

HOOK_DIR = "hook"
CHECKOUT = "acme-widgets"
HELD_PR = 42
"""The PR `merge-hold simulate` opens and holds."""


def demo_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("MERGE_HOLD_DATA_DIR") or ".merge-hold") / HOOK_DIR


def demo_target(environ: Mapping[str, str] | None = None) -> tuple[str, str] | str:
    """(spec path, project dir) of the demo, or why there is none."""
    where = demo_dir(environ)
    spec = where / "spec.json"
    if not spec.is_file():
        return (f"no demo guard in {where}: start `make run` (`merge-hold dev`, a dry run on loopback) first, "
                "in this directory or with the same MERGE_HOLD_DATA_DIR")
    return str(spec.resolve()), str((where / CHECKOUT).resolve())


def try_it(spec: str, project: str, agent: str) -> str:
    """How to see the guard block the held PR, with the agent and without one."""
    import json

    from hook.tools.claude_settings import merge_hold_command

    shown = os.path.relpath(project)
    shown = project if shown.startswith("..") else shown
    call = json.dumps({"tool_name": "Bash", "tool_input": {"command": f"gh pr merge {HELD_PR}"}, "cwd": project})
    return (f"merge-hold: try it: cd {shlex.quote(shown)} and start {agent} there; ask it to run "
            f"`gh pr merge {HELD_PR}` (the PR `merge-hold simulate` holds)\n"
            f"merge-hold: or without an agent: echo {shlex.quote(call)} | {merge_hold_command()} hook-guard "
            f"--config {shlex.quote(spec)}; echo \"exit $?\"   # 2: blocked")
