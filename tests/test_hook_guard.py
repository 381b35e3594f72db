"""The guard as Claude Code runs it: a subprocess, the exact PreToolUse JSON of Claude Code 2.1.328 on
stdin, verdicts written to a real Redis the way the workers write them (or served by the real app).

Exit 0 allows, 2 blocks (the reason on stderr, for the agent), 1 is the guard's own trouble (one line,
fail open). Every row names what the agent typed and what must happen.
"""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from core import verdict_format
from hook.judgement import how_to_lift
from hook.tools.claude_settings import block_for
from merge_hold.redis_server import free_port
from tests.hook_support import NOW, git_checkout, hold, payload, record, run_guard, store, write_spec

REPO = "acme/widgets"
ALICE = hold("comment", "alice", "waiting for the DB migration")


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    """acme/widgets managed: #5 held by alice (head feature/login, base main), #6 free (head free-branch)."""
    store(redis_client, REPO, 5, record(REPO, 5, [ALICE], head_ref="feature/login"), head="feature/login")
    store(redis_client, REPO, 6, record(REPO, 6, [], head_ref="free-branch"), head="free-branch")
    checkout = git_checkout(tmp_path / "widgets", branch="feature/login")
    return {"redis": redis_client, "url": redis_url, "tmp": tmp_path, "cwd": str(checkout)}


def guard(world: dict[str, Any], command: str, *, cwd: str | None = None, tool_name: str = "Bash",
          **spec: Any) -> subprocess.CompletedProcess[str]:
    spec_path = write_spec(world["tmp"], spec.pop("source", world["url"]), **spec)
    return run_guard(spec_path, payload(command, cwd=cwd or world["cwd"], tool_name=tool_name))


def records_of(world: dict[str, Any]) -> list[dict[str, Any]]:
    path = world["tmp"] / "records.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def assert_own_error(done: subprocess.CompletedProcess[str], needle: str = "") -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("merge-hold: guard error (allowing): ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert needle in done.stderr


# -- the verdict decides -----------------------------------------------------------------------------

ROWS = [
    # (what the agent runs, expected exit, a phrase stderr must hold)
    ("gh pr merge 5 --squash -R acme/widgets", 2, "acme/widgets#5 is on hold"),
    ("gh pr merge 5 --repo=Acme/Widgets --squash", 2, "@alice"),
    ("cd /tmp && GH_REPO=acme/widgets gh pr merge 5", 2, "waiting for the DB migration"),
    ("gh pr merge https://github.com/acme/widgets/pull/5", 2, "/unhold"),
    ("gh pr merge 6 -R acme/widgets", 0, ""),  # free
    ("gh pr merge 5 -R acme/other", 0, ""),  # a repo merge-hold does not manage
    ("gh pr merge feature/login -R acme/widgets", 2, "acme/widgets#5"),  # branch, via the head index
    ("gh pr merge free-branch -R acme/widgets", 0, ""),
    ("gh pr merge", 2, "acme/widgets#5"),  # no selector: the current branch's PR
    ("gh api -X PUT repos/acme/widgets/pulls/5/merge", 2, "acme/widgets#5"),
    ("gh pr view 5 -R acme/widgets", 0, ""),
    ("gh pr merge 5 -R acme/widgets --disable-auto", 0, ""),
    ("echo 'gh pr merge 5 -R acme/widgets'", 0, ""),
    ("ls -la && git status", 0, ""),
]


@pytest.mark.parametrize(("command", "code", "phrase"), ROWS)
def test_verdict_rows(world: dict[str, Any], command: str, code: int, phrase: str) -> None:
    done = guard(world, command)
    assert done.returncode == code, done.stderr
    if code == 0:
        assert done.stderr == "" and done.stdout == ""
    else:
        assert phrase in done.stderr


def test_held_message_names_everything_the_agent_needs(world: dict[str, Any]) -> None:
    holds = [
        ALICE,
        hold("review", "bob", "changes requested"),
        hold("label", "", "label do-not-merge/hold"),
        hold("room", "carol", "release freeze", scope="acme/widgets@release/*", origin="#releases",
             expires_at=NOW + timedelta(days=1)),
        hold("freeze", "weekend", "freeze weekend until Mon 06:00 UTC", scope="acme/widgets@main",
             origin="schedule:weekend", expires_at=NOW + timedelta(days=2)),
    ]
    rec = record(REPO, 7, holds)
    rec["holds"][2]["id"] = "label:do-not-merge/hold"
    store(world["redis"], REPO, 7, rec)
    done = guard(world, "gh pr merge 7 -R acme/widgets")
    assert done.returncode == 2
    text = done.stderr
    for phrase in ["acme/widgets#7 is on hold", "@alice", "waiting for the DB migration",
                   "@alice comments `/unhold`", "@bob approves the PR, or the changes-requested review is dismissed",
                   "remove the label `do-not-merge/hold`", "`/unhold acme/widgets@release/*` in the chat room",
                   "#releases", "wait until the freeze window `weekend` ends",
                   "ask the user", "Do not work around the hold"]:
        assert phrase in text, phrase


