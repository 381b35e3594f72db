"""The agent guard inside real agent CLIs from npm, offline (design §6, "Other agents"): Gemini CLI,
Qwen Code and Codex CLI, beside Claude Code's own test (tests/test_claude_cli.py).

Each CLI (`tests.npm_cli`: the pinned npm release, or ``GEMINI_CLI``/``QWEN_CLI``/``CODEX_CLI``) runs one
headless prompt (``-p``; Codex: ``codex exec``) with the guard that ``merge-hold hook install --agent NAME
--scope user`` registered in a temp ``HOME`` (next to the settings the offline run needs, which the
install must keep; for Codex in ``$CODEX_HOME``, which the install follows), against a scripted model API
on loopback (`tests.gemini_stub`: the Gemini API; `tests.openai_stub`: Chat Completions;
`tests.responses_stub`: the Responses API, as a custom Codex model provider) that makes the "model"
call the shell tool once. The tool result the CLI sends back on its next request is the verdict
as the model sees it. The hold is real: a signed ``/hold`` webhook through the service, a real rq
worker, the verdict in a real Redis. ``gh`` is a fake on ``PATH`` that logs its arguments, so an
allowed merge shows that it ran and a blocked one that it did not.

Codex runs a user hook only once it is trusted (reviewed in ``/hooks``, which stores a hash of it in
``config.toml``) or with ``--dangerously-bypass-hook-trust``; the runs here pass that flag, and one test
shows that without either Codex skips the installed guard silently (docs/hook.md says so).

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
from tests.needs import needs
from tests.npm_cli import CODEX, GEMINI, QWEN, NpmCli, Run, find_cli, run_prompt
from tests.openai_stub import ChatStub, message_text
from tests.responses_stub import ResponsesStub

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


CODEX_HOME = "codex-home"
"""Relative to the temp HOME, and not ``~/.codex``: the install must follow ``CODEX_HOME``."""
CODEX_CONFIG = """\
model = "stub-model"
model_provider = "stub"
check_for_update_on_startup = false

