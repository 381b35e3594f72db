"""Tell, before you stop (issue 26 item 8): the SessionStart hook hands the agent, as context, the held PRs of
its repository and the frozen branches, by whom and why, in one verdict-source read, and nothing when
nothing is held or frozen. Run as Claude Code runs it (a subprocess, the SessionStart JSON on stdin), against
a real Redis with what the workers write, and through the HTTP source."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import redis

from hook.tools.claude_settings import fast_command
from tests.hook_support import (
    CountingRelay,
    freezes_record,
    git_checkout,
    hold,
    record,
    store,
    store_freezes,
    write_spec,
)

REPO = "acme/widgets"


def start(spec: Path, cwd: Path | str, *, agent: str | None = None, extra: dict[str, Any] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    argv = [*shlex.split(fast_command("hook.session")), *(["--agent", agent] if agent else []), "--config", str(spec)]
    data = {"session_id": "s-1", "transcript_path": "/t.jsonl", "cwd": str(cwd), "hook_event_name": "SessionStart",
            "source": "startup", "model": "claude-sonnet-5", **(extra or {})}
    done = subprocess.run(argv, input=json.dumps(data).encode(), capture_output=True, timeout=20, check=False)
    return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode(), done.stderr.decode())


def told(done: subprocess.CompletedProcess[str]) -> str:
    output = json.loads(done.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart", done.stdout
    return str(output["hookSpecificOutput"]["additionalContext"])


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return git_checkout(tmp_path / "widgets", f"https://github.com/{REPO}.git", "feature")


def test_held_prs_and_frozen_branches_are_told_by_whom_and_why(
        redis_client: redis.Redis, redis_url: str, tmp_path: Path, checkout: Path) -> None:
    alice = hold("comment", "alice", "waiting for the DB migration")
    held = record(REPO, 5, [alice], base="release/1")
    held["description"] = "Held by @alice: waiting for the DB migration"
    store(redis_client, REPO, 5, held)
    store(redis_client, REPO, 6, record(REPO, 6, []))
    store_freezes(redis_client, REPO, freezes_record(REPO, [hold("room", "carol", "release week",
                                                                 scope=f"{REPO}@main", origin="slack:#rel")]))
    relay = CountingRelay(("127.0.0.1", int(redis_url.rsplit(":", 1)[1].split("/")[0])))
    try:
        spec = write_spec(tmp_path, relay.url(db=int(redis_url.rsplit("/", 1)[1])))
        done = start(spec, checkout)
    finally:
        relay.close()
    assert done.returncode == 0 and not done.stderr, done.stderr
    text = told(done)
    assert "#5 (into release/1): Held by @alice: waiting for the DB migration" in text
    assert "#6" not in text and "Do not merge them" in text and "stop and ask the user" in text
    assert "`main`: @carol (room hold on acme/widgets@main in slack:#rel): release week" in text
    assert "/unhold acme/widgets@main" in text
    assert relay.turns == 1  # the one verdict-source read


@pytest.mark.parametrize("case", ["nothing held", "unmanaged", "no repository", "other host"])
def test_nothing_is_told_when_nothing_is_held_or_frozen(
        redis_client: redis.Redis, redis_url: str, tmp_path: Path, checkout: Path, case: str) -> None:
    store(redis_client, REPO, 6, record(REPO, 6, []), managed=case != "unmanaged")
    if case == "unmanaged":
        store(redis_client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "wait")]), managed=False)
    cwd: Path | str = checkout
    if case == "no repository":
        cwd = tmp_path / "plain"
        Path(cwd).mkdir()
    if case == "other host":
        cwd = git_checkout(tmp_path / "other", "https://gitlab.com/acme/widgets.git")
    done = start(write_spec(tmp_path, redis_url), cwd)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_freeze_record_that_cannot_be_read_is_said(redis_client: redis.Redis, redis_url: str, tmp_path: Path,
                                                      checkout: Path) -> None:
    store(redis_client, REPO, 6, record(REPO, 6, []))
    store_freezes(redis_client, REPO, {**freezes_record(REPO), "error": "line 3: bad"})
    text = told(start(write_spec(tmp_path, redis_url), checkout))
    assert "which branches of acme/widgets are frozen is not known right now" in text and "line 3: bad" in text


@pytest.mark.parametrize(
    ("spec_text", "why"),
    [(None, "SpecError"), ('{"spec_version": 1, "verdict_source": "redis://127.0.0.1:1/0"}', "Unreachable")],
)
def test_its_own_trouble_tells_nothing_and_stops_nothing(tmp_path: Path, checkout: Path, spec_text: str | None,
                                                         why: str) -> None:
    spec = tmp_path / "spec.json"
    if spec_text is not None:
        spec.write_text(spec_text)
    done = start(spec, checkout)
    assert done.returncode == 0 and done.stdout == "" and why in done.stderr and "nothing told" in done.stderr


def test_the_http_source_is_one_request(redis_client: redis.Redis, tmp_path: Path, checkout: Path) -> None:
    """The same answer through ``GET /api/v1/repos/{o}/{r}/guard`` (a real app on a real port)."""
    import threading

    from werkzeug.serving import make_server

    from tests.webapp_support import make_app

    store(redis_client, REPO, 5, record(REPO, 5, [hold("label", "", "label do-not-merge/hold")]))
    store_freezes(redis_client, REPO, freezes_record(REPO, [hold("room", "dana", "deploy 4711", scope=REPO)]))
    app, token = make_app(redis_client, tmp_path)
    (tmp_path / "token").write_text(token)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        spec = write_spec(tmp_path, f"http://127.0.0.1:{server.server_port}", token_file=str(tmp_path / "token"))
        text = told(start(spec, checkout))
    finally:
        server.shutdown()
    assert "#5 (into main)" in text and "the whole repository: main and every open PR's base" in text
    assert "deploy 4711" in text


@pytest.mark.parametrize(
    ("agent", "read"),
    [("codex", lambda out: json.loads(out)["hookSpecificOutput"]["additionalContext"]),
     ("vscode", lambda out: json.loads(out)["hookSpecificOutput"]["additionalContext"]),
     ("qoder", lambda out: json.loads(out)["hookSpecificOutput"]["additionalContext"]),
     ("copilot", lambda out: json.loads(out)["additionalContext"]),
     ("copilot-app", lambda out: json.loads(out)["additionalContext"]),
     ("goose", lambda out: out)],
)
def test_each_agent_gets_the_context_in_its_own_form(redis_client: redis.Redis, redis_url: str, tmp_path: Path,
                                                      checkout: Path, agent: str, read: Any) -> None:
    store(redis_client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "wait")]))
    done = start(write_spec(tmp_path, redis_url), checkout, agent=agent,
                 extra={"sessionId": "s", "working_dir": str(checkout)})
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert "#5 (into main)" in read(done.stdout)


def test_every_agent_with_a_session_hook_registers_it() -> None:
    from hook import agents
    from hook.tools.agent_files import agent_hooks

    registered = {n for n in agents.NAMES if hasattr(agents.load(n), "hooks")
                  and any(e.lower() == "sessionstart" for e in agent_hooks(agents.load(n), "g", "f", "s", "c"))}
    assert registered == {"claude", "codex", "vscode", "copilot", "copilot-app", "qoder", "goose"}