@pytest.mark.parametrize(("origin", "says", "never"), [
    ("slack:acme/#releases", "runs `/unhold acme/widgets` in the chat room (slack:acme/#releases)", "dashboard"),
    ("dashboard", "thaws `acme/widgets` on merge-hold's dashboard (Rooms)", "in the chat room (dashboard)"),
    ("api:release-bot", "over merge-hold's holds API (token `release-bot`)", "in the chat room (api:"),
])
def test_a_room_hold_is_lifted_where_it_was_placed(origin: str, says: str, never: str) -> None:
    told = how_to_lift({"source": "room", "scope": "acme/widgets", "origin": origin, "holder": "ada"})
    assert says in told and never not in told


def test_expired_holds_no_longer_count(world: dict[str, Any]) -> None:
    stale = hold("comment", "dave", "5 minutes", expires_at=NOW - timedelta(minutes=1))
    store(world["redis"], REPO, 8, record(REPO, 8, [stale]))
    assert guard(world, "gh pr merge 8 -R acme/widgets").returncode == 0
    mixed = [stale, hold("comment", "erin", "still here", expires_at=NOW + timedelta(hours=1))]
    store(world["redis"], REPO, 9, record(REPO, 9, mixed))
    done = guard(world, "gh pr merge 9 -R acme/widgets")
    assert done.returncode == 2 and "@erin" in done.stderr and "@dave" not in done.stderr


# -- doubt: on_unknown ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prepare", "on_unknown", "code", "phrase"),
    [
        ("missing", None, 2, "no verdict is recorded"),
        ("missing", "allow", 0, ""),
        ("error", None, 2, "repo config invalid"),
        ("schema", None, 2, "unknown format"),
        ("legacy-schema", None, 2, "unknown format"),
        ("garbage", None, 2, "not valid JSON"),
        ("garbage", "allow", 0, ""),
    ],
)
def test_unknown_verdict_rows(world: dict[str, Any], prepare: str, on_unknown: str | None, code: int,
                              phrase: str) -> None:
    rec: dict[str, Any] | str | None = {
        "missing": None,
        "error": record(REPO, 12, [], error="repo config invalid: line 3"),
        # a stored format this hook does not know (a newer engine's): never read as free
        "schema": json.dumps({**verdict_format.pack_verdict(record(REPO, 12, [])), "f": 99}),
        "legacy-schema": json.dumps({**record(REPO, 12, []), "schema": 2}),  # the unpacked shape, schema 2
        "garbage": "{truncated",
    }[prepare]
    store(world["redis"], REPO, 12, rec)
    spec = {"on_unknown": on_unknown} if on_unknown else {}
    done = guard(world, "gh pr merge 12 -R acme/widgets", **spec)
    assert done.returncode == code, done.stderr
    assert phrase in done.stderr
    if code == 2:
        assert "on_unknown: block" in done.stderr and "ask the user" in done.stderr


@pytest.mark.parametrize(("on_unknown", "code"), [(None, 2), ("allow", 0)])
def test_unreachable_redis_is_unknown(world: dict[str, Any], on_unknown: str | None, code: int) -> None:
    spec = {"on_unknown": on_unknown} if on_unknown else {}
    done = guard(world, "gh pr merge 5 -R acme/widgets", source=f"redis://127.0.0.1:{free_port()}/0", **spec)
    assert done.returncode == code
    assert ("unreachable" in done.stderr) == (code == 2)