[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
env_key = "STUB_API_KEY"
"""
"""The offline configuration: a custom provider speaking the Responses API (its base URL is the
stub's, given per run with ``-c``)."""


def _codex_run(cli: str, command: str, home: Path, work: Path, path: tuple[str, ...],
               *trust: str) -> tuple[Run, Result | None]:
    with ResponsesStub(command) as stub:
        run = run_prompt(cli, CODEX, "Merge the pull request.", home=home, cwd=work, path_prefix=path,
                         env={"STUB_API_KEY": "dummy", "CODEX_HOME": str(home / CODEX_HOME)},
                         # the sandbox would keep the fake gh from writing its log: --yolo, as for the others
                         argv_prefix=("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                                      *trust, "-c", f'model_providers.stub.base_url="{stub.base_url}"'))
    output = stub.tool_output
    # a function_call_output has no error flag: the text is all the model gets
    return run, None if output is None else Result(output, False)


def _codex(cli: str, command: str, home: Path, work: Path, path: tuple[str, ...]) -> tuple[Run, Result | None]:
    return _codex_run(cli, command, home, work, path, "--dangerously-bypass-hook-trust")


@dataclass(frozen=True)
class Client:
    agent: str
    spec: NpmCli
    settings_file: str
    """The user-scope file ``hook install`` writes, relative to ``HOME``."""
    drive: Callable[[str, str, Path, Path, tuple[str, ...]], tuple[Run, Result | None]]
    blocked_prefix: str
    """How the CLI frames a hook's refusal in front of the guard's reason."""
    shell_tool: str
    """The shell tool's name in the CLI's hook input (and matchers)."""
    error_flag: bool
    """Whether the tool result the CLI sends back can say "error" (else the text is all)."""
    extra_files: tuple[tuple[str, str], ...] = ()
    """Other files the offline run needs, relative to ``HOME``."""


CLIENTS = [Client("gemini", GEMINI, ".gemini/settings.json", _gemini, "Tool execution blocked: ", "run_shell_command",
                  True),
           Client("qwen", QWEN, ".qwen/settings.json", _qwen, "", "run_shell_command", False),
           Client("codex", CODEX, f"{CODEX_HOME}/hooks.json", _codex, "Command blocked by PreToolUse hook: ", "Bash",
                  False, ((f"{CODEX_HOME}/config.toml", CODEX_CONFIG),))]


NEED = {"gemini": "gemini-cli", "qwen": "qwen-code", "codex": "codex"}
"""Each client's row of tests/needs.py."""


@pytest.fixture(params=[pytest.param(c, marks=needs(NEED[c.agent]), id=c.agent) for c in CLIENTS], scope="module")
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
    settings = home / client.settings_file
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(client.spec.settings, indent=2))
    for relative, text in client.extra_files:
        (home / relative).write_text(text)
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", "--agent", client.agent,
                           "--scope", "user", "--config", str(spec)], capture_output=True, text=True, timeout=60,
                          check=False, env={**os.environ, "HOME": str(home), "CODEX_HOME": str(home / CODEX_HOME)})
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
        assert result.error or not spec.error_flag
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
    (home / spec.settings_file).parent.mkdir(parents=True)
    for relative, text in spec.extra_files:
        (home / relative).write_text(text)
    recorder = {"type": "command", "command": f"cat > {shlex.quote(str(captured))}", "name": "recorder"}
    event = "BeforeTool" if spec.agent == "gemini" else "PreToolUse"
    settings: dict[str, Any] = {**spec.spec.settings,
                                "hooks": {event: [{"matcher": spec.shell_tool, "hooks": [recorder]}]}}
    (home / spec.settings_file).write_text(json.dumps(settings))
    _, result, _ = drive(spec, cli, "echo recorded", home, tmp_path)
    assert "recorded" in result.text
    sent = json.loads(captured.read_text())
    assert {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input"} <= set(sent), sorted(sent)
    assert (sent["hook_event_name"], sent["tool_name"]) == (event, spec.shell_tool)
    call = agents.load(spec.agent).tool_call(sent)
    assert call is not None and (call.tool_name, call.command) == ("Bash", "echo recorded")
    assert call.cwd == str(tmp_path / "work") and call.session_id == sent["session_id"]


@needs("codex")
def test_codex_skips_the_installed_guard_until_it_is_trusted(service: Service, redis_url: str, tmp_path: Path) -> None:
    """Codex's trust gate, as docs/hook.md states it: a user hook nobody has reviewed in ``/hooks`` (and no
    ``--dangerously-bypass-hook-trust``) is skipped without a word, so the held merge runs. A managed
    install (``requirements.toml``) is trusted by policy instead."""
    client = next(c for c in CLIENTS if c.agent == "codex")
    try:
        cli = find_cli(client.spec)
    except Unavailable as exc:
        pytest.skip(f"the {client.spec.package} CLI is unavailable: {exc}")
    home = home_with_guard(client, write_spec(tmp_path, redis_url), tmp_path)
    command = "gh pr merge 5 --repo acme/widgets --squash"
    untrusted = Client(**{**client.__dict__, "drive": lambda *a: _codex_run(*a)})
    _, result, log = drive(untrusted, cli, command, home, tmp_path)
    assert "merge-hold" not in result.text and "merged (fake)" in result.text, result.text
    assert log.read_text() == "pr merge 5 --repo acme/widgets --squash\n"


def _install_codex_project(home: Path, work: Path, spec: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", "--agent", "codex",
                           "--scope", "project", "--config", str(spec)], cwd=work, capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, "HOME": str(home),
                                                        "CODEX_HOME": str(home / CODEX_HOME)})
    assert done.returncode == 0 and f"installed in {work / '.codex' / 'hooks.json'}" in done.stdout, done
    return done.stdout


