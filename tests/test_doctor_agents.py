"""`merge-hold doctor` on a machine with a Codex project install (issue 16 item 6): when it can see the
project's `.codex/hooks.json` holding the guard, it says whether Codex trusts the project (else Codex
never loads the file), reading `$CODEX_HOME/config.toml` as Codex does; and `hook install` says the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hook.tools.codex_trust import linked_worktree, project_note, project_root, snippet, trust_level
from merge_hold.doctor_agents import agent_checks
from tests.conftest import ROOT


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    work = tmp_path / "work"
    (work / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=60)
    return work


def install(work: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "install", "--agent", "codex",
                           "--scope", "project", "--config", str(work / "spec.json"), *extra],
                          cwd=work, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done
    return done.stdout


def trust(config_dir: Path, work: Path, level: str) -> None:
    (config_dir / "config.toml").write_text(f'model = "x"\n\n[projects.{json.dumps(str(work))}]\n'
                                            f'trust_level = "{level}"\n')


def test_no_codex_project_install_means_no_check(project: Path) -> None:
    assert agent_checks(project) == []
    (project / ".codex").mkdir()
    (project / ".codex" / "hooks.json").write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash", '
                                                   '"hooks": [{"type": "command", "command": "other-guard"}]}]}}')
    assert agent_checks(project / "src") == [], "someone else's hooks are not ours to judge"


@pytest.mark.parametrize(("level", "ok", "says"), [
    (None, False, "is not trusted in"),
    ("untrusted", False, 'trust_level = "untrusted"'),
    ("trusted", True, "Codex trusts the project"),
])
def test_doctor_says_whether_codex_loads_the_project_install(project: Path, level: str | None, ok: bool,
                                                             says: str) -> None:
    said = install(project)
    if level is not None:
        trust(project.parent / "codex-home", project, level)
    [check] = [c for c in agent_checks(project / "src" / "deep")  # from anywhere in the project
               if c.name == "codex project hook"]
    assert (check.name, check.ok) == ("codex project hook", ok)
    assert says in check.detail and str(project / ".codex" / "hooks.json") in check.detail
    if level is None:
        assert snippet(project) in check.detail and snippet(project) in said
    assert says in install(project)  # the install run again is the same check


def test_doctor_reports_it_as_a_problem(project: Path) -> None:
    install(project)
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "doctor"], cwd=project / "src",
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(project.parent),
                               "CODEX_HOME": str(project.parent / "codex-home")})
    assert done.returncode == 1
    assert "problem  codex project hook: Codex will NOT load" in done.stdout, done.stdout
    assert "fix: trust the project" in done.stdout


def test_the_trust_root_is_the_repositorys_main_checkout(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "-C", str(project), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True, timeout=60)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", str(linked)], check=True, timeout=60)
    assert project_root(project / "src" / "deep") == project.resolve()
    assert project_root(linked) == project.resolve()  # Codex keys a worktree's trust by its main checkout
    assert linked_worktree(linked) and not linked_worktree(project / "src")
    (linked / ".codex").mkdir()
    assert "linked git worktree" in project_note(linked / ".codex" / "hooks.json")[1]
    assert project_root(tmp_path) == tmp_path.resolve()  # no repository: the directory itself
    assert trust_level(tmp_path / "missing.toml", project) is None
    (tmp_path / "bad.toml").write_text("[projects\n")
    assert trust_level(tmp_path / "bad.toml", project) is None
    assert ROOT.exists()