def test_a_silent_redis_costs_no_more_than_the_budget(world: dict[str, Any]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts at TCP level, never answers
    try:
        started = time.monotonic()
        done = guard(world, "gh pr merge 5 -R acme/widgets", timeout_ms=300,
                     source=f"redis://127.0.0.1:{listener.getsockname()[1]}/0")
        elapsed = time.monotonic() - started
    finally:
        listener.close()
    assert done.returncode == 2 and "time budget" in done.stderr
    assert elapsed < 2.0


def test_non_merge_commands_never_look_anything_up(world: dict[str, Any]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        done = guard(world, "pytest -q && git log --oneline", timeout_ms=5000,
                     source=f"redis://127.0.0.1:{listener.getsockname()[1]}/0")
    finally:
        listener.close()
    assert (done.returncode, done.stderr) == (0, "")


# -- undetermined targets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "cwd", "spec", "code", "phrase"),
    [
        ('gh pr merge "$PR" -R acme/widgets', None, {}, 2, "has PRs on hold: #5"),
        ('gh pr merge "$PR" -R acme/quiet', None, {}, 0, ""),
        ('gh pr merge "$PR" -R acme/unmanaged', None, {}, 0, ""),
        ('gh pr merge "$PR" -R acme/widgets', None, {"on_undetermined": "allow"}, 0, ""),
        ('gh pr merge "$PR" -R acme/quiet', None, {"on_undetermined": "block"}, 2, "on_undetermined: block"),
        ('gh pr merge "$PR"', "/", {}, 2, "on_unknown: block"),  # not even the repository is known
        ('gh pr merge "$PR"', "/", {"on_unknown": "allow"}, 0, ""),
        ('gh pr merge "$PR"', "/", {"on_undetermined": "allow"}, 0, ""),
    ],
)
def test_undetermined_rows(world: dict[str, Any], command: str, cwd: str | None, spec: dict[str, Any],
                           code: int, phrase: str) -> None:
    store(world["redis"], "acme/quiet", 1, record("acme/quiet", 1, []))
    done = guard(world, command, cwd=cwd, **spec)
    assert done.returncode == code, done.stderr
    assert phrase in done.stderr


# -- git push of a held PR's head to its base: tests/test_hook_push.py (real git repositories) ----------


# -- MCP merge tools -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_name", "tool_input", "code"),
    [
        ("mcp__github__merge_pull_request", {"owner": "acme", "repo": "widgets", "pullNumber": 5}, 2),
        ("mcp__gh__merge_pull_request", {"owner": "acme", "repo": "widgets", "pull_number": 6}, 0),
        ("mcp__github__update_pull_request_branch", {"owner": "acme", "repo": "widgets", "pullNumber": 5}, 0),
        ("Read", {"file_path": "/etc/hosts"}, 0),
    ],
)
def test_mcp_rows(world: dict[str, Any], tool_name: str, tool_input: dict[str, Any], code: int) -> None:
    done = guard(world, json.dumps(tool_input), tool_name=tool_name)
    assert done.returncode == code, done.stderr


# -- records -------------------------------------------------------------------------------------------


def test_each_judged_merge_is_recorded_scrubbed(world: dict[str, Any]) -> None:
    command = "GH_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 gh pr merge 5 -R acme/widgets && gh pr merge 6"
    done = guard(world, command)
    assert done.returncode == 2
    rows = records_of(world)
    assert [(r["repo"], r["pr"], r["decision"], r["code"]) for r in rows] == [
        (REPO, 5, "block", "held"), (REPO, 6, "allow", "free")]
    first = rows[0]
    assert first["session_id"] == "0b6c3a1e-5f0f-4e7e-9d55-6d2f4b0c1a77"
    assert first["tool_use_id"] == "toolu_01ABCDEFGHJKMNPQRSTVWXYZ" and first["spec_version"] == 1
    assert "ghp_abcdefghij" not in first["command"] and first["command"].startswith("GH_TOKEN=***")
    assert first["command_digest"].startswith("sha256:") and "alice" in first["reason"]
    assert guard(world, "git status").returncode == 0 and len(records_of(world)) == 2  # non-merges: none


# -- the guard's own trouble fails open ------------------------------------------------------------------

BAD_INPUT = [b"", b"null", b"[]", b"not json", b'{"tool_name": "Bash"}', b'{"tool_name": 5, "tool_input": {}}',
             b"\xff\xfe", b"[" * 50000, b'{"tool_name": "Bash", "tool_input": {"command": "gh pr merge 5"}']


@pytest.mark.parametrize("stdin", BAD_INPUT)
def test_malformed_input_fails_open(world: dict[str, Any], stdin: bytes) -> None:
    assert_own_error(run_guard(write_spec(world["tmp"], world["url"]), stdin))


