"""Child processes of `merge-hold dev`: started in their own session, output forwarded, stopped in order.

Their own session keeps the terminal's Ctrl-C away from them: only the supervisor receives it, and it
stops each child the way that child stops cleanly (gunicorn gracefully, rq with a warm shutdown).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

STOP_TIMEOUT = 10.0
"""Seconds a child gets to finish its current request or job before it is killed."""


def alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped by its parent, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        # /proc/PID/stat: "pid (comm) S ..."; the state follows the last ')' (comm may hold spaces).
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    return True


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def terminate_pid(pid: int) -> None:
    """SIGTERM a process that is not our child (a left-over), and wait up to `STOP_TIMEOUT` for it."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


class Child:
    """A `merge-hold` subcommand in its own session, its output forwarded line by line with a prefix."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], out: IO[str], lock: threading.Lock):
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, "-m", "merge_hold.cli", *args], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True, bufsize=1,
        )
        self._thread = threading.Thread(target=self._forward, args=(out, lock), daemon=True, name=f"dev-{name}")
        self._thread.start()

    def _forward(self, out: IO[str], lock: threading.Lock) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with lock:
                out.write(f"{self.name:<6}| {line}")
                out.flush()

    def terminate(self) -> None:
        """SIGTERM the leader only: gunicorn stops gracefully, rq finishes its job (warm shutdown)."""
        if self.process.poll() is None:
            self.process.terminate()

    def wait(self) -> None:
        """Wait for the stop asked by `terminate`; past `STOP_TIMEOUT`, kill the whole group."""
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._thread.join(timeout=2)
