"""The agent guard inside the real Claude Code CLI, offline (design §6).

The CLI (`tests.claude_cli`: the pinned npm release, or ``CLAUDE_CLI``) runs ``-p`` with the settings
``merge-hold hook settings`` prints, against a scripted Messages API on loopback (`tests.claude_stub`)
that makes the "model" call ``Bash`` once. The ``tool_result`` the CLI sends back on its next request is
the verdict as the agent sees it. The hold is real: a signed ``/hold`` webhook through the service, a real
rq worker, the verdict in a real Redis. ``gh`` is a fake on ``PATH`` that logs its arguments, so an
allowed merge shows that it ran and a blocked one that it did not.

Skipped, with the reason, where the CLI cannot be found or installed (no npm, no registry).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from tests.claude_cli import Run, Unavailable, find_cli, run_print
from tests.claude_stub import FINAL_TEXT, TOOL_USE_ID, MessagesStub, result_text
from tests.e2e_support import Service, held_widgets
from tests.emulator import GitHubEmulator
from tests.hook_support import CC_KEYS, write_spec
from tests.needs import needs

pytestmark = needs("claude-code")

REPO = "acme/widgets"
PROMPT = "Merge the pull request."
FAKE_GH = '#!/bin/sh\necho "$*" >> "$0.log"\necho "merged (fake): $*"\n'


@pytest.fixture(scope="module")
def cli() -> str:
    try:
        return find_cli()
    except Unavailable as exc:
        pytest.skip(f"the Claude Code CLI is unavailable: {exc}")


@pytest.fixture()
def service(github_emulator: GitHubEmulator, redis_client: redis.Redis, redis_url: str) -> Iterator[Service]:
    """acme/widgets managed; #5 held by @alice through a real ``/hold`` comment, #6 free."""
    svc = held_widgets(github_emulator, redis_url, reason="waiting for the DB migration")
    assert (svc.verdict(REPO, 6) or {}).get("held") is False
    yield svc


@dataclass
class Session:
    """One ``claude -p`` run and what it left: the stub's view and the fake ``gh``'s log."""

    run: Run
    stub: MessagesStub
    gh_log: Path

    @property
    def result(self) -> dict[str, Any]:
        found = self.stub.tool_result
        assert found is not None, f"no tool_result came back: {self.run} {self.stub.paths}"
        return found


def hook_settings(spec: Path, tmp: Path) -> Path:
    """The settings file exactly as ``merge-hold hook settings --config SPEC`` prints it."""
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "settings", "--config", str(spec)],
                          capture_output=True, text=True, timeout=60, check=True)
    path = tmp / "claude-settings.json"
    path.write_text(done.stdout)
    return path


def drive(cli: str, command: str, settings: Path, tmp: Path) -> Session:
    """Run the CLI once with the stub making the model call ``Bash(command)``."""
    bin_dir, home, work = tmp / "bin", tmp / "home", tmp / "work"
    for folder in (bin_dir, home, work):
        folder.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    with MessagesStub(command) as stub:
        run = run_print(cli, PROMPT, settings=settings, base_url=stub.base_url, home=home, cwd=work,
                        path_prefix=(str(bin_dir),))
    return Session(run, stub, bin_dir / "gh.log")


def folded_events(client: redis.Redis) -> list[dict[str, Any]]:
    """What the SessionEnd fold appended to the hook-events stream."""
    entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(keys.HOOK_EVENTS)  # type: ignore[assignment]
    return [json.loads(fields[b"data"]) for _, fields in entries]


HELD_PHRASES = ("acme/widgets#5 is on hold", "@alice", "waiting for the DB migration", "/unhold",
                "Stop here and ask the user")

