"""`merge-hold dev` as a newcomer runs it (`make run`), in a subprocess: its own data folder and port, the
user's environment without any REDIS_URL, App credentials or merge-hold settings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clean_env() -> dict[str, str]:
    """The user's environment without any REDIS_URL, App credentials or merge-hold settings."""
    return {k: v for k, v in os.environ.items()
            if k != "REDIS_URL" and not k.startswith(("MERGE_HOLD_", "GITHUB_"))}


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"dev exited early:\n{log.read_text()}"
        if "merge-hold dev is running" in log.read_text():
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                assert answer.status == 200
                return
        time.sleep(0.1)
    raise AssertionError(f"dev did not come up:\n{log.read_text()}")


@contextmanager
def running_dev(folder: Path, port: int, log: Path,
                extra_env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """`merge-hold dev --port PORT --data-dir FOLDER`, up and healthy; stopped (SIGTERM) after."""
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "dev", "--port", str(port),
                                    "--data-dir", str(folder)], env={**clean_env(), **(extra_env or {})}, cwd=ROOT,
                                   stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process, log)
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
