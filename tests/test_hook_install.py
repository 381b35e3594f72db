"""The settings block (wire shape) and the installer: idempotent merge into real settings files that
already hold other hooks and keys, exact removal, atomic writes, refusal of files it cannot read."""

from __future__ import annotations

import copy
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hook.detect.mcp import claude_matcher
from hook.tools.claude_settings import block_for, fast_guard_command, is_ours, settings_block
from hook.tools.install import main as install_main
from hook.tools.install import settings_path, uninstall_main, with_block, without_ours

SPEC = "/home/a b/it's/spec.json"  # a space and a quote: the command must stay one shell word


def test_settings_block_wire_shape() -> None:
    assert settings_block(SPEC, "/venv/bin/merge-hold") == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash|PowerShell|Monitor",
                 "hooks": [{"type": "command", "timeout": 10,
                            "command": "/venv/bin/merge-hold hook-guard --config '/home/a b/it'\"'\"'s/spec.json'"}]},
                {"matcher": claude_matcher(),  # derived from the detector's tool list (test_hook_matcher.py)
                 "hooks": [{"type": "command", "timeout": 10,
                            "command": "/venv/bin/merge-hold hook-guard --config '/home/a b/it'\"'\"'s/spec.json'"}]},
            ],
            "SessionStart": [
                {"hooks": [{"type": "command", "timeout": 10,
                            "command": "/venv/bin/merge-hold hook session-start --config "
                                       "'/home/a b/it'\"'\"'s/spec.json'"}]},
            ],
            "ConfigChange": [
                {"matcher": "user_settings|project_settings|local_settings",
                 "hooks": [{"type": "command",
                            "command": "/venv/bin/merge-hold hook config-change --config "
                                       "'/home/a b/it'\"'\"'s/spec.json'"}]},
            ],
            "SessionEnd": [
                {"hooks": [{"type": "command",
                            "command": "/venv/bin/merge-hold hook fold --config '/home/a b/it'\"'\"'s/spec.json'"}]},
            ],
        }
    }


def test_commands_carry_only_the_spec_path() -> None:
    block = block_for("rel/spec.json")
    commands = [h["command"] for groups in block["hooks"].values() for g in groups for h in g["hooks"]]
    for command in commands:
        words = shlex.split(command)
        assert words[-2:] == ["--config", str(Path("rel/spec.json").absolute())]
        assert "$" not in command and "=" not in " ".join(words[:1] + words[-2:])
    guard = shlex.split(commands[0])
    assert guard[:4] == [sys.executable, "-I", "-S", "-c"]


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("/v/bin/merge-hold hook-guard --config /s.json", True),
        ("merge-hold hook fold --config '/a b.json'", True),
        (fast_guard_command() + " --config /s.json", True),
        # the launcher older installs wrote (before `launch`): still replaced and removed
        ("/v/bin/python -I -S -c 'import sys;sys.path.extend([\"/r\"]);from hook.guard import main;"
         "sys.exit(main(sys.argv[1:]))' --config /s.json", True),
        ("merge-hold hook explain", False),
        ("./my-guard.sh", False),
        ("echo hook-guard", False),
        (None, False),
        (42, False),
    ],
)
def test_is_ours_rows(command: object, ours: bool) -> None:
    assert is_ours(command) is ours


OTHER: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/audit-bash", "timeout": 5}]},
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --check"}]},
        ],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


@pytest.mark.parametrize("before", [{}, {"model": "opus"}, OTHER, {"hooks": {"Stop": []}}])
def test_install_then_uninstall_is_the_identity(before: dict[str, Any]) -> None:
    block = settings_block(SPEC, "mh")
    installed = with_block(before, block)
    assert with_block(installed, block) == installed
    assert without_ours(installed) == before
    for event, groups in block["hooks"].items():
        assert installed["hooks"][event][-len(groups):] == groups
    for event, groups in before.get("hooks", {}).items():
        assert installed["hooks"][event][: len(groups)] == groups