ROWS = [
    # (what the model runs in Bash, blocked?, phrases the tool_result must hold, the fake gh's log)
    ("gh pr merge 5 --repo acme/widgets --squash", True, HELD_PHRASES, ""),
    ("bash -c 'gh pr merge 5 -R acme/widgets'", True, ("acme/widgets#5 is on hold", "@alice"), ""),
    ("gh pr merge 6 --repo acme/widgets --squash", False,
     ("merged (fake): pr merge 6 --repo acme/widgets --squash",), "pr merge 6 --repo acme/widgets --squash\n"),
    ("echo hello", False, ("hello",), ""),
    ("echo 'gh pr merge 5 --repo acme/widgets'", False, ("gh pr merge 5 --repo acme/widgets",), ""),
]


@pytest.mark.parametrize(("command", "blocked", "phrases", "gh_log"), ROWS, ids=[row[0] for row in ROWS])
def test_the_real_cli_delivers_the_guards_verdict(
    cli: str, service: Service, redis_client: redis.Redis, redis_url: str, tmp_path: Path,
    command: str, blocked: bool, phrases: tuple[str, ...], gh_log: str,
) -> None:
    settings = hook_settings(write_spec(tmp_path, redis_url), tmp_path)
    session = drive(cli, command, settings, tmp_path)
    assert session.run.returncode == 0, session.run
    assert session.run.stdout.strip() == FINAL_TEXT  # the conversation went on to its end
    text = result_text(session.result)
    assert session.result.get("is_error", False) is blocked, text
    for phrase in phrases:
        assert phrase in text, text
    if blocked:
        # Claude Code's own framing: the hook's exact command line, then the guard's stderr.
        guard = json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        assert text.startswith(f"PreToolUse:Bash hook error: [{guard}]: "), text
    else:
        assert "hook error" not in text and "merge-hold" not in text, text
    assert (session.gh_log.read_text() if session.gh_log.exists() else "") == gh_log
    # The SessionEnd hook folded the guard's records into the audit stream: one per judged merge.
    events = folded_events(redis_client)
    judged = [(e["tool_use_id"], e["repo"], e["pr"], e["decision"]) for e in events]
    if command.startswith("echo"):
        assert judged == []
    else:
        pr = 5 if blocked else 6
        assert judged == [(TOOL_USE_ID, REPO, pr, "block" if blocked else "allow")]
        assert events[0]["session_id"] and events[0]["command"] == command


def test_the_cli_sends_the_hook_the_input_the_guard_reads(cli: str, tmp_path: Path) -> None:
    """A recording hook in place of the guard: the stdin keys of this CLI version, and their shapes."""
    captured = tmp_path / "hook-stdin.json"
    recorder = f"cat > {shlex.quote(str(captured))}"
    settings = tmp_path / "recording-settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": recorder}]}]}}))
    session = drive(cli, "echo recorded", settings, tmp_path)
    assert session.run.returncode == 0, session.run
    assert result_text(session.result).strip() == "recorded"
    sent = json.loads(captured.read_text())
    assert set(sent) == set(CC_KEYS), sorted(sent)
    assert (sent["hook_event_name"], sent["tool_name"], sent["tool_use_id"]) == ("PreToolUse", "Bash", TOOL_USE_ID)
    assert sent["tool_input"] == {"command": "echo recorded", "description": "Run the command"}
    assert sent["cwd"] == str(tmp_path / "work")
    assert all(isinstance(sent[k], str) and sent[k] for k in ("session_id", "transcript_path", "prompt_id"))


def test_session_start_tells_the_model_what_is_held(cli: str, service: Service, redis_url: str,
                                                    tmp_path: Path) -> None:
    """The SessionStart hook `hook settings` registers (issue 26 item 8): in a checkout of acme/widgets, the
    model's very first request already carries which PR is held, by whom and why."""
    settings = hook_settings(write_spec(tmp_path, redis_url), tmp_path)
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=60)
    subprocess.run(["git", "-C", str(work), "remote", "add", "origin", f"https://github.com/{REPO}.git"],
                   check=True, timeout=60)
    session = drive(cli, "echo hello", settings, tmp_path)
    assert session.run.returncode == 0, session.run
    first = json.dumps(session.stub.requests[0])
    assert "these pull requests of acme/widgets are on hold" in first, first[:2000]
    assert "#5 (into main)" in first and "waiting for the DB migration" in first and "#6" not in first
