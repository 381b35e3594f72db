"""The agent guard reading verdicts the running service wrote (issue: "a held PR's `gh pr merge` is
blocked … by the installed hook reading a verdict written by the running service").

A `/hold` goes in as a signed webhook; real rq work publishes the verdict; the guard, run exactly as
the installed settings run it, reads it as the Redis ACL user (or over the HTTP API) and blocks.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from app import create_app
from hook.tools.acl import apply
from merge_hold.tokens import create
from tests.e2e_support import Service, held_widgets
from tests.emulator import GitHubEmulator
from tests.hook_support import git_checkout, payload, run_guard, write_spec


@pytest.fixture()
def held(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str) -> Iterator[Service]:
    yield held_widgets(github_emulator, redis_url)


def acl_source(redis_url: str) -> str:
    apply(redis_url, "mh-hook-e2e", "s3cret-pass")
    host_port, _, db = redis_url.removeprefix("redis://").rpartition("/")
    return f"redis://mh-hook-e2e:s3cret-pass@{host_port.rpartition('@')[2]}/{db or 0}"


@pytest.mark.parametrize(
    ("command", "blocked"),
    [
        ("gh pr merge 5 --repo acme/widgets --squash", True),
        ("gh pr merge https://github.com/acme/widgets/pull/5", True),
        ("GH_REPO=acme/widgets gh pr merge '#5' --admin", True),
        ("cd . && gh pr merge --squash", True),  # the current branch's PR, through the head index
        ("gh pr merge feature/login -R acme/widgets", True),
        ("bash -c 'gh pr merge 5 -R acme/widgets'", True),
        ("gh api -X PUT repos/acme/widgets/pulls/5/merge", True),
        ("gh pr merge 6 --repo acme/widgets", False),
        ("gh pr view 5 --repo acme/widgets", False),
        ('echo "gh pr merge 5"', False),
    ],
)
def test_installed_guard_blocks_a_held_pr_from_the_services_verdict(
    held: Service, redis_url: str, tmp_path: Path, command: str, blocked: bool
) -> None:
    checkout = git_checkout(tmp_path / "widgets", branch="feature/login")
    spec = write_spec(tmp_path, acl_source(redis_url))
    done = run_guard(spec, payload(command, cwd=str(checkout)))
    assert done.returncode == (2 if blocked else 0), done.stderr
    if blocked:
        assert "acme/widgets#5" in done.stderr
        assert "alice" in done.stderr and "waiting for DB migration" in done.stderr
        assert "/unhold" in done.stderr


def test_guard_reads_the_same_verdict_over_the_http_api(held: Service, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    token = create(tokens, "agent-hook")
    app = create_app(dataclasses.replace(held.settings, api_tokens_file=str(tokens)))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        (tmp_path / "token").write_text(token)
        spec = write_spec(tmp_path, f"http://127.0.0.1:{server.server_port}", token_file=str(tmp_path / "token"))
        done = run_guard(spec, payload("gh pr merge 5 --repo acme/widgets", cwd=str(tmp_path)))
        assert done.returncode == 2, done.stderr
        assert "waiting for DB migration" in done.stderr
    finally:
        server.shutdown()


def test_a_push_of_the_held_head_onto_its_base_is_blocked_from_what_the_workers_wrote(
    github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path
) -> None:
    """The held PR's head is a real commit of the agent's checkout; the workers publish its base and head
    SHA (`core.keys.held_heads`); the guard, as the ACL user, blocks the push that contains it."""
    import subprocess

    checkout = git_checkout(tmp_path / "widgets", branch="main")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in (["commit", "-q", "--allow-empty", "-m", "base"], ["checkout", "-q", "-b", "feature/login"],
                 ["commit", "-q", "--allow-empty", "-m", "login"]):
        subprocess.run(["git", "-C", str(checkout), *args], check=True, capture_output=True, env=env)
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()
    held_widgets(github_emulator, redis_url, head5=head)
    spec = write_spec(tmp_path, acl_source(redis_url))
    for command, code in (("git push origin feature/login:main", 2), ("git push origin HEAD:main", 2),
                          ("git push origin main", 0), ("git push origin feature/login", 0)):
        done = run_guard(spec, payload(command, cwd=str(checkout)))
        assert done.returncode == code, (command, done.stderr)
        if code == 2:
            assert "acme/widgets#5 is on hold" in done.stderr and "alice" in done.stderr and head[:12] in done.stderr
