"""`merge-hold hook install --agent NAME`: every agent's configuration file, at every scope it has, written
idempotently next to someone else's hooks; uninstall gives the file back as it was; and the command it
registers, run as the agent would run it, refuses a held merge in that agent's form."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import redis

from hook import agents
from hook.tools.agent_files import target
from hook.tools.claude_settings import GUARD_MATCHERS, block_for, is_ours
from hook.tools.config_files import FILE_MARK, toml_without_ours
from hook.tools.install import main as install_main
from hook.tools.install import uninstall_main
from tests.agent_shapes import BY_NAME
from tests.hook_support import hold, record, store, write_spec
from tests.needs import needs

DOCUMENTED = {
    # (agent, scope): the file, relative to HOME (~), the project (.) or absolute
    ("claude", "user"): "~/.claude/settings.json", ("claude", "project"): ".claude/settings.json",
    ("claude", "local"): ".claude/settings.local.json",
    ("claude", "managed"): "/etc/claude-code/managed-settings.json",
    ("codex", "user"): "~/.codex/hooks.json", ("codex", "project"): ".codex/hooks.json",
    ("codex", "managed"): "/etc/codex/requirements.toml",
    ("gemini", "user"): "~/.gemini/settings.json", ("gemini", "project"): ".gemini/settings.json",
    ("gemini", "managed"): "/etc/gemini-cli/settings.json",
    ("cursor", "user"): "~/.cursor/hooks.json", ("cursor", "project"): ".cursor/hooks.json",
    ("cursor", "managed"): "/etc/cursor/hooks.json",
    ("copilot", "user"): "~/.copilot/hooks/merge-hold.json", ("copilot", "project"): ".github/hooks/merge-hold.json",
    ("copilot", "managed"): "/etc/github-copilot/policy.d/merge-hold.json",
    ("windsurf", "user"): "~/.codeium/windsurf/hooks.json", ("windsurf", "project"): ".windsurf/hooks.json",
    ("windsurf", "managed"): "/etc/windsurf/hooks.json",
    ("cline", "user"): "~/Documents/Cline/Hooks/PreToolUse", ("cline", "project"): ".clinerules/hooks/PreToolUse",
    ("factory", "user"): "~/.factory/settings.json", ("factory", "project"): ".factory/settings.json",
    ("kiro", "user"): "~/.kiro/agents/default.json", ("kiro", "project"): ".kiro/agents/default.json",
    ("qwen", "user"): "~/.qwen/settings.json", ("qwen", "project"): ".qwen/settings.json",
    ("opencode", "user"): "~/.config/opencode/plugin/merge-hold.js",
    ("opencode", "project"): ".opencode/plugin/merge-hold.js",
    ("vscode", "user"): "~/.copilot/hooks/merge-hold-vscode.json",
    ("vscode", "project"): ".github/hooks/merge-hold-vscode.json",
    ("copilot-app", "project"): ".github/hooks/merge-hold.json",
    ("copilot-app", "plugin"): "merge-hold-copilot-plugin/hooks.json",
    ("auggie", "user"): "~/.augment/settings.json", ("auggie", "project"): ".augment/settings.json",
    ("auggie", "local"): ".augment/settings.local.json", ("auggie", "managed"): "/etc/augment/settings.json",
    ("qoder", "user"): "~/.qoder/settings.json", ("qoder", "project"): ".qoder/settings.json",
    ("qoder", "local"): ".qoder/settings.local.json",
    ("kimi", "user"): "~/.kimi-code/config.toml",
    ("goose", "user"): "~/.agents/plugins/merge-hold/hooks/hooks.json",
    ("goose", "project"): ".agents/plugins/merge-hold/hooks/hooks.json",
}
ROWS = sorted(DOCUMENTED)


def test_the_table_covers_every_scope_of_every_agent() -> None:
    assert {(n, s) for n in agents.NAMES for s in agents.load(n).SCOPES} == set(DOCUMENTED)


@pytest.fixture()
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    return {"home": home, "project": project, "spec": spec, "etc": tmp_path / "etc"}


def resolve(where: str, dirs: dict[str, Path]) -> Path:
    if where.startswith("~/"):
        return dirs["home"] / where[2:]
    if where.startswith("/etc/"):
        return dirs["etc"] / where[5:]  # managed files go through --path in tests
    return dirs["project"] / where


def argv(name: str, scope: str, dirs: dict[str, Path], *, install: bool = True) -> list[str]:
    args = ["--agent", name, "--scope", scope, "--project-dir", str(dirs["project"])]
    if scope == "managed":
        args += ["--path", str(resolve(DOCUMENTED[(name, scope)], dirs))]
    return (["--config", str(dirs["spec"])] if install else []) + args


def foreign(name: str, path: Path) -> str:
    """Someone else's configuration in the agent's own shape: a hook of theirs and a key of theirs."""
    module = agents.load(name)
    if hasattr(module, "file_text"):
        return ""
    theirs = module.hooks("~/bin/audit-commands --strict", "~/bin/their-session-end", GUARD_MATCHERS)
    if path.suffix == ".toml" and getattr(module, "TOML_STYLE", "") == "flat":  # Kimi's `[[hooks]]` tables
        return ('default_model = "kimi-code/k3"\n\n[[hooks]]\nevent = "PreToolUse"\nmatcher = "Bash"\n'
                'command = "~/bin/audit-commands"\ntimeout = 5\n')
    if path.suffix == ".toml":
        return ('allowed_sandbox_modes = ["read-only", "workspace-write"]\n\n[features]\nhooks = true\n\n'
                '[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\n'
                'command = "~/bin/audit-commands"\n')
    return json.dumps({**getattr(module, "NEW_FILE", {}), "theirKey": {"keep": [1, 2]}, "hooks": theirs}, indent=4)


def our_commands(path: Path) -> list[str]:
    """The command lines of ours that a file registers."""
    text = path.read_text()
    if FILE_MARK in text and path.suffix != ".json":
        return [text]
    data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    if isinstance(data["hooks"], list):  # Kimi's flat `[[hooks]]` tables
        return [h["command"] for h in data["hooks"] if is_ours(h.get("command"))]
    found = []
    for entries in data["hooks"].values():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                command = handler.get("command", handler.get("bash"))
                if is_ours(command) and command.endswith(".sh"):  # Auggie: a script of ours that execs the guard
                    command = Path(command).read_text().rsplit("exec ", 1)[1].strip()
                if is_ours(command):
                    found.append(command)
    return found


@pytest.mark.parametrize(("name", "scope"), ROWS, ids=[f"{n}-{s}" for n, s in ROWS])
def test_install_is_idempotent_and_keeps_foreign_hooks(dirs: dict[str, Path], name: str, scope: str) -> None:
    path = resolve(DOCUMENTED[(name, scope)], dirs)
    original = foreign(name, path)
    if original:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(original)
        path.chmod(0o640)
    assert install_main(argv(name, scope, dirs)) == 0
    commands = our_commands(path)
    assert commands and all(str(dirs["spec"]) in c for c in commands)
    guard_lines = [c for c in commands if " hook fold " not in c]
    assert all(("--agent " + name in c) is (name != "claude") for c in guard_lines), guard_lines
    if original:
        assert path.stat().st_mode & 0o777 == 0o640
        if path.suffix == ".toml":
            assert toml_without_ours(path.read_text()) == original + "\n"
            hooks = tomllib.loads(path.read_text())["hooks"]
            assert len(hooks if isinstance(hooks, list) else hooks["PreToolUse"]) == 1 + len(GUARD_MATCHERS)
        else:
            before, after = json.loads(original), json.loads(path.read_text())
            assert after["theirKey"] == before["theirKey"]
            for event, entries in before["hooks"].items():  # theirs first, untouched
                assert after["hooks"][event][: len(entries)] == entries
    state = (path.stat().st_mtime_ns, path.read_text())
    assert install_main(argv(name, scope, dirs)) == 0
    assert (path.stat().st_mtime_ns, path.read_text()) == state  # nothing to change, nothing written

    assert uninstall_main(argv(name, scope, dirs, install=False)) == 0
    if not original:
        assert not path.exists() or not our_commands(path)
    elif path.suffix == ".toml":
        assert path.read_text() == original
    else:
        assert json.loads(path.read_text()) == json.loads(original)
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_claude_is_the_same_block_as_hook_settings(dirs: dict[str, Path]) -> None:
    assert install_main(["--config", str(dirs["spec"]), "--scope", "project",
                         "--project-dir", str(dirs["project"])]) == 0
    written = json.loads((dirs["project"] / ".claude/settings.json").read_text())
    assert written == block_for(str(dirs["spec"]))


@pytest.mark.parametrize("name", ["cline", "opencode"])
def test_a_foreign_file_of_the_same_name_is_refused(dirs: dict[str, Path], name: str) -> None:
    path = resolve(DOCUMENTED[(name, "project")], dirs)
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\nexec my-own-hook\n")
    assert install_main(argv(name, "project", dirs)) == 1
    assert uninstall_main(argv(name, "project", dirs, install=False)) == 0
    assert path.read_text() == "#!/bin/sh\nexec my-own-hook\n"


@pytest.mark.parametrize("content", ["hooks = {PreToolUse = []}\n", "not = [toml\n"])
def test_codex_requirements_it_cannot_extend_are_left_alone(dirs: dict[str, Path], content: str) -> None:
    path = resolve(DOCUMENTED[("codex", "managed")], dirs)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert install_main(argv("codex", "managed", dirs)) == 1
    assert path.read_text() == content


def test_a_scope_the_agent_lacks_is_a_usage_error(dirs: dict[str, Path]) -> None:
    assert install_main(["--config", str(dirs["spec"]), "--agent", "kiro", "--scope", "managed"]) == 64


def test_factory_prefers_an_existing_hooks_json(dirs: dict[str, Path]) -> None:
    module = agents.load("factory")
    assert target(module, "project", str(dirs["project"])) == dirs["project"] / ".factory/settings.json"
    (dirs["project"] / ".factory").mkdir()
    (dirs["project"] / ".factory/hooks.json").write_text("{}")
    assert target(module, "project", str(dirs["project"])) == dirs["project"] / ".factory/hooks.json"


def test_codex_user_files_follow_codex_home(dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex reads ``$CODEX_HOME/hooks.json`` when ``CODEX_HOME`` is set; its other scopes do not move."""
    module = agents.load("codex")
    moved = dirs["home"] / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(moved))
    assert target(module, "user") == moved / "hooks.json"
    assert target(module, "project", str(dirs["project"])) == dirs["project"] / ".codex/hooks.json"
    assert target(agents.load("gemini"), "user") == dirs["home"] / ".gemini/settings.json"
    assert install_main(["--config", str(dirs["spec"]), "--agent", "codex"]) == 0
    assert (moved / "hooks.json").is_file() and not (dirs["home"] / ".codex").exists()


