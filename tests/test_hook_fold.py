"""Records and the SessionEnd fold: scrubbing, tolerant reading, the cap, rotation, and delivery to a real
Redis stream (as the hook's ACL user would) and to the real app's ``POST /api/v1/hook-events``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys
from hook import evidence
from hook.tools.fold import FOLD_CAP, fold
from merge_hold.redis_server import free_port
from tests.hook_support import write_spec

# -- scrubbing -------------------------------------------------------------------------------------

SECRETS = [
    ("GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh pr merge 5", "ghp_abcdefghij"),
    ("gh pr merge 5 # gho_abcdefghijklmnopqrstuvwxyz0123", "gho_abcdefghij"),
    ("curl -H 'Authorization: token ghs_0123456789abcdefghij' https://api.github.com", "ghs_0123456789"),
    ('curl -H "Authorization: Bearer eyJhbGciOi.payload.sig" https://x', "eyJhbGciOi"),
    ("curl -H 'authorization:Basic dXNlcjpwYXNz' https://x", "dXNlcjpwYXNz"),
    ("export T=github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0"),
    ("SLACK=xoxb-1234-5678-abcdefghijkl ./notify", "xoxb-1234-5678"),
    ("curl https://api.example.com/x?access_token=s3cr3tvalue&page=2", "s3cr3tvalue"),
    ("mysql --password hunter2 -e 'select 1'", "hunter2"),
    ("tool --token='quoted-secret-value'", "quoted-secret-value"),
    ("git push https://x-access-token:ghs_zzzzzzzzzzzzzzzzzzzz@github.com/o/r HEAD:main", "zzzzzzzzzz"),
    ("redis-cli -u redis://mh-hook:PaSsWoRd@redis:6379/0 get x", "PaSsWoRd"),
    ("curl -u bot:PaSsWoRd https://x", "PaSsWoRd"),
    ("DB_PASSWORD=PaSsWoRd ./migrate", "PaSsWoRd"),
    ("echo 'client_secret: PaSsWoRd'", "PaSsWoRd"),
]


@pytest.mark.parametrize(("command", "secret"), SECRETS)
def test_scrub_hides_secret_rows(command: str, secret: str) -> None:
    scrubbed = evidence.scrub(command)
    assert secret not in scrubbed
    assert evidence.MASK in scrubbed
    assert evidence.scrub(scrubbed) == scrubbed  # idempotent: re-scrubbing at fold time changes nothing


@pytest.mark.parametrize(
    "command",
    ["gh pr merge 5 --squash -R acme/widgets", "git push origin HEAD:refs/heads/main", "echo $GH_TOKEN",
     'curl -H "Authorization: Bearer $TOKEN" -X PUT https://api.github.com/repos/o/r/pulls/5/merge'
     .replace("Authorization: Bearer $TOKEN", "Accept: application/json"),
     "gh api graphql -f query='mutation { mergePullRequest(input: {pullRequestId: \"PR_kw\"}) { x } }'"],
)
def test_scrub_keeps_ordinary_commands(command: str) -> None:
    assert evidence.scrub(command) == command


def test_record_shape_digest_and_clip() -> None:
    command = "GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh pr merge 5 " + "x" * 5000
    rec = evidence.make_record(
        spec_version=1, time_iso="2026-01-05T10:00:00Z",
        payload={"session_id": "s", "tool_use_id": "toolu_1", "tool_name": "Bash", "cwd": 5},
        command=command, repo="acme/widgets", pr=5, decision="block", code="held",
        reason="held by @alice", via="gh_pr_merge",
    )
    assert set(rec) == {"spec_version", "time", "session_id", "tool_use_id", "tool_name", "repo", "pr", "via",
                        "decision", "code", "reason", "command_digest", "command"}
    assert rec["command_digest"] == "sha256:" + __import__("hashlib").sha256(command.encode()).hexdigest()
    assert "ghp_abc" not in rec["command"] and len(rec["command"]) < 4100 and rec["command"].endswith("characters]")


# -- folding ---------------------------------------------------------------------------------------


def _write(path: Path, items: list[object]) -> None:
    with path.open("a") as handle:
        for item in items:
            handle.write((item if isinstance(item, str) else json.dumps(item)) + "\n")


def _stream(client: redis.Redis) -> list[dict[str, object]]:
    entries: list[Any] = client.xrange(keys.HOOK_EVENTS) or []
    return [json.loads(fields[b"data"]) for _, fields in entries]


def test_fold_to_redis_is_tolerant_scrubbed_and_rotates(redis_client: redis.Redis, redis_url: str,
                                                        tmp_path: Path) -> None:
    spec = write_spec(tmp_path, redis_url)
    rec_file = tmp_path / "records.jsonl"
    _write(rec_file, [
        {"pr": 1, "command": "GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 gh pr merge 1", "nested": {"x": 1}},
        "{truncated", "[1, 2]", "", "\x00\xff garbage",
        {"pr": 2, "reason": "Bearer abcdefghijkl"},
    ])
    code, line = fold(str(spec))
    assert (code, line) == (0, "merge-hold: folded 2 hook records into the audit log (3 unreadable lines skipped)")
    events = _stream(redis_client)
    assert [e["pr"] for e in events] == [1, 2]
    assert events[0]["command"] == "GH_TOKEN=*** gh pr merge 1"
    assert "nested" not in events[0] and events[1]["reason"] == "Bearer ***"
    assert not rec_file.exists() and list(tmp_path.glob("records.jsonl*")) == []
    assert fold(str(spec)) == (0, "merge-hold: folded 0 hook records into the audit log")


def test_fold_caps_keeping_the_newest(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    spec = write_spec(tmp_path, redis_url)
    _write(tmp_path / "records.jsonl", [{"n": i} for i in range(FOLD_CAP + 7)])
    code, line = fold(str(spec))
    assert code == 0 and f"7 over the cap of {FOLD_CAP} dropped" in line
    events = _stream(redis_client)
    assert len(events) == FOLD_CAP and events[0] == {"n": 7} and events[-1] == {"n": FOLD_CAP + 6}


def test_failed_fold_keeps_records_for_the_next(redis_client: redis.Redis, redis_url: str,
                                                tmp_path: Path) -> None:
    down = write_spec(tmp_path, f"redis://127.0.0.1:{free_port()}/0")
    rec_file = tmp_path / "records.jsonl"
    _write(rec_file, [{"n": 1}])
    code, line = fold(str(down))
    assert code == 1 and "records kept" in line
    _write(rec_file, [{"n": 2}])  # a guard call after the failed fold
    evidence.append(str(rec_file), [{"n": 3}])
    code, line = fold(str(write_spec(tmp_path, redis_url)))
    assert code == 0 and [e["n"] for e in _stream(redis_client)] == [1, 2, 3]
    assert list(tmp_path.glob("records.jsonl*")) == []


def test_fold_through_the_real_app(redis_client: redis.Redis, tmp_path: Path) -> None:
    from tests.webapp_support import make_app, serving

    app, token = make_app(redis_client, tmp_path)
    (tmp_path / "token").write_text(token + "\n")
    evidence.append(str(tmp_path / "records.jsonl"), [{"repo": "acme/widgets", "pr": 5, "decision": "block"}])
    with serving(app) as base:
        spec = write_spec(tmp_path, base, token_file=str(tmp_path / "token"))
        assert fold(str(spec)) == (0, "merge-hold: folded 1 hook record into the audit log")
    assert _stream(redis_client) == [{"decision": "block", "pr": 5, "repo": "acme/widgets"}]


@pytest.mark.parametrize(
    ("spec_text", "code", "needle"),
    [(None, 1, "fold skipped"), ("{", 1, "not valid JSON"),
     ('{"spec_version": 1, "verdict_source": "redis://h/0", "record_file": null}', 0, "nothing to fold")],
)
def test_fold_cli_rows(tmp_path: Path, spec_text: str | None, code: int, needle: str) -> None:
    spec = tmp_path / "spec.json"
    if spec_text is not None:
        spec.write_text(spec_text)
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "fold", "--config", str(spec)],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == code
    assert needle in done.stdout and done.stdout.count("\n") == 1 and "Traceback" not in done.stderr


def test_fold_cli_bad_arguments_never_exit_2() -> None:
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "fold"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 64
