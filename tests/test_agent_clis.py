"""The agent guard inside real agent CLIs from npm, offline (design §6, "Other agents"): Gemini CLI and
Qwen Code, beside Claude Code's own test (tests/test_claude_cli.py).

Each CLI (`tests.npm_cli`: the pinned npm release, or ``GEMINI_CLI``/``QWEN_CLI``) runs ``-p`` with the
guard that ``merge-hold hook install --agent NAME --scope user`` registered in a temp ``HOME`` (next to
the settings the offline run needs, which the install must keep), against a scripted model API on
loopback (`tests.gemini_stub`: the Gemini API; `tests.openai_stub`: Chat Completions) that makes the
"model" call the shell tool once. The tool result the CLI sends back on its next request is the verdict
as the model sees it. The hold is real: a signed ``/hold`` webhook through the service, a real rq
worker, the verdict in a real Redis. ``gh`` is a fake on ``PATH`` that logs its arguments, so an
allowed merge shows that it ran and a blocked one that it did not.

Skipped, with the reason, where a CLI cannot be found or installed (no node/npm, no registry).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from hook import agents
from tests.claude_cli import Unavailable
from tests.e2e_support import Service, held_widgets
from tests.emulator import GitHubEmulator
from tests.gemini_stub import GeminiStub, response_text
from tests.hook_support import write_spec
from tests.npm_cli import GEMINI, QWEN, NpmCli, Run, find_cli, run_prompt
from tests.openai_stub import ChatStub, message_text

REPO = "acme/widgets"
FINAL_TEXT = "Understood."
FAKE_GH = '#!/bin/sh\necho "$*" >> "$0.log"\necho "merged (fake): $*"\n'


@dataclass(frozen=True)
class Result:
    """What the model got back for its shell call: the text, and whether the CLI marked it an error."""

    text: str
    error: bool


def _gemini(cli: str, command: str, home: Path, work: Path, path: tuple[str, ...]) -> tuple[Run, Result | None]:
    with GeminiStub(command) as stub:
        run = run_prompt(cli, GEMINI, "Merge the pull request.", home=home, cwd=work, path_prefix=path,
                         env={"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": stub.base_url},
                         extra_args=("-m", "gemini-2.5-flash"))
    response = stub.shell_response
    if response is None:
        return run, None
    return run, Result(response_text(response), "error" in response.get("response", {}))


def _qwen(cli: str, command: str, home: Path, work: Path, path: tuple[str, ...]) -> tuple[Run, Result | None]:
    with ChatStub(command, tool_name="run_shell_command") as stub:
        run = run_prompt(cli, QWEN, "Merge the pull request.", home=home, cwd=work, path_prefix=path,
                         env={"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": stub.base_url,
                              "OPENAI_MODEL": "qwen3-coder-plus", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})
    message = stub.tool_result
    # Chat Completions has no error flag on a tool message: the text is all the model gets.
    return run, None if message is None else Result(message_text(message), False)


@dataclass(frozen=True)
class Client:
    agent: str
    spec: NpmCli
    settings_dir: str
    drive: Callable[[str, str, Path, Path, tuple[str, ...]], tuple[Run, Result | None]]
    blocked_prefix: str
    """How the CLI frames a hook's refusal in front of the guard's reason."""


CLIENTS = [Client("gemini", GEMINI, ".gemini", _gemini, "Tool execution blocked: "),
           Client("qwen", QWEN, ".qwen", _qwen, "")]


@pytest.fixture(params=CLIENTS, ids=[c.agent for c in CLIENTS], scope="module")
def client(request: pytest.FixtureRequest) -> tuple[Client, str]:
    chosen: Client = request.param
    try:
        return chosen, find_cli(chosen.spec)
    except Unavailable as exc:
        pytest.skip(f"the {chosen.spec.package} CLI is unavailable: {exc}")


@pytest.fixture()
def service(github_emulator: GitHubEmulator, redis_client: redis.Redis, redis_url: str) -> Iterator[Service]:
    """acme/widgets managed; #5 held by @alice through a real ``/hold`` comment, #6 free."""
    svc = held_widgets(github_emulator, redis_url, reason="waiting for the DB migration")
    assert (svc.verdict(REPO, 6) or {}).get("held") is False
    yield svc