def test_a_codex_install_says_the_hook_needs_trust(dirs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert install_main(["--config", str(dirs["spec"]), "--agent", "codex", "--scope", "user"]) == 0
    assert "trusted: review it in `/hooks`" in capsys.readouterr().out
    managed = ["--config", str(dirs["spec"]), "--agent", "codex", "--scope", "managed",
               "--path", str(dirs["etc"] / "requirements.toml")]
    assert install_main(managed) == 0
    assert "trusted" not in capsys.readouterr().out  # managed hooks are trusted by policy


# -- the registered command, run as the agent runs it ----------------------------------------------------

HELD = "gh pr merge 5 --repo acme/widgets --squash"


@pytest.fixture()
def live_spec(redis_client: redis.Redis, redis_url: str, dirs: dict[str, Path]) -> Path:
    store(redis_client, "acme/widgets", 5, record("acme/widgets", 5, [hold("comment", "alice", "wait")]))
    return write_spec(dirs["spec"].parent, redis_url)


@pytest.mark.parametrize("name", [n for n in agents.NAMES if n != "opencode"])
def test_the_installed_command_refuses_a_held_merge(live_spec: Path, dirs: dict[str, Path], name: str) -> None:
    scope = "project" if "project" in agents.load(name).SCOPES else "user"  # Kimi: a user file only
    assert install_main(["--config", str(live_spec), "--agent", name, "--scope", scope,
                         "--project-dir", str(dirs["project"])]) == 0
    path = target(agents.load(name), scope, str(dirs["project"]))
    agent = BY_NAME[name]
    stdin = json.dumps(next(iter(agent.shell.values()))(HELD, str(dirs["project"]))).encode()
    if name == "cline":
        assert os.access(path, os.X_OK)
        argv = [str(path)]  # Cline executes the file
    else:
        argv = ["/bin/sh", "-c", our_commands(path)[0]]  # the agents run the command line through a shell
    done = subprocess.run(argv, input=stdin, capture_output=True, timeout=30, check=False)
    outcome = agent.reads(done.returncode, done.stdout.decode(), done.stderr.decode())
    assert outcome.blocked and "acme/widgets#5 is on hold" in outcome.reason


@needs("node")
def test_the_opencode_plugin_throws_the_reason(live_spec: Path, dirs: dict[str, Path]) -> None:
    """The plugin file under real Node: a held merge throws the guard's reason, a free call resolves."""
    assert install_main(["--config", str(live_spec), "--agent", "opencode", "--scope", "project",
                         "--project-dir", str(dirs["project"])]) == 0
    plugin = dirs["project"] / ".opencode/plugin/merge-hold.js"
    script = f"""
const {{ MergeHoldGuard }} = await import({json.dumps(plugin.as_uri())});
const hooks = await MergeHoldGuard({{ directory: {json.dumps(str(dirs["project"]))} }});
const input = {{ tool: "bash", sessionID: "s1", callID: "c1" }};
await hooks["tool.execute.before"](input, {{ args: {{ command: "ls -la" }} }});
try {{
  await hooks["tool.execute.before"](input, {{ args: {{ command: {json.dumps(HELD)} }} }});
  console.log("ALLOWED");
}} catch (error) {{
  console.log("THREW " + error.message);
}}
"""
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("THREW ") and "acme/widgets#5 is on hold" in done.stdout, done.stdout
    assert shlex.split(json.loads(plugin.read_text().split("const GUARD = ", 1)[1].split(";\n", 1)[0]))[-2:] == [
        "--config", str(live_spec)]
