"""Guard the guard (issue 26 item 8): Claude Code's ConfigChange hook blocks a settings change that removes or
weakens merge-hold's entries (and `disableAllHooks`), and `merge-hold doctor` reports, for every agent, a
registered hook that has disappeared or been edited. Real installs through the command line (each test has a
registry of its own: conftest's ``hook_registry``), real files edited as a person or an agent would, the
ConfigChange hook run as Claude Code runs it (the documented stdin, exit 2 blocks)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hook.tools.registry import DISAPPEARED, EDITED, OK, check, load
from merge_hold.doctor_agents import registered_checks


def install(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done


def config_change(settings: Path, source: str = "project_settings") -> subprocess.CompletedProcess[str]:
    """Claude Code runs the ConfigChange hook of the settings in force (the file before the change)."""
    command = f"{sys.executable} -m merge_hold.cli hook config-change --config /s.json"
    payload = {"session_id": "s", "transcript_path": "/t.jsonl", "cwd": str(settings.parent.parent),
               "hook_event_name": "ConfigChange", "source": source, "file_path": str(settings)}
    return subprocess.run(shlex.split(command), input=json.dumps(payload), capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (work / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(npm test:*)"]},
         "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-guard"}]}]}}))
    install("--scope", "project", "--config", str(tmp_path / "spec.json"), cwd=work)
    return work


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def drop_ours(data: dict[str, Any]) -> None:
    data["hooks"] = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-guard"}]}]}


def narrow(data: dict[str, Any]) -> None:
    data["hooks"]["PreToolUse"][1]["matcher"] = "Bash"  # our Bash|PowerShell|Monitor group, narrowed


def shorten(data: dict[str, Any]) -> None:
    for group in data["hooks"]["PreToolUse"]:
        for handler in group["hooks"]:
            if "hook.guard" in handler["command"]:
                handler["timeout"] = 1


def no_session_start(data: dict[str, Any]) -> None:
    del data["hooks"]["SessionStart"]


def disable_all(data: dict[str, Any]) -> None:
    data["disableAllHooks"] = True


def unrelated(data: dict[str, Any]) -> None:
    data["permissions"]["allow"].append("Bash(make:*)")
    data["hooks"]["PostToolUse"] = [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]


@pytest.mark.parametrize(
    ("change", "blocked", "state"),
    [(drop_ours, True, DISAPPEARED), (narrow, True, EDITED), (shorten, True, EDITED), (no_session_start, True, EDITED),
     (disable_all, True, EDITED), (unrelated, False, OK)],
)
def test_config_change_blocks_removing_or_weakening_ours(project: Path, change: Any, blocked: bool,
                                                         state: str) -> None:
    settings = project / ".claude" / "settings.json"
    [registered] = [h["command"] for g in json.loads(settings.read_text())["hooks"]["ConfigChange"] for h in g["hooks"]]
    assert shlex.split(registered)[-3:-1] == ["config-change", "--config"]
    assert config_change(settings).returncode == 0  # as installed
    edit(settings, change)
    done = config_change(settings)
    assert done.returncode == (2 if blocked else 0), done
    if blocked:
        assert "merge-hold" in done.stderr and "person's act" in done.stderr
    [row] = [c for c in registered_checks() if c.name == "claude hook (project)"]
    assert row.ok is (state == OK) and (state in row.detail or state == OK), row
    assert row.fix.startswith("merge-hold hook install --agent claude") or row.ok


def test_invalid_json_and_a_removed_file_are_blocked_and_reported(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.write_text('{"hooks": ')
    assert config_change(settings).returncode == 2
    settings.unlink()
    assert config_change(settings).returncode == 2
    [row] = [c for c in registered_checks() if c.name == "claude hook (project)"]
    assert not row.ok and row.detail.startswith(DISAPPEARED)


def test_disable_all_hooks_elsewhere_is_blocked_too(project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}))
    assert config_change(local, "local_settings").returncode == 2
    local.write_text(json.dumps({"env": {"A": "1"}}))
    assert config_change(local, "local_settings").returncode == 0


@pytest.mark.parametrize("source", ["policy_settings", "skills"])
def test_what_cannot_or_need_not_be_blocked_goes_through(project: Path, source: str) -> None:
    settings = project / ".claude" / "settings.json"
    edit(settings, drop_ours)
    assert config_change(settings, source).returncode == 0


def test_uninstall_is_not_blocked_and_leaves_no_row(project: Path, tmp_path: Path) -> None:
    settings = project / ".claude" / "settings.json"
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "uninstall", "--scope", "project"],
                          cwd=project, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done
    assert config_change(settings).returncode == 0
    assert [c for c in registered_checks() if c.name.startswith("claude")] == []


def test_the_guards_own_trouble_never_blocks(project: Path, hook_registry: Path) -> None:
    settings = project / ".claude" / "settings.json"
    edit(settings, drop_ours)
    hook_registry.write_text("{not json")
    done = config_change(settings)
    assert done.returncode == 0  # no registry it can read: nothing to compare with (doctor says so)
    [row] = [c for c in registered_checks() if c.name == "agent hooks registry"]
    assert not row.ok


@pytest.mark.parametrize(
    ("agent", "scope", "relative"),
    [("codex", "project", ".codex/hooks.json"), ("cline", "project", ".clinerules/hooks/PreToolUse"),
     ("opencode", "project", ".opencode/plugin/merge-hold.js"), ("copilot", "project", ".github/hooks/merge-hold.json"),
     ("gemini", "project", ".gemini/settings.json"), ("vscode", "project", ".github/hooks/merge-hold-vscode.json"),
     ("copilot-app", "plugin", "merge-hold-copilot-plugin/hooks.json"),
     ("qoder", "local", ".qoder/settings.local.json"),
     ("goose", "project", ".agents/plugins/merge-hold/hooks/hooks.json"), ("kimi", "user", "~/.kimi-code/config.toml")],
)
def test_doctor_reports_a_disappeared_or_edited_hook_for_every_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      agent: str, scope: str, relative: str) -> None:
    work, home = tmp_path / "w", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KIMI_CODE_HOME", raising=False)
    install("--agent", agent, "--scope", scope, "--config", str(tmp_path / "spec.json"), cwd=work)
    path = home / relative[2:] if relative.startswith("~/") else work / relative
    [entry] = [i for i in load() if i["agent"] == agent]
    assert check(entry) == (OK, "as installed")
    path.write_text(path.read_text().replace("--config", "--config-ignored"))
    assert check(entry)[0] in (EDITED, DISAPPEARED)
    path.unlink()
    assert check(entry)[0] == DISAPPEARED
    [row] = [c for c in registered_checks() if c.name == f"{agent} hook ({scope})"]
    assert not row.ok and f"--agent {agent}" in row.fix


@pytest.mark.parametrize(("agent", "says"), [("kimi", "Kimi Code CLI lets a tool call run when its hook times out"),
                                             ("goose", "goose lets a tool call run when its hook fails or times out"),
                                             ("claude", None)])
def test_doctor_says_which_agents_fail_open_on_a_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str,
                                                         says: str | None) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KIMI_CODE_HOME", raising=False)
    install("--agent", agent, "--config", str(tmp_path / "spec.json"), cwd=tmp_path)
    [row] = [c for c in registered_checks() if c.name == f"{agent} hook (user)"]
    assert row.ok and ((says in row.detail) if says else "note:" not in row.detail), row
