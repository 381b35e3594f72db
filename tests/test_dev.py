"""`merge-hold dev`: the data folder it keeps, and the whole newcomer's path in subprocesses.

The end-to-end test is the issue's done-when: dev starts (embedded Redis, web, worker, dry run),
`merge-hold simulate` places a hold, the dry-run record names the holder, dev stops without leaving a
redis-server behind, and after a restart the hold is still there.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from redis import Redis

from app.token_store import parse_tokens, token_hash
from core import keys
from merge_hold import dev, supervise
from merge_hold.redis_server import free_port
from tests.dev_support import clean_env, running_dev

ROOT = Path(__file__).resolve().parent.parent


def test_kept_secret_is_private_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "webhook-secret"
    first = dev.kept_secret(path)
    assert len(first) == 64 and dev.kept_secret(path) == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("\n")  # emptied by hand: a new one, never an empty secret
    assert dev.kept_secret(path) not in ("", first)


def test_dev_token_is_kept_while_its_hash_is_stored(tmp_path: Path) -> None:
    tokens, kept = tmp_path / "tokens", tmp_path / "dev-token"
    token = dev.dev_token(tokens, kept)
    assert parse_tokens(tokens.read_text())["dev"] == token_hash(token)
    assert dev.dev_token(tokens, kept) == token
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    kept.write_text("mhk_tampered\n")  # a token whose hash is not in the file is replaced, not trusted
    replaced = dev.dev_token(tokens, kept)
    assert replaced != "mhk_tampered" and parse_tokens(tokens.read_text()) == {"dev": token_hash(replaced)}
    tokens.unlink()  # tokens file lost: a new token, stored again
    again = dev.dev_token(tokens, kept)
    assert parse_tokens(tokens.read_text()) == {"dev": token_hash(again)} and kept.read_text().strip() == again


@pytest.mark.parametrize(("given", "dry_run", "expected"), [
    ({}, True, {"MERGE_HOLD_DRY_RUN": "1", "REDIS_URL": "redis://127.0.0.1:1/0"}),
    ({"GITHUB_WEBHOOK_SECRET": "mine"}, False, {"GITHUB_WEBHOOK_SECRET": "mine"}),
    ({"GITHUB_WEBHOOK_SECRET": ""}, False, {}),  # empty counts as unset, as in the settings
    ({"REDIS_URL": "redis://elsewhere:6379/0"}, False, {"REDIS_URL": "redis://127.0.0.1:1/0"}),
    ({"MERGE_HOLD_PUBLIC_URL": "https://mh.example"}, False, {"MERGE_HOLD_PUBLIC_URL": "https://mh.example"}),
])
def test_child_env(tmp_path: Path, given: dict[str, str], dry_run: bool, expected: dict[str, str]) -> None:
    env = dev.child_env(given, tmp_path, redis_url="redis://127.0.0.1:1/0", url="http://127.0.0.1:9", dry_run=dry_run)
    for name, value in expected.items():
        assert env[name] == value
    assert env["GITHUB_WEBHOOK_SECRET"] == (given.get("GITHUB_WEBHOOK_SECRET")
                                            or (tmp_path / "webhook-secret").read_text().strip())
    assert env["MERGE_HOLD_API_TOKENS_FILE"] == str((tmp_path / "tokens").resolve())
    assert ("MERGE_HOLD_DRY_RUN" in env) == dry_run


def test_self_command_is_what_runs_merge_hold_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "venv" / "bin" / "merge-hold"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert dev.self_command(str(script)) == str(script)  # `make run`: the venv is not on PATH
    monkeypatch.setenv("PATH", str(script.parent))
    assert dev.self_command(str(script)) == "merge-hold"  # an activated venv
    assert dev.self_command("/somewhere/merge_hold/cli.py").endswith(" -m merge_hold.cli")


@contextmanager
def _sleeper(*marker: str) -> Iterator[subprocess.Popen[bytes]]:
    """A harmless process whose command line carries ``marker`` (what leftover detection looks at)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", *marker])
    try:
        deadline = time.monotonic() + 5
        while " ".join(marker) not in supervise.cmdline(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        yield child
    finally:
        child.kill()
        child.wait()


def test_alive_counts_a_zombie_as_dead() -> None:
    with _sleeper("running") as child:
        assert supervise.alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 5  # killed but not reaped: a zombie until wait()
        while supervise.alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not supervise.alive(child.pid) and child.returncode is None
    assert not supervise.alive(child.pid)


def test_leftovers_of_a_killed_dev_are_stopped_but_strangers_are_not(tmp_path: Path) -> None:
    with _sleeper("worker") as leftover, _sleeper("unrelated") as stranger:
        (tmp_path / "dev.json").write_text(json.dumps({"pid": 999_999_999, "children": {
            "worker": leftover.pid, "web": stranger.pid}}))
        dev.clear_leftovers(tmp_path)
        assert leftover.wait(5) is not None
        assert stranger.poll() is None  # a recycled pid with another command line is never signalled
    assert not (tmp_path / "dev.json").exists()


def test_a_second_dev_on_one_folder_is_refused(tmp_path: Path) -> None:
    with _sleeper("merge-hold", "dev") as running:
        (tmp_path / "dev.json").write_text(json.dumps({"pid": running.pid, "children": {}}))
        with pytest.raises(dev.DevError, match="another `merge-hold dev`"):
            dev.clear_leftovers(tmp_path)
        assert running.poll() is None


# --- end to end ----------------------------------------------------------------------------------------


_env, _dev = clean_env, running_dev


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/status").exists() or "zombie" not in Path(f"/proc/{pid}/status").read_text()


def test_dev_then_simulate_holds_survive_a_restart(tmp_path: Path) -> None:
    folder, port = tmp_path / "data", free_port()
    with _dev(folder, port, tmp_path / "dev1.log") as first:
        state = json.loads((folder / "dev.json").read_text())
        assert state["url"] == f"http://127.0.0.1:{port}" and "password" not in json.dumps(state)
        simulated = subprocess.run([sys.executable, "-m", "merge_hold.cli", "simulate", "--data-dir", str(folder)],
                                   env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert simulated.returncode == 0, simulated.stderr
        assert "merge-hold: failure — Held by @alice: waiting for DB migration" in simulated.stdout
        # The demo workspace (a dry run on loopback): a room hold signed like Slack, its outcome reported
        # through the response_url that `simulate chat` listens on.
        chat = subprocess.run([sys.executable, "-m", "merge_hold.cli", "simulate", "chat", "--data-dir", str(folder),
                               "/hold acme/widgets release freeze"], env=_env(), cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert chat.returncode == 0, chat.stdout + chat.stderr
        assert "<- in the channel: @alice held acme/widgets (1 open PR): release freeze" in chat.stdout
        unheld = subprocess.run([sys.executable, "-m", "merge_hold.cli", "simulate", "chat", "/unhold acme/widgets",
                                 "--data-dir", str(folder)], env=_env(), cwd=ROOT, capture_output=True, text=True,
                                timeout=60)
        assert unheld.returncode == 0 and "lifted" in unheld.stdout, unheld.stdout + unheld.stderr
        # A command the server answers at once (no job, no response_url reply): that answer is the answer.
        started = time.monotonic()
        linked = subprocess.run([sys.executable, "-m", "merge_hold.cli", "simulate", "chat", "/hold link",
                                 "--data-dir", str(folder), "--wait", "30"], env=_env(), cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
        assert linked.returncode == 0 and f"open http://127.0.0.1:{port}/link/" in linked.stdout, linked
        assert time.monotonic() - started < 15 and "no reply" not in linked.stderr
        # The README's lines pasted in one go: each run reports what its own comment did.
        for action, said in (("unhold", "success — No holds"), ("hold", "failure — Held by @alice"),
                             ("unhold", "success — No holds"), ("hold", "failure — Held by @alice")):
            pasted = subprocess.run([sys.executable, "-m", "merge_hold.cli", "simulate", action, "--data-dir",
                                     str(folder)], env=_env(), cwd=ROOT, capture_output=True, text=True, timeout=30)
            assert pasted.returncode == 0 and said in pasted.stdout, (action, pasted.stdout + pasted.stderr)
        redis = Redis.from_url(state["redis_url"])
        recorded = [json.loads(item) for item in redis.lrange(keys.DRY_RUN_STATUSES, 0, -1)]
        assert recorded[0]["state"] == "failure" and "@alice" in recorded[0]["description"]
        assert recorded[0]["repo"] == "acme/widgets"
        redis.close()
        first.send_signal(signal.SIGTERM)
        assert first.wait(20) == 0
    log = (tmp_path / "dev1.log").read_text()
    assert "DRY RUN" in log and f"-m merge_hold.cli simulate --data-dir {folder}" in log
    assert f"http://127.0.0.1:{port}/login/demo" in log and "ada" in log
    assert "[dry-run] status merge-hold on acme/widgets@" in log and "Held by @alice" in log
    assert not (folder / "dev.json").exists()
    for name, pid in state["children"].items():
        assert not _alive(pid), f"{name} ({pid}) outlived dev"

    token = (folder / "dev-token").read_text().strip()
    with _dev(folder, port, tmp_path / "dev2.log"):
        assert json.loads((folder / "dev.json").read_text())["redis_url"] == state["redis_url"]  # same port
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/verdicts/acme/widgets/42",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=5) as answer:
            verdict = json.loads(answer.read())
        assert verdict["held"] is True and verdict["holds"][0]["holder"] == "alice"
        assert verdict["description"] == "Held by @alice: waiting for DB migration"
    assert f"log in with token {token}" in (tmp_path / "dev2.log").read_text()