@pytest.mark.parametrize(
    ("spec_text", "needle"),
    [
        (None, "cannot read spec"),
        ("{", "not valid JSON"),
        ('{"spec_version": 2, "verdict_source": "redis://h/0"}', "spec_version"),
        ('{"spec_version": 1}', "verdict_source"),
        ('{"spec_version": 1, "verdict_source": "redis://h/0", "on_unknown": "maybe"}', "on_unknown"),
        ('{"spec_version": 1, "verdict_source": "redis://h/0", "timeout_ms": 0}', "timeout_ms"),
        ('{"spec_version": 1, "verdict_source": "https://mh.example"}', "token_file"),
        ('{"spec_version": 1, "verdict_source": "redis://h:port/0"}', "verdict_source"),
    ],
)
def test_bad_specs_fail_open(world: dict[str, Any], spec_text: str | None, needle: str) -> None:
    path = world["tmp"] / "bad-spec.json"
    if spec_text is not None:
        path.write_text(spec_text)
    assert_own_error(run_guard(path, payload("gh pr merge 5 -R acme/widgets", cwd=world["cwd"])), needle)


def test_a_spec_that_is_a_directory_is_an_internal_error(world: dict[str, Any]) -> None:
    assert_own_error(run_guard(world["tmp"], payload("gh pr merge 5 -R acme/widgets", cwd=world["cwd"])))


def test_unknown_keys_in_the_spec_are_ignored(world: dict[str, Any]) -> None:
    assert guard(world, "gh pr merge 5 -R acme/widgets", future_option={"x": 1}).returncode == 2


def test_unwritable_record_file_still_decides(world: dict[str, Any]) -> None:
    done = guard(world, "gh pr merge 5 -R acme/widgets", record_file=str(world["tmp"]))
    assert done.returncode == 2 and "acme/widgets#5" in done.stderr
    assert_own_error(guard(world, "gh pr merge 6 -R acme/widgets", record_file=str(world["tmp"])), "record")


@pytest.mark.parametrize("argv", [[], ["--config"], ["--conf", "x"], ["--config", "a", "extra"]])
def test_bad_arguments_never_exit_2(argv: list[str]) -> None:
    from tests.hook_support import guard_argv

    done = subprocess.run([*guard_argv("x")[:-2], *argv], input=b"{}", capture_output=True, timeout=20,
                          check=False)
    assert done.returncode == 1 and b"Traceback" not in done.stderr


# -- the launchers -------------------------------------------------------------------------------------


def test_console_script_and_settings_command_decide_alike(world: dict[str, Any]) -> None:
    spec = write_spec(world["tmp"], world["url"])
    data = payload("gh pr merge 5 -R acme/widgets", cwd=world["cwd"])
    console = run_guard(spec, data, console_script=True)
    assert console.returncode == 2 and "acme/widgets#5 is on hold" in console.stderr
    for group in block_for(str(spec))["hooks"]["PreToolUse"]:
        command = group["hooks"][0]["command"]
        shell = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(data).encode(),
                               capture_output=True, timeout=20, check=False)
        assert shell.returncode == 2 and shell.stderr.decode() == console.stderr
        assert shlex.split(command)[-1] == str(spec)


SLOW_PATH_ROWS = [
    "m() { case x in x) gh pr merge 5 -R acme/widgets;; esac; }; m",  # a function: tree-sitter
    "m() { gh pr merge 5 -R acme/widgets; }; m",
]


