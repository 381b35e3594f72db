"""The README's quick start, pasted in one go (issue #27 item 4): with `make run` going (a real `merge-hold dev`
on its data folder `.merge-hold`), the try-it block runs in bash as written — simulate, `hook install
--demo`, the guard blocking `gh pr merge 42` — and so does the block after it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from merge_hold.redis_server import free_port
from tests.dev_support import ROOT, clean_env, running_dev


def blocks() -> list[str]:
    """The quick start's shell blocks after "Try it", as written."""
    text = (ROOT / "README.md").read_text()
    start = text.index("## Quick start")
    quick = text[text.index("**Try it.**", start):text.index("## How it works", start)]
    return re.findall(r"```sh\n(.*?)```", quick, re.S)


def test_the_try_it_blocks_work_pasted_in_one_go(tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")  # a checkout after `make run`: its venv and data folder
    home = tmp_path / "home"
    home.mkdir()
    env = {**clean_env(), "HOME": str(home)}
    try_it, after = blocks()[:2]
    with running_dev(tmp_path / ".merge-hold", free_port(), tmp_path / "dev.log"):
        done = subprocess.run(["bash", "-c", try_it], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        said = done.stdout + done.stderr
        assert "merge-hold: failure — Held by @alice: waiting for DB migration" in said, said
        assert "guard installed in" in said and ".merge-hold/hook/acme-widgets/.claude/settings.json" in said, said
        assert "merge-hold: acme/widgets#42 is on hold. Do not merge it." in said, said
        assert done.stdout.rstrip().endswith("exit 2"), said
        done = subprocess.run(["bash", "-c", after], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "merge-hold: success — No holds" in said, said
        assert "<- in the channel: @alice held acme/widgets (1 open PR): release freeze" in said, said