@needs("codex")
def test_codex_project_install_guards_only_in_a_trusted_project(service: Service, redis_url: str,
                                                                tmp_path: Path) -> None:
    """Issue 16 item 6, with the real Codex CLI: a project install (``.codex/hooks.json``) is not loaded
    in a project Codex does not trust — even under ``--dangerously-bypass-hook-trust`` the held merge
    runs — and the install says so, naming the config line that trusts it; once that line is in
    ``config.toml``, the same run is blocked by the guard, and the install's check says it is trusted."""
    client = next(c for c in CLIENTS if c.agent == "codex")
    try:
        cli = find_cli(client.spec)
    except Unavailable as exc:
        pytest.skip(f"the {client.spec.package} CLI is unavailable: {exc}")
    home, work = tmp_path / "home", tmp_path / "work"
    (home / CODEX_HOME).mkdir(parents=True)
    config = home / CODEX_HOME / "config.toml"
    config.write_text(CODEX_CONFIG)
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=60)
    said = _install_codex_project(home, work, write_spec(tmp_path, redis_url))
    assert "Codex will NOT load" in said and f'[projects."{work}"]\ntrust_level = "trusted"' in said, said
    assert str(config) in said and "--dangerously-bypass-hook-trust" in said
    command = "gh pr merge 5 --repo acme/widgets --squash"
    project = Client(**{**client.__dict__, "extra_files": ()})

    run, result, log = drive(project, cli, command, home, tmp_path)
    assert "Untrusted project-local configuration is disabled" in run.stderr, run.stderr
    assert "merge-hold" not in result.text and "merged (fake)" in result.text, result.text
    assert log.read_text() == "pr merge 5 --repo acme/widgets --squash\n", "no guard ran: the merge went through"

    log.unlink()
    config.write_text(CODEX_CONFIG + "\n" + said.split("Add\n", 1)[1].split("\nto ", 1)[0] + "\n")  # as told
    assert "Codex trusts the project" in _install_codex_project(home, work, write_spec(tmp_path, redis_url))
    _, result, log = drive(project, cli, command, home, tmp_path)
    assert result.text.startswith(client.blocked_prefix + "merge-hold: acme/widgets#5 is on hold"), result.text
    assert not log.exists(), "the guard blocked the held merge"

    config.write_text(CODEX_CONFIG + f'\n[projects."{work}"]\ntrust_level = "untrusted"\n')  # the user said no
    assert 'marks the project' in _install_codex_project(home, work, write_spec(tmp_path, redis_url))


@needs("codex")
def test_codex_loads_no_project_hooks_in_a_linked_worktree(service: Service, redis_url: str, tmp_path: Path) -> None:
    """Pinned as seen with Codex CLI 0.171.0: in a linked git worktree no project ``.codex/`` loads, even
    with the main checkout trusted (where ``codex exec --trust`` writes it) and the hook trust bypassed;
    the install says so and points to the user scope."""
    client = next(c for c in CLIENTS if c.agent == "codex")
    try:
        cli = find_cli(client.spec)
    except Unavailable as exc:
        pytest.skip(f"the {client.spec.package} CLI is unavailable: {exc}")
    home, main = tmp_path / "home", tmp_path / "main"
    (home / CODEX_HOME).mkdir(parents=True)
    (home / CODEX_HOME / "config.toml").write_text(CODEX_CONFIG + f'\n[projects."{main}"]\ntrust_level = "trusted"\n')
    subprocess.run(["git", "init", "-q", str(main)], check=True, timeout=60)
    subprocess.run(["git", "-C", str(main), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "work")], check=True, timeout=60)
    said = _install_codex_project(home, tmp_path / "work", write_spec(tmp_path, redis_url))
    assert "linked git worktree" in said and "--scope user" in said, said
    _, result, log = drive(Client(**{**client.__dict__, "extra_files": ()}), cli,
                           "gh pr merge 5 --repo acme/widgets --squash", home, tmp_path)
    assert "merge-hold" not in result.text and log.read_text() == "pr merge 5 --repo acme/widgets --squash\n"
