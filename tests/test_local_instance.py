"""`doctor`, `reconcile` and `token` find the `make run` instance as `simulate` does (issue #27 item 4):
with no REDIS_URL, the running `merge-hold dev` of the data folder provides its Redis, its tokens file and
its dry run, and the command says so; with REDIS_URL set, nothing is filled in."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
import redis

from app.token_store import parse_tokens
from core import keys
from merge_hold import cli
from merge_hold.local_instance import adopt, provided

FILLED = ("REDIS_URL", "MERGE_HOLD_DRY_RUN", "MERGE_HOLD_API_TOKENS_FILE")


def _dev_folder(folder: Path, redis_url: str, *, pid: int | None = None) -> Path:
    """What a running `merge-hold dev` leaves in its folder: dev.json (pid alive: this process) and tokens."""
    folder.mkdir(parents=True, exist_ok=True)
    state = {"pid": os.getpid() if pid is None else pid, "url": "http://127.0.0.1:8000", "redis_url": redis_url,
             "dry_run": True, "children": {}}
    (folder / "dev.json").write_text(json.dumps(state))
    (folder / "tokens").write_text("")
    return folder


@pytest.mark.parametrize(("environ", "pid", "found"), [
    ({}, None, set(FILLED)),
    ({"REDIS_URL": "redis://elsewhere:6379/0"}, None, set()),  # a deployment named: nothing filled in
    ({"MERGE_HOLD_API_TOKENS_FILE": "/etc/mh/tokens"}, None, {"REDIS_URL", "MERGE_HOLD_DRY_RUN"}),
    ({}, 2**22 + 12345, {"MERGE_HOLD_API_TOKENS_FILE"}),  # dev stopped (a stale dev.json): only its tokens file
])
def test_what_the_dev_instance_provides(tmp_path: Path, environ: dict[str, str], pid: int | None,
                                        found: set[str]) -> None:
    folder = _dev_folder(tmp_path / "dev", "redis://127.0.0.1:6399/0", pid=pid)
    assert set(provided(folder, environ)) == found


def test_adopt_fills_in_and_says_so_but_not_for_other_commands(tmp_path: Path) -> None:
    folder = _dev_folder(tmp_path / "dev", "redis://127.0.0.1:6399/0")
    environ = {"MERGE_HOLD_DATA_DIR": str(folder)}
    err = io.StringIO()
    assert adopt("simulate", [], dict(environ), err) == {} and adopt("serve", [], dict(environ), err) == {}
    assert adopt("token", ["create", "x", "--file", "t"], dict(environ), err) == {}
    assert adopt("doctor", [], environ, err)["REDIS_URL"] == "redis://127.0.0.1:6399/0"
    assert environ["REDIS_URL"] == "redis://127.0.0.1:6399/0" and environ["MERGE_HOLD_DRY_RUN"] == "1"
    assert f"merge-hold doctor: using the `merge-hold dev` instance in {folder}" in err.getvalue()


@pytest.fixture()
def dev_env(tmp_path: Path, redis_url: str, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment of a shell next to `make run`: nothing set but the data folder."""
    folder = _dev_folder(tmp_path / "dev", redis_url)
    for name in (*FILLED, "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MERGE_HOLD_DATA_DIR", str(folder))
    return folder


def test_the_commands_act_on_the_running_dev_instance(dev_env: Path, redis_client: redis.Redis,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["token", "create", "agent", "--scope", "read"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("mhk_") and "using the `merge-hold dev` instance" in out.err
    assert "agent" in parse_tokens((dev_env / "tokens").read_text())

    cli.main(["doctor"])  # no worker listens here: a problem, but the instance's Redis was the one read
    out = capsys.readouterr()
    assert "ok       redis: reachable at redis://127.0.0.1:" in out.out and "REDIS_URL is not set" not in out.out
    assert "ok       app credentials: none: a dry run" in out.out

    redis_client.sadd(keys.MANAGED_REPOS, "acme/widgets")
    assert cli.main(["reconcile", "--repo", "acme/other"]) == 1  # read from the instance's Redis
    assert "managed repos: acme/widgets" in capsys.readouterr().err