def home_with_guard(client: Client, spec: Path, tmp: Path) -> Path:
    """A HOME whose settings file holds the offline settings, then the guard, installed by the real
    command line."""
    home = tmp / "home"
    settings = home / client.settings_dir / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(client.spec.settings, indent=2))
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", "--agent", client.agent,
                           "--scope", "user", "--config", str(spec)], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "HOME": str(home)})
    assert done.returncode == 0 and f"installed in {settings}" in done.stdout, done
    installed = json.loads(settings.read_text())
    assert {k: installed[k] for k in client.spec.settings} == client.spec.settings  # the install kept them
    return home


def drive(client: Client, cli: str, command: str, home: Path, tmp: Path) -> tuple[Run, Result, Path]:
    bin_dir, work = tmp / "bin", tmp / "work"
    for folder in (bin_dir, work):
        folder.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    run, result = client.drive(cli, command, home, work, (str(bin_dir),))
    assert run.returncode == 0, run
    assert result is not None, f"no tool result came back: {run}"
    return run, result, bin_dir / "gh.log"


ROWS = [
    # (what the model runs, blocked?, phrases the tool result must hold, the fake gh's log)
    ("gh pr merge 5 --repo acme/widgets --squash", True,
     ("acme/widgets#5 is on hold", "@alice", "waiting for the DB migration", "/unhold"), ""),
    ("gh pr merge 6 --repo acme/widgets --squash", False,
     ("merged (fake): pr merge 6 --repo acme/widgets --squash",), "pr merge 6 --repo acme/widgets --squash\n"),
]


@pytest.mark.parametrize(("command", "blocked", "phrases", "gh_log"), ROWS, ids=["held", "free"])
def test_the_real_cli_delivers_the_guards_verdict(
    client: tuple[Client, str], service: Service, redis_url: str, tmp_path: Path,
    command: str, blocked: bool, phrases: tuple[str, ...], gh_log: str,
) -> None:
    spec, cli = client
    home = home_with_guard(spec, write_spec(tmp_path, redis_url), tmp_path)
    run, result, log = drive(spec, cli, command, home, tmp_path)
    assert run.stdout.strip() == FINAL_TEXT  # the turn went on to its end
    if blocked:
        # the CLI's own framing, then the guard's stderr, as the tool's result
        assert result.text.startswith(spec.blocked_prefix + "merge-hold: acme/widgets#5 is on hold"), result.text
        assert result.error or spec.agent == "qwen"
    else:
        assert not result.error and "merge-hold" not in result.text, result.text
    for phrase in phrases:
        assert phrase in result.text, result.text
    assert (log.read_text() if log.exists() else "") == gh_log


def test_the_cli_sends_the_hook_the_input_the_guard_reads(client: tuple[Client, str], tmp_path: Path) -> None:
    """A recording hook in place of the guard: the stdin this CLI version sends, as the agent module reads it."""
    spec, cli = client
    captured = tmp_path / "hook-stdin.json"
    home = tmp_path / "home"
    (home / spec.settings_dir).mkdir(parents=True)
    recorder = {"type": "command", "command": f"cat > {shlex.quote(str(captured))}", "name": "recorder"}
    event = "BeforeTool" if spec.agent == "gemini" else "PreToolUse"
    settings: dict[str, Any] = {**spec.spec.settings,
                                "hooks": {event: [{"matcher": "run_shell_command", "hooks": [recorder]}]}}
    (home / spec.settings_dir / "settings.json").write_text(json.dumps(settings))
    _, result, _ = drive(spec, cli, "echo recorded", home, tmp_path)
    assert "recorded" in result.text
    sent = json.loads(captured.read_text())
    assert {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input"} <= set(sent), sorted(sent)
    assert (sent["hook_event_name"], sent["tool_name"]) == (event, "run_shell_command")
    call = agents.load(spec.agent).tool_call(sent)
    assert call is not None and (call.tool_name, call.command) == ("Bash", "echo recorded")
    assert call.cwd == str(tmp_path / "work") and call.session_id == sent["session_id"]
