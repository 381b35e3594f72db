"""`merge-hold reconcile [--rebuild]` shows its progress (issue 16 item 4): per repository, PRs done of
total redrawn in place on a terminal, one line per repository elsewhere, then a summary — the display
as a table of calls, then the real command under a pseudo-terminal and under a pipe."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from collections.abc import Callable

import pytest
from redis import Redis

from tests.conftest import ROOT
from tests.e2e_support import fixture, held_widgets, service_env
from tests.emulator import GitHubEmulator
from workers.ops.reconcile_progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def drive(progress: Progress, clock: Clock) -> None:
    for repo, total in (("acme/widgets", 3), ("acme/gadgets", 0)):
        progress.start(repo)
        for done in range(1, total + 1):
            clock.now += 0.01  # faster than a redraw: only the last step of the phase is drawn
            progress.step("rebuild", done, total)
        for done in range(1, total + 1):
            clock.now += 0.2
            progress.step("record", done, total)
        progress.finish(repo, total, 1 if total else 0)


def test_without_a_terminal_one_line_per_repository_then_the_summary() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, 2, tty=False, clock=clock)
    drive(progress, clock)
    summary = progress.summary(rebuild=True)
    assert out.getvalue().splitlines() == [
        "acme/widgets: 3 open PRs, 1 status posted",
        "acme/gadgets: 0 open PRs, 0 statuses posted",
        summary,
    ]
    assert summary.startswith("reconciled 2 repos, re-read from GitHub: 3 open PRs, 1 status posted in ")
    assert "\r" not in out.getvalue()
    one = Progress(io.StringIO(), 1, tty=False, clock=clock)
    one.finish("acme/widgets", 1, 2)
    assert one.summary(rebuild=False).startswith("reconciled 1 repo: 1 open PR, 2 statuses posted in ")


def test_on_a_terminal_each_repositorys_line_is_redrawn_in_place() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, 2, tty=True, clock=clock)
    drive(progress, clock)
    progress.summary(rebuild=False)
    lines = out.getvalue().split("\n")
    first = [frame.rstrip() for frame in lines[0].split("\r") if frame]
    assert first == [
        "[1/2] acme/widgets: starting…",
        "[1/2] acme/widgets: re-reading from GitHub 3/3 PRs",  # 1/3 and 2/3 came too fast to draw
        "[1/2] acme/widgets: recomputing 1/3 PRs",
        "[1/2] acme/widgets: recomputing 2/3 PRs",
        "[1/2] acme/widgets: recomputing 3/3 PRs",
        "[1/2] acme/widgets: 3 open PRs, 1 status posted",
    ]
    assert lines[1].split("\r")[-1].rstrip() == "[2/2] acme/gadgets: 0 open PRs, 0 statuses posted"
    assert lines[2].startswith("reconciled 2 repos: 3 open PRs")
    # A shorter frame blanks what the longer one before it left on the line.
    longer, shorter = "re-reading from GitHub 3/3 PRs", "recomputing 1/3 PRs"
    assert f"\r[1/2] acme/widgets: {shorter}{' ' * (len(longer) - len(shorter))}\r" in out.getvalue()


# --- the command ---------------------------------------------------------------------------------------


def _world(emu: GitHubEmulator, redis_url: str) -> dict[str, str]:
    svc = held_widgets(emu, redis_url)  # acme/widgets #5 held by alice, #6 free
    emu.add_repo("acme/gadgets", installation_id=3)
    emu.add_pull("acme/gadgets", 1, head_sha="1" * 40, head_ref="g1")
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = 3
    added["repositories_added"] = [{"full_name": "acme/gadgets", "private": False}]
    svc.deliver("installation_repositories", added)
    svc.drain()
    return service_env(svc.settings)


def _under_a_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(60), b"".join(chunks).decode(errors="replace")


RECONCILE = [sys.executable, "-m", "merge_hold.cli", "reconcile", "--rebuild"]


@pytest.mark.parametrize("run", [
    pytest.param(lambda env: _under_a_terminal(RECONCILE, env), id="terminal"),
    pytest.param(lambda env: (lambda done: (done.returncode, done.stdout + done.stderr))(
        subprocess.run(RECONCILE, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)), id="pipe"),
])
def test_reconcile_shows_each_repository_and_a_summary(github_emulator: GitHubEmulator, redis_client: Redis,
                                                       redis_url: str,
                                                       run: Callable[[dict[str, str]], tuple[int, str]]) -> None:
    code, output = run(_world(github_emulator, redis_url))
    assert code == 0, output
    terminal = "\r" in output
    text = output.replace("\r\n", "\n")
    if terminal:
        assert "\r[1/2] acme/gadgets: re-reading from GitHub 1/1 PRs" in text
        assert "\r[2/2] acme/widgets: recomputing 2/2 PRs" in text
        assert "[2/2] acme/widgets: 2 open PRs, " in text
    else:
        lines = text.strip().splitlines()
        assert lines[0].startswith("acme/gadgets: 1 open PR, "), text
        assert lines[1].startswith("acme/widgets: 2 open PRs, ")
    assert "reconciled 2 repos, re-read from GitHub: 3 open PRs" in text
