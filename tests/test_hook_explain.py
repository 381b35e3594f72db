"""``merge-hold hook explain``: the real CLI as a subprocess (PreToolUse JSON on stdin), and in-process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hook.tools import explain

CLI = Path(sys.executable).parent / "merge-hold"


def tool_call(command: str | dict[str, Any], cwd: Path, tool: str = "Bash") -> dict[str, Any]:
    tool_input = command if isinstance(command, dict) else {"command": command, "description": "d"}
    return {"session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd), "prompt_id": "p",
            "permission_mode": "default", "effort": "high", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input, "tool_use_id": "toolu_01", "some_future_key": {"ignored": True}}


def run_cli(stdin: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLI), "hook", "explain", *args], input=stdin, capture_output=True, text=True,
                          timeout=30, check=False, env=env)


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets.git\n')
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/feature/login\n")
    return tmp_path


@pytest.mark.parametrize(
    ("command", "tool", "expected"),
    [
        ("gh pr merge 5 --squash", "Bash",
         {"merges": [{"via": "gh_pr_merge", "repo": "acme/widgets", "pr": 5, "branch": None}], "lifts": [],
          "tampers": [], "undetermined": False}),
        ("timeout 60 gh pr merge --auto", "Bash",
         {"merges": [{"via": "gh_pr_merge", "repo": "acme/widgets", "pr": None, "branch": "feature/login"}],
          "lifts": [], "tampers": [], "undetermined": False}),
        # ${PR_NUM} may be `-R other/repo` (or, unquoted, several words): the repo is unknown too, unless
        # a --repo after it settles it (pflag: the last one wins)
        ("gh pr merge ${PR_NUM} --squash --delete-branch", "Bash",
         {"merges": [{"via": "gh_pr_merge", "repo": None, "pr": None, "branch": None}],
          "lifts": [], "tampers": [], "undetermined": True}),
        ('gh pr merge "${PR_NUM}" --squash -R acme/widgets', "Bash",
         {"merges": [{"via": "gh_pr_merge", "repo": "acme/widgets", "pr": None, "branch": None}],
          "lifts": [], "tampers": [], "undetermined": True}),
        ("gh pr create --fill --body-file - <<'EOF'\nAfter CI passes run: gh pr merge 5 --squash\nEOF", "Bash",
         {"merges": [], "lifts": [], "tampers": [], "undetermined": False}),
        ("git checkout main && git merge --ff-only feature/login && git push", "Bash",
         {"merges": [{"via": "git_push", "repo": "acme/widgets", "pr": None, "branch": "feature/login"}],
          "lifts": [], "tampers": [], "undetermined": False}),
        ({"owner": "o", "repo": "r", "pullNumber": 9, "merge_method": "squash"}, "mcp__github__merge_pull_request",
         {"merges": [{"via": "mcp", "repo": "o/r", "pr": 9, "branch": None}], "lifts": [], "tampers": [],
          "undetermined": False}),
        ("ls -la", "Bash", {"merges": [], "lifts": [], "tampers": [], "undetermined": False}),
    ],
    ids=["number", "current-branch", "variable", "quoted-variable", "pr-body-heredoc", "local-merge-push", "mcp",
         "non-merge"],
)
def test_cli_prints_the_detection(checkout: Path, command: str | dict[str, Any], tool: str,
                                  expected: dict[str, Any]) -> None:
    done = run_cli(json.dumps(tool_call(command, checkout, tool)), env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    assert done.stderr == ""


def test_cli_reads_the_inherited_gh_repo(checkout: Path) -> None:
    done = run_cli(json.dumps(tool_call("gh pr merge 3", checkout)), env={"GH_REPO": "env/repo"})
    assert json.loads(done.stdout)["merges"][0]["repo"] == "env/repo"


def test_verbose_adds_every_field(checkout: Path) -> None:
    done = run_cli(json.dumps(tool_call("git push -f origin HEAD:refs/heads/main", checkout)), "--verbose")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["merges"] == [{"via": "git_push", "repo": "acme/widgets", "pr": None, "branch": "feature/login",
                              "push_target": "main", "host": None, "undetermined": False, "detail": ""}]
    assert out["notes"] == []


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[1, 2]", '{"tool_input": {"command": "gh pr merge 5"}}',
     '{"tool_name": "Bash", "tool_input": "gh pr merge 5"}', '{"tool_name": 7, "tool_input": {}}'],
    ids=["empty", "garbage", "array", "no-tool-name", "input-not-object", "tool-name-not-string"],
)
def test_malformed_stdin_is_one_line_and_exit_1(stdin: str) -> None:
    done = run_cli(stdin)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("merge-hold hook explain: ")


def test_help_and_bad_option() -> None:
    shown = run_cli("", "--help")
    assert shown.returncode == 0 and "usage: merge-hold hook explain" in shown.stdout
    bad = run_cli("{}", "--frobnicate")
    assert bad.returncode == 64 and "unknown option" in bad.stderr


def test_main_in_process(checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(tool_call("eval \"gh pr merge 12\"", checkout))))
    monkeypatch.delenv("GH_REPO", raising=False)
    assert explain.main([]) == 0
    assert json.loads(capsys.readouterr().out)["merges"][0]["pr"] == 12


def test_missing_cwd_is_allowed() -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "gh pr merge 5 -R o/r"}}
    detection = explain.explain(json.dumps(payload), {})
    assert [(m.repo, m.pr, m.undetermined) for m in detection.merges] == [("o/r", 5, False)]