@pytest.mark.parametrize("command", SLOW_PATH_ROWS)
def test_the_fast_launcher_reads_the_slow_path_in_this_install(world: dict[str, Any], command: str) -> None:
    """Issue #8 item 8: with `make install` (editable, compat) the checkout is the package root and
    tree-sitter sits in site-packages, which ``-S`` drops. The settings' launcher must still read
    ``case`` and functions: a determined hold (exit 2) even though undetermined text would be allowed."""
    spec = write_spec(world["tmp"], world["url"], on_undetermined="allow")
    command_line = block_for(str(spec))["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    stdin = json.dumps(payload(command, cwd=world["cwd"])).encode()
    done = subprocess.run(["/bin/sh", "-c", command_line], input=stdin, capture_output=True, timeout=20, check=False)
    assert done.returncode == 2, done.stderr.decode()
    assert "acme/widgets#5 is on hold" in done.stderr.decode()


def test_the_launcher_path_names_where_tree_sitter_lives() -> None:
    import tree_sitter
    import tree_sitter_bash

    from hook.tools.claude_settings import launcher_path, package_root

    dirs = launcher_path()
    assert dirs[0] == package_root()
    for module in (tree_sitter, tree_sitter_bash):
        assert str(Path(str(module.__file__)).resolve().parent.parent) in dirs
    assert len(dirs) == len(set(dirs))


def test_a_launcher_without_tree_sitter_judges_undetermined(world: dict[str, Any]) -> None:
    """An old launcher that cannot import tree-sitter: the text is doubt (on_undetermined), no crash."""
    spec = write_spec(world["tmp"], world["url"], on_undetermined="block")
    code = (f"import sys;sys.path.append({json.dumps(str(Path(__file__).resolve().parent.parent))});"
            "from hook.guard import main;sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, "--config", str(spec)],
                          input=json.dumps(payload(SLOW_PATH_ROWS[0], cwd=world["cwd"])).encode(),
                          capture_output=True, timeout=20, check=False)
    assert done.returncode == 2, done.stderr.decode()
    assert "on_undetermined" in done.stderr.decode() and "Traceback" not in done.stderr.decode()


# -- the HTTP source -----------------------------------------------------------------------------------


@pytest.fixture()
def api_base(redis_client: redis.Redis, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    from tests.webapp_support import make_app, serving

    app, token = make_app(redis_client, tmp_path)
    token_file = tmp_path / "api-token"
    token_file.write_text(token)
    with serving(app) as base:
        yield base, token_file


@pytest.mark.parametrize(
    ("command", "code"),
    [("gh pr merge 5 -R acme/widgets", 2), ("gh pr merge 6 -R acme/widgets", 0),
     ("gh pr merge feature/login -R acme/widgets", 2), ('gh pr merge "$N" -R acme/widgets', 2),
     ("gh pr merge 12 -R acme/widgets", 2), ("gh pr merge 1 -R acme/unmanaged", 0)],
)
def test_http_source_rows(world: dict[str, Any], api_base: tuple[str, Path], command: str, code: int) -> None:
    base, token_file = api_base
    done = guard(world, command, source=base, token_file=str(token_file))
    assert done.returncode == code, done.stderr


def test_http_source_with_a_wrong_token_is_unknown(world: dict[str, Any], api_base: tuple[str, Path]) -> None:
    base, token_file = api_base
    token_file.write_text("not-the-token")
    done = guard(world, "gh pr merge 6 -R acme/widgets", source=base, token_file=str(token_file))
    assert done.returncode == 2 and "401" in done.stderr


# -- the decision, in-process --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expires_at", "expired"),
    [
        (None, False), ("", False), ("2026-01-05T09:59:59Z", True), ("2026-01-05T10:00:00Z", True),
        ("2026-01-05T10:00:01Z", False), ("2026-01-05T11:30:00+02:00", True),  # 09:30 UTC
        ("2026-01-05T10:30:00.250+00:00", False), ("2026-01-05T09:00:00", True),  # naive = UTC
        ("next tuesday", False),  # unreadable: the hold still counts
    ],
)
def test_expiry_rows(expires_at: str | None, expired: bool) -> None:
    from hook.judgement import expired as _expired

    assert _expired({"expires_at": expires_at}, "2026-01-05T10:00:00Z") is expired


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"verdict_source": "redis://h/0"},
         ("block", "block-if-any-held", 800, None, None)),
        ({"verdict_source": "https://mh", "token_file": "tok", "record_file": "rec/r.jsonl", "x": [1]},
         ("block", "block-if-any-held", 800, "/etc/mh/tok", "/etc/mh/rec/r.jsonl")),
        ({"verdict_source": "redis://h/0", "on_unknown": "allow", "on_undetermined": "block",
          "timeout_ms": 9000, "record_file": "/abs/r.jsonl", "on_future": None},
         ("allow", "block", 9000, None, "/abs/r.jsonl")),
        ({"verdict_source": "redis://h/0", "timeout_ms": True}, None),
        ({"verdict_source": "redis://h/0", "timeout_ms": 9001}, None),
        ({"verdict_source": "redis://h/0", "timeout_ms": 1.5}, None),
        ({"verdict_source": "redis://h/0", "record_file": ""}, None),
        ({"verdict_source": "ftp://h"}, None),
        ({"verdict_source": "redis://h/0", "on_undetermined": "BLOCK"}, None),
    ],
)
def test_spec_rows(data: dict[str, Any], expected: tuple[Any, ...] | None) -> None:
    from hook.spec import SpecError, parse_spec

    if expected is None:
        with pytest.raises(SpecError):
            parse_spec({"spec_version": 1, **data}, "/etc/mh/spec.json")
        return
    spec = parse_spec({"spec_version": 1, **data}, "/etc/mh/spec.json")
    assert (spec.on_unknown, spec.on_undetermined, spec.timeout_ms, spec.token_file, spec.record_file) == expected
    assert spec.verdict_source not in repr(spec)  # it may carry a password
