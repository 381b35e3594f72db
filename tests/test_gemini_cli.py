"""The agent guard inside the real Gemini CLI, offline (design §6, "Other agents").

The CLI (`tests.gemini_cli`: the pinned npm release, or ``GEMINI_CLI``) runs ``-p`` with the guard that
``merge-hold hook install --agent gemini --scope user`` registered in a temp ``HOME`` (next to the
settings the offline run needs, which the install must keep), against a scripted Gemini API on loopback
(`tests.gemini_stub`) that makes the "model" call ``run_shell_command`` once. The ``functionResponse``
the CLI sends back on its next request is the verdict as the model sees it. The hold is real: a signed
``/hold`` webhook through the service, a real rq worker, the verdict in a real Redis. ``gh`` is a fake on
``PATH`` that logs its arguments, so an allowed merge shows that it ran and a blocked one that it did not.

Skipped, with the reason, where the CLI cannot be found or installed (no node/npm, no registry).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.claude_cli import Unavailable
from tests.e2e_support import Service, held_widgets
from tests.emulator import GitHubEmulator
from tests.gemini_cli import SETTINGS, find_cli, run_prompt
from tests.gemini_stub import FINAL_TEXT, GeminiStub, response_text
from tests.hook_support import write_spec

REPO = "acme/widgets"
FAKE_GH = '#!/bin/sh\necho "$*" >> "$0.log"\necho "merged (fake): $*"\n'


@pytest.fixture(scope="module")
def cli() -> str:
    try:
        return find_cli()
    except Unavailable as exc:
        pytest.skip(f"the Gemini CLI is unavailable: {exc}")


@pytest.fixture()
def service(github_emulator: GitHubEmulator, redis_client: redis.Redis, redis_url: str) -> Iterator[Service]:
    """acme/widgets managed; #5 held by @alice through a real ``/hold`` comment, #6 free."""
    svc = held_widgets(github_emulator, redis_url, reason="waiting for the DB migration")
    assert (svc.verdict(REPO, 6) or {}).get("held") is False
    yield svc


def home_with_guard(spec: Path, tmp: Path) -> Path:
    """A HOME whose ~/.gemini/settings.json holds the offline settings, then the guard, installed by the
    real command line."""
    home = tmp / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", "--agent", "gemini",
                           "--scope", "user", "--config", str(spec)], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "HOME": str(home)})
    assert done.returncode == 0 and "installed in" in done.stdout, done
    installed = json.loads((home / ".gemini" / "settings.json").read_text())
    assert {k: installed[k] for k in SETTINGS} == SETTINGS  # the install kept them
    return home


def drive(cli: str, command: str, home: Path, tmp: Path) -> tuple[Any, GeminiStub, Path]:
    bin_dir, work = tmp / "bin", tmp / "work"
    for folder in (bin_dir, work):
        folder.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    with GeminiStub(command) as stub:
        run = run_prompt(cli, "Merge the pull request.", base_url=stub.base_url, home=home, cwd=work,
                         path_prefix=(str(bin_dir),))
    return run, stub, bin_dir / "gh.log"


ROWS = [
    # (what the model runs, blocked?, phrases the functionResponse must hold, the fake gh's log)
    ("gh pr merge 5 --repo acme/widgets --squash", True,
     ("acme/widgets#5 is on hold", "@alice", "waiting for the DB migration", "/unhold"), ""),
    ("gh pr merge 6 --repo acme/widgets --squash", False,
     ("merged (fake): pr merge 6 --repo acme/widgets --squash",), "pr merge 6 --repo acme/widgets --squash\n"),
]


@pytest.mark.parametrize(("command", "blocked", "phrases", "gh_log"), ROWS, ids=["held", "free"])
def test_the_real_gemini_cli_delivers_the_guards_verdict(
    cli: str, service: Service, redis_url: str, tmp_path: Path,
    command: str, blocked: bool, phrases: tuple[str, ...], gh_log: str,
) -> None:
    home = home_with_guard(write_spec(tmp_path, redis_url), tmp_path)
    run, stub, log = drive(cli, command, home, tmp_path)
    assert run.returncode == 0, run
    assert run.stdout.strip() == FINAL_TEXT  # the turn went on to its end
    response = stub.shell_response
    assert response is not None, (run, stub.paths)
    text = response_text(response)
    inner = response["response"]
    if blocked:
        # Gemini CLI's own framing: the hook's stderr, as a tool error the model reads.
        assert set(inner) == {"error"} and text.startswith("Tool execution blocked: "), text
    else:
        assert "error" not in inner and "merge-hold" not in text, text
    for phrase in phrases:
        assert phrase in text, text
    assert (log.read_text() if log.exists() else "") == gh_log


def test_the_cli_sends_the_hook_the_input_the_guard_reads(cli: str, tmp_path: Path) -> None:
    """A recording hook in place of the guard: the stdin this CLI version sends, as hook.agents.gemini reads it."""
    from hook.agents import gemini

    captured = tmp_path / "hook-stdin.json"
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    recorder = {"type": "command", "command": f"cat > {shlex.quote(str(captured))}", "name": "recorder"}
    settings = {**SETTINGS, "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [recorder]}]}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    run, stub, _ = drive(cli, "echo recorded", home, tmp_path)
    assert run.returncode == 0, run
    assert stub.shell_response is not None and "recorded" in response_text(stub.shell_response)
    sent = json.loads(captured.read_text())
    assert {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input"} <= set(sent), sorted(sent)
    assert (sent["hook_event_name"], sent["tool_name"]) == ("BeforeTool", "run_shell_command")
    call = gemini.tool_call(sent)
    assert call is not None and (call.tool_name, call.command) == ("Bash", "echo recorded")
    assert call.cwd == str(tmp_path / "work") and call.session_id == sent["session_id"]
