"""`merge-hold worker` processes for the restart and health tests: started (optionally in a PID namespace
of their own, as in a container, where every start is pid 1), SIGKILLed, and a job that naps only on its
first run, so a rescued run finishes at once."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rq import get_current_job

from tests.conftest import ROOT


def nap_unless_rescued(seconds: float) -> str:
    """The job: on its first run it naps (a worker is killed meanwhile); once put back by a watchdog
    (``meta["rescued"]``) it returns at once."""
    job = get_current_job()
    if job is None or not job.meta.get("rescued"):
        time.sleep(seconds)
    return "done"


NAP = f"{__name__}.nap_unless_rescued"


def worker_env(redis_url: str, **extra: str) -> dict[str, str]:
    """A dry-run worker's environment: this machine's, without any MERGE_HOLD_* or GITHUB_* of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({"REDIS_URL": redis_url, "MERGE_HOLD_DRY_RUN": "1", "MERGE_HOLD_RECONCILE_SECONDS": "0", **extra})
    return env


def namespace_problem() -> str | None:
    """Why a worker cannot be run as pid 1 of a PID namespace of its own here (None: it can)."""
    if shutil.which("unshare") is None:
        return "no `unshare` (util-linux) on PATH"
    probe = subprocess.run(["unshare", "--pid", "--fork", "--kill-child", sys.executable, "-c",
                            "import os; print(os.getpid())"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0 or probe.stdout.strip() != "1":
        return "cannot make a PID namespace (`unshare --pid` needs root or user namespaces): " + \
            (probe.stderr.strip().splitlines() or ["?"])[-1]
    return None


def start_worker(env: dict[str, str], log: Path, *args: str, as_pid_1: bool = False) -> subprocess.Popen[bytes]:
    """`merge-hold worker ARGS` in its own session (SIGKILL takes the whole group, as a container's death
    would); with ``as_pid_1`` inside a fresh PID namespace (``unshare --kill-child``: killing it kills the
    worker)."""
    command = [sys.executable, "-m", "merge_hold.cli", "worker", *args]
    if as_pid_1:
        command = ["unshare", "--pid", "--fork", "--kill-child", *command]
    out = log.open("ab")
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def kill_hard(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def wait_until(what: str, probe: Callable[[], object], seconds: float, log: Path | None = None) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-4000:] if log is not None and log.exists() else ""
    raise AssertionError(f"timed out after {seconds:g} s waiting for {what}\n{tail}")


def fail_chained() -> None:
    """A job that fails the way a GitHub call does: an error raised while handling another."""
    try:
        raise OSError("connection reset by peer")
    except OSError as exc:
        raise RuntimeError("GET /repos/acme/widgets failed") from exc


FAIL = f"{__name__}.fail_chained"
