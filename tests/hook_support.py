"""What the agent-guard tests and `bench/bench_hook.py` share: real hook input, real verdict records in a
real Redis, spec files, and the guard run the way Claude Code runs it (a subprocess, JSON on stdin)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core import branch_freezes, keys, verdict_format
from core.holds import Hold, Source
from core.repo_config import RepoConfig
from core.verdict import Verdict, verdict_record
from hook.tools.claude_settings import fast_guard_command

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime.now(UTC).replace(microsecond=0)

CC_KEYS = ("session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort",
           "hook_event_name", "tool_name", "tool_input", "tool_use_id")
"""The key set Claude Code 2.1.328 sends to a PreToolUse hook (design §6)."""


def payload(command: str, *, cwd: str, tool_name: str = "Bash", **extra: Any) -> dict[str, Any]:
    """A PreToolUse input as Claude Code 2.1.328 writes it, plus a key it may add one day."""
    tool_input: dict[str, Any] = ({"command": command, "description": "Run the command"}
                                  if tool_name in ("Bash", "PowerShell", "Monitor") else json.loads(command))
    data = {
        "session_id": "0b6c3a1e-5f0f-4e7e-9d55-6d2f4b0c1a77",
        "transcript_path": "/root/.claude/projects/-work/0b6c3a1e-5f0f-4e7e-9d55-6d2f4b0c1a77.jsonl",
        "cwd": cwd,
        "prompt_id": "d3b07384-d9a0-4c9b-8f3e-5a1c2b3d4e5f",
        "permission_mode": "default",
        "effort": {"level": "medium"},  # an object, as Claude Code 2.1.328 sends it
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABCDEFGHJKMNPQRSTVWXYZ",
        "some_future_key": {"nested": [1, 2, 3]},
    }
    data.update(extra)
    return data


def hold(source: str, holder: str, reason: str, *, repo: str = "acme/widgets", number: int = 5,
         expires_at: datetime | None = None, scope: str | None = None, origin: str = "") -> Hold:
    return Hold(id=f"{source}:{holder}", source=Source(source), scope=scope or f"{repo}#{number}",
                holder=holder, reason=reason, created_at=NOW - timedelta(hours=1),
                expires_at=expires_at, origin=origin)


def record(repo: str, number: int, holds: list[Hold], *, base: str = "main", head_ref: str = "feature",
           error: str | None = None, head_sha: str = "3f2a9c1" * 5 + "abcde",
           hold_label: str | None = "do-not-merge/hold", default_branch: str | None = "main") -> dict[str, Any]:
    """A verdict record exactly as the workers store it (`core.verdict.verdict_record`); ``default_branch``
    None: as a server that does not publish ``default_base`` stores it."""
    verdict = Verdict(repo, number, tuple(holds), head_sha, base, head_ref, error=error)
    state = "error" if error else ("failure" if verdict.held else "success")
    return verdict_record(verdict, version=7, computed_at=NOW, hold_label=hold_label, default_branch=default_branch,
                          status={"state": state, "description": "Held" if holds else "No holds"})


def freezes_record(repo: str, holds: list[Hold] | tuple[Hold, ...] = (), *, config: RepoConfig | None = None,
                   default_branch: str | None = "main", now: datetime | None = None) -> dict[str, Any]:
    """A repo's branch freezes record as the workers build it (`core.branch_freezes`), from its room holds
    (scoped to the repo, a branch glob or the org) and its config's windows."""
    return branch_freezes.build(repo, config=config or RepoConfig(), config_error=None, scoped_holds=holds,
                                default_branch=default_branch, now=now or NOW)


def store_freezes(redis: Any, repo: str, record: dict[str, Any] | str | None) -> None:
    """The repo's branch freezes record as the workers write it (None: none written)."""
    if record is None:
        redis.delete(keys.branch_freezes(repo))
    else:
        redis.set(keys.branch_freezes(repo), record if isinstance(record, str) else json.dumps(record))


def store(redis: Any, repo: str, number: int, rec: dict[str, Any] | str | None, *, managed: bool = True,
          head: str | None = None) -> None:
    """Write what the workers write for one PR: verdict record, managed flag, held set, head index (and, for a
    managed repo without one, a branch freezes record with nothing frozen)."""
    if managed:
        redis.set(keys.managed(repo), "1")
        if not redis.exists(keys.branch_freezes(repo)):
            store_freezes(redis, repo, freezes_record(repo))
    if rec is not None:
        redis.set(keys.verdict(repo, number), rec if isinstance(rec, str) else verdict_format.encode_verdict(rec))
        if isinstance(rec, dict) and rec.get("held"):
            redis.sadd(keys.held_prs(repo), number)
            redis.hset(keys.held_heads(repo), str(number),
                       verdict_format.encode_held_head(rec.get("base"), rec.get("head_sha"), rec.get("description")))
    if head is not None:
        redis.set(keys.head_index(repo, head), number)


def write_spec(directory: Path, source: str, **fields: Any) -> Path:
    spec = {"spec_version": 1, "verdict_source": source, "token_file": None,
            "record_file": str(directory / "records.jsonl"), "timeout_ms": 800}
    spec.update(fields)
    path = directory / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def guard_argv(spec: Path | str, *, console_script: bool = False) -> list[str]:
    if console_script:
        return [str(Path(sys.executable).parent / "merge-hold"), "hook-guard", "--config", str(spec)]
    return [*shlex.split(fast_guard_command()), "--config", str(spec)]


def run_guard(spec: Path | str, data: dict[str, Any] | bytes, *, console_script: bool = False,
              timeout: float = 20) -> subprocess.CompletedProcess[str]:
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    done = subprocess.run(guard_argv(spec, console_script=console_script), input=stdin,
                          capture_output=True, timeout=timeout, check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                       done.stderr.decode())


def git_checkout(path: Path, remote: str = "https://github.com/acme/widgets.git",
                 branch: str = "feature") -> Path:
    """A real git checkout whose ``origin`` is ``remote``, on ``branch`` (repo resolution by cwd)."""
    path.mkdir(parents=True, exist_ok=True)
    quiet = {"check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], **quiet)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], **quiet)  # type: ignore[call-overload]
    return path


def git(where: Path, *args: str) -> str:
    """``git -C WHERE ARGS…`` with a fixed author and committer and nothing of the developer's own
    configuration (``HOME`` is ``where``); its output, stripped."""
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": str(where)})
    return done.stdout.strip()


def commit(where: Path, name: str) -> str:
    """A file ``name`` (its text its name) committed in ``where``: the new commit's SHA."""
    (where / name).write_text(name)
    git(where, "add", name)
    git(where, "commit", "-q", "-m", name)
    return git(where, "rev-parse", "HEAD")


class CountingRelay:
    """A transparent TCP relay in front of a real Redis that counts request turns: how many times the
    client starts sending after the server has answered (one turn = one round trip)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        import socket
        import threading

        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.turns = 0
        self._last = "server"
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            for src, dst, side in ((client, server, "client"), (server, client, "server")):
                thread = threading.Thread(target=self._pump, args=(src, dst, side), daemon=True)
                thread.start()
                self._threads.append(thread)

    def _pump(self, src: Any, dst: Any, side: str) -> None:
        try:
            while chunk := src.recv(65536):
                with self._lock:
                    if side == "client" and self._last != "client":
                        self.turns += 1
                    self._last = side
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                sock.close()  # closing a closed socket is a no-op

    def url(self, credentials: str = "", db: int = 0) -> str:
        return f"redis://{credentials}127.0.0.1:{self.port}/{db}"

    def close(self) -> None:
        self.listener.close()
