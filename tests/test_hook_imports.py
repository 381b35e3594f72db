"""The guard's import graph is its start-up cost (design §7): proved with ``python -X importtime`` on the
real guard process, for each path a tool call can take."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.hook_support import git_checkout, guard_argv, hold, payload, record, store, write_spec

NEVER = {"flask", "werkzeug", "github", "redis", "rq", "requests", "urllib3", "jwt", "cryptography", "yaml",
         "slack_sdk", "prometheus_client", "asyncio", "gunicorn"}
"""Heavy or server-side packages the guard must never load, whatever the tool call."""
NOT_FOR_NON_MERGES = NEVER | {"tree_sitter", "tree_sitter_bash", "json", "socket", "_socket", "ssl", "http",
                              "hashlib", "hook.verdicts.sources", "hook.verdicts.redis_client", "hook.evidence",
                              "hook.decide"}
"""A non-merge command pays for reading the spec and the tool call, and the detection prefilter only."""
NOT_FOR_REDIS_MERGES = NEVER | {"socket", "ssl", "http", "urllib", "json", "hashlib", "encodings.idna"}
"""A Redis lookup goes through `_socket` directly (`socket` costs 9 ms of enum) with an ASCII host (no
IDNA codec), needs no HTTP, and a record of a command without secrets needs neither `json` nor `hashlib`."""


def imported(argv: list[str], data: dict[str, Any], env: dict[str, str] | None = None) -> tuple[int, set[str]]:
    done = subprocess.run(argv, input=json.dumps(data).encode(), capture_output=True, timeout=30, check=False,
                          env=env)
    names = set()
    for line in done.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name)
            names.add(name.split(".")[0])
    assert names, done.stderr.decode()[:500]
    return done.returncode, names


def fast(spec: Path) -> list[str]:
    argv = guard_argv(spec)
    return [argv[0], "-X", "importtime", *argv[1:]]


@pytest.fixture()
def spec(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> Path:
    store(redis_client, "acme/widgets", 5, record("acme/widgets", 5, [hold("comment", "alice", "wait")]))
    return write_spec(tmp_path, redis_url)


@pytest.mark.parametrize(
    "data",
    [
        payload("ls -la && git status && pytest -q", cwd="/tmp"),
        payload("git log --merges --oneline | head", cwd="/tmp"),  # mentions merge, merges nothing
        payload('{"file_path": "/etc/hosts"}', cwd="/tmp", tool_name="Read"),
        payload('{"owner": "a", "repo": "b", "pullNumber": 1}', cwd="/tmp",
                tool_name="mcp__github__get_pull_request"),
    ],
)
def test_non_merge_paths_stay_light(spec: Path, data: dict[str, Any]) -> None:
    code, names = imported(fast(spec), data)
    assert code == 0 and "hook.spec" in names  # the spec was really read
    assert names & NOT_FOR_NON_MERGES == set()


READER_NEVER = NOT_FOR_NON_MERGES | {"os", "_collections_abc", "typing", "re", "enum", "dataclasses",
                                     "hook.shell.treesitter", "hook.detect.gitrepo", "hook.detect.gh"}
"""A non-merge the prefilter cannot settle is read in full, and pays only for the reader: the guard
runs with ``-S``, so ``os`` (and its ``_collections_abc``, 1-3 ms) would be its own cost here."""


@pytest.mark.parametrize("command", [
    'git commit -m "gh pr merge 5 once CI is green"',  # says merge: read in full, no merge
    'for f in src/*.py; do wc -l "$f"; done',  # a glob and "$f" could spell one: read in full
    'cd sub && x=$(pwd); echo "$x"',  # cd: the reader's path arithmetic
])
def test_the_full_reader_stays_light(spec: Path, tmp_path: Path, command: str) -> None:
    cwd = git_checkout(tmp_path / "co")
    code, names = imported(fast(spec), payload(command, cwd=str(cwd)))
    assert code == 0 and "hook.shell.interpreter" in names  # the reader really ran
    assert names & READER_NEVER == set()


def test_a_merge_with_a_redis_verdict_stays_light(spec: Path, tmp_path: Path) -> None:
    cwd = git_checkout(tmp_path / "co")
    code, names = imported(fast(spec), payload("gh pr merge 5 --squash -R acme/widgets", cwd=str(cwd)))
    assert code == 2
    assert "hook.verdicts.sources" in names and "hook.evidence" in names  # the path was really taken
    assert names & NOT_FOR_REDIS_MERGES == set()


@pytest.mark.parametrize(("command", "code"), [
    ("git push -u origin feature", 0),  # an own-name push: the held heads are read, no base is written
    ("git push origin main", 0),  # onto the base of held #5: git is asked, and #5's head is not there
    ("gh pr comment 5 -b /unhold", 2),  # a lift on held #5
])
def test_pushes_and_lifts_stay_as_light_as_a_merge(spec: Path, tmp_path: Path, command: str, code: int) -> None:
    cwd = git_checkout(tmp_path / "co", branch="feature")
    done, names = imported(fast(spec), payload(command, cwd=str(cwd)))
    assert done == code
    assert "hook.verdicts.sources" in names  # the path was really taken
    assert names & (NOT_FOR_REDIS_MERGES | {"subprocess", "threading", "re"}) == set()


def test_an_http_lookup_never_loads_requests(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("t")
    spec = write_spec(tmp_path, "http://127.0.0.1:9/", token_file=str(token))  # nothing listens: unknown
    code, names = imported(fast(spec), payload("gh pr merge 5 -R acme/widgets", cwd="/tmp"))
    assert code == 2 and "http" in names
    assert names & NEVER == set()


def test_the_console_script_path_stays_light(spec: Path) -> None:
    script = str(Path(sys.executable).parent / "merge-hold")
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    code, names = imported([script, "hook-guard", "--config", str(spec)],
                           payload("gh pr merge 5 -R acme/widgets", cwd="/tmp"), env)
    assert code == 2
    assert names & NEVER == set()