def test_a_new_spec_replaces_ours_and_keeps_a_shared_group() -> None:
    mixed = copy.deepcopy(OTHER)
    ours = settings_block("/old.json", "mh")["hooks"]["PreToolUse"][0]["hooks"][0]
    mixed["hooks"]["PreToolUse"][0]["hooks"].append(ours)  # someone put ours into their Bash group
    installed = with_block(mixed, settings_block("/new.json", "mh"))
    text = json.dumps(installed)
    # PreToolUse twice, SessionStart, ConfigChange, SessionEnd
    assert "/old.json" not in text and text.count("/new.json") == 5
    assert installed["hooks"]["PreToolUse"][0] == OTHER["hooks"]["PreToolUse"][0]


def _run(argv: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", *argv], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=30, check=False)


@pytest.mark.parametrize(("scope", "relative"), [("user", "home/.claude/settings.json"),
                                                 ("project", "proj/.claude/settings.json"),
                                                 ("local", "proj/.claude/settings.local.json")])
def test_install_cli_on_existing_files(tmp_path: Path, scope: str, relative: str) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    proj.mkdir()
    target = tmp_path / relative
    target.parent.mkdir(parents=True)
    original = json.dumps(OTHER, indent=4)
    target.write_text(original)
    target.chmod(0o640)
    spec = tmp_path / "spec.json"
    spec.write_text("{}")

    first = _run(["install", "--config", str(spec), "--scope", scope], home, proj)
    assert first.returncode == 0 and f"installed in {target}" in first.stdout
    installed = json.loads(target.read_text())
    assert without_ours(installed) == OTHER
    assert target.stat().st_mode & 0o777 == 0o640
    mtime, text = target.stat().st_mtime_ns, target.read_text()

    again = _run(["install", "--config", str(spec), "--scope", scope], home, proj)
    assert again.returncode == 0 and "already installed" in again.stdout
    assert (target.stat().st_mtime_ns, target.read_text()) == (mtime, text)

    removed = _run(["uninstall", "--scope", scope], home, proj)
    assert removed.returncode == 0 and "removed from" in removed.stdout
    assert json.loads(target.read_text()) == OTHER
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temp files left


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}'])
def test_install_refuses_files_it_cannot_merge(tmp_path: Path, content: str) -> None:
    target = tmp_path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(content)
    code = install_main(["--config", str(tmp_path / "s.json"), "--scope", "project",
                         "--project-dir", str(tmp_path)])
    assert code == 1 and target.read_text() == content


def test_install_creates_missing_file_and_uninstall_of_nothing(tmp_path: Path) -> None:
    assert uninstall_main(["--scope", "local", "--project-dir", str(tmp_path)]) == 0
    assert not (tmp_path / ".claude").exists()
    assert install_main(["--config", "s.json", "--scope", "local", "--project-dir", str(tmp_path)]) == 0
    path = settings_path("local", str(tmp_path))
    assert path.stat().st_mode & 0o777 == 0o600
    assert uninstall_main(["--scope", "local", "--project-dir", str(tmp_path)]) == 0
    assert json.loads(path.read_text()) == {}


def test_settings_cli_prints_the_block(tmp_path: Path) -> None:
    done = _run(["settings", "--config", "spec.json"], tmp_path, tmp_path)
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    assert printed == block_for(str(tmp_path / "spec.json"))
    console = json.loads(_run(["settings", "--config", "s.json", "--console-script"], tmp_path, tmp_path).stdout)
    assert console["hooks"]["PreToolUse"][0]["hooks"][0]["command"].endswith(
        f"merge-hold hook-guard --config {tmp_path / 's.json'}")
    assert _run(["settings"], tmp_path, tmp_path).returncode == 64


def test_plugin_registers_the_same_guard() -> None:
    from hook.tools.claude_settings import GUARD_MATCHERS, GUARD_TIMEOUT_S

    plugin = Path(__file__).resolve().parent.parent / "hook" / "plugin"
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "merge-hold"
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert [g["matcher"] for g in hooks["PreToolUse"]] == list(GUARD_MATCHERS)
    commands = [h for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert all(is_ours(h["command"]) and h["type"] == "command" for h in commands)
    assert [h.get("timeout") for h in commands] == [GUARD_TIMEOUT_S, GUARD_TIMEOUT_S, None]
    assert {shlex.split(h["command"])[-1] for h in commands} == {"~/.config/merge-hold/hook-spec.json"}
