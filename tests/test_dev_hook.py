"""`merge-hold hook install --demo` registers the guard against the running `merge-hold dev` (issue #27 item 4):
`make run`, `merge-hold simulate`, `merge-hold hook install --demo`, and `gh pr merge 42` in the demo checkout
is blocked. The server here is the real app on a real port; the guard runs as the agent would run it, from
the command line the install wrote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from redis import Redis

from app import create_app
from app.token_store import parse_grants
from hook.detect.gitrepo import resolve_remote
from hook.tools import demo
from hook.tools.install import main as install_main
from merge_hold import dev_hook
from merge_hold.dev import data_dir
from tests.webapp_support import hold, serving, settings, store_verdict


@pytest.mark.parametrize("environ", [{}, {"MERGE_HOLD_DATA_DIR": "/srv/mh"}, {"MERGE_HOLD_DATA_DIR": ""}])
def test_the_hook_finds_the_folder_dev_writes(environ: dict[str, str]) -> None:
    """The hook may not import merge_hold.dev: its copy of the rule is pinned to dev's here."""
    assert demo.demo_dir(environ) == data_dir(None, environ) / dev_hook.HOOK_DIR
    assert (demo.HOOK_DIR, demo.CHECKOUT) == (dev_hook.HOOK_DIR, dev_hook.CHECKOUT)


def test_prepare_keeps_one_token_and_a_checkout_of_acme_widgets(tmp_path: Path) -> None:
    folder, tokens = tmp_path / "data", tmp_path / "data" / "tokens"
    spec_path = dev_hook.prepare(folder, "http://127.0.0.1:8000", tokens)
    spec = json.loads(spec_path.read_text())
    assert spec["verdict_source"] == "http://127.0.0.1:8000" and spec["token_file"] == "token"
    token = (spec_path.parent / "token").read_text().strip()
    assert parse_grants(tokens.read_text())["demo-hook"].scope == "hook-events"
    assert (spec_path.parent / "token").stat().st_mode & 0o077 == 0
    dev_hook.prepare(folder, "http://127.0.0.1:8000", tokens)  # a restart keeps the token
    assert (spec_path.parent / "token").read_text().strip() == token and len(parse_grants(tokens.read_text())) == 1
    checkout = spec_path.parent / "acme-widgets"
    assert resolve_remote(str(checkout), {}) == (None, "acme/widgets")  # github.com, as gh reads it
    done = subprocess.run(["git", "-C", str(checkout), "remote", "-v"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "https://github.com/acme/widgets.git" in done.stdout


def test_install_demo_without_a_running_demo_says_how(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MERGE_HOLD_DATA_DIR", str(tmp_path / "nothing"))
    assert install_main(["--demo"]) == 69
    assert "start `make run`" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        install_main([])  # neither --config nor --demo


def test_the_three_readme_commands_block_the_held_pr(tmp_path: Path, redis_client: Redis, redis_url: str,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data"
    config = settings(redis_url, tmp_path, api_tokens_file=str(folder / "tokens"), dry_run=True)
    store_verdict(redis_client, "acme/widgets", 42, (hold("alice", "waiting for DB migration"),))
    store_verdict(redis_client, "acme/widgets", 7)
    with serving(create_app(config, redis=redis_client)) as url:
        dev_hook.prepare(folder, url, folder / "tokens")  # what `make run` leaves
        monkeypatch.setenv("MERGE_HOLD_DATA_DIR", str(folder))
        assert install_main(["--demo"]) == 0  # `merge-hold hook install --demo`
        said = capsys.readouterr().out
        checkout = folder / "hook" / "acme-widgets"
        assert f"guard installed in {checkout / '.claude' / 'settings.json'}" in said and "try it: cd " in said
        installed = json.loads((checkout / ".claude" / "settings.json").read_text())
        command = installed["hooks"]["PreToolUse"][0]["hooks"][0]["command"]

        def agent_runs(line: str) -> subprocess.CompletedProcess[str]:
            call = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": line}, "cwd": str(checkout), "tool_use_id": "t"}
            return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(call), cwd=checkout,
                                  capture_output=True, text=True, timeout=30, check=False)

        blocked = agent_runs("gh pr merge 42")
        assert blocked.returncode == 2 and "acme/widgets#42 is on hold" in blocked.stderr, blocked.stderr
        assert "waiting for DB migration" in blocked.stderr
        assert agent_runs("gh pr merge 7").returncode == 0  # free
