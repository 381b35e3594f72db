"""What the service benchmarks share: a Redis, a server subprocess, and an HTTP load generator.

The load generator is plain Python (threads, `http.client` keep-alive connections), so `make bench`
needs nothing installed. Two shapes:

- `closed_loop`: every connection sends its next request as soon as the last one is answered, from
  several processes (one Python process cannot saturate a server: the GIL); gives throughput.
- `paced`: requests leave on a fixed schedule (open loop); latency is measured from the *scheduled*
  time, so a stalled server is charged for the requests it delayed (no coordinated omission).

Everything binds to loopback, runs for a bounded time and stops by itself.
"""

from __future__ import annotations

import http.client
import math
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def redis_url(workdir: Path) -> AbstractContextManager[str]:
    """``REDIS_URL`` when set (callers use their own queue and keys and remove them), else a throwaway
    redis-server in ``workdir``."""
    from merge_hold.redis_server import given_or_throwaway

    return given_or_throwaway(workdir, os.environ.get("REDIS_URL"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_http(port: int, path: str = "/", timeout: float = 30.0,
              process: subprocess.Popen[bytes] | None = None) -> None:
    """Until something on loopback ``port`` answers HTTP (any status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before answering")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered on port {port} within {timeout:.0f} s")


@contextmanager
def process(argv: Sequence[str], env: Mapping[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process (its output to ``log``), stopped with SIGTERM then SIGKILL on the way out."""
    with log.open("wb") as out:
        child = subprocess.Popen(list(argv), env=dict(env), stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
        try:
            yield child
        finally:
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(child.pid, 9)
                    child.wait()


def gunicorn_argv(app: str, port: int, *, workers: int = 2, threads: int = 4) -> list[str]:
    """The production server (the Dockerfile's default command) on loopback: 2 workers, gthread."""
    return [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--threads", str(threads), "--worker-class", "gthread", "--no-control-socket",
            "--log-level", "warning", app]


@dataclass(frozen=True)
class Template:
    """One POST repeated with a fresh value of ``id_header`` each time (GitHub's delivery GUID)."""

    path: str
    body: bytes
    headers: dict[str, str]
    id_header: str | None = None


def _closed_worker(port: int, template: Template, tag: str, threads: int, warmup: float,
                   duration: float) -> tuple[int, int]:
    """One client process: ``threads`` keep-alive connections; (answers in the window, errors)."""
    start = time.monotonic() + warmup
    end = start + duration
    counts = [0, 0]
    lock = threading.Lock()

    def loop(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        done = errors = n = 0
        while (now := time.monotonic()) < end:
            headers = dict(template.headers)
            if template.id_header:
                headers[template.id_header] = f"{tag}-{index}-{n}"
            n += 1
            try:
                conn.request("POST", template.path, body=template.body, headers=headers)
                answer = conn.getresponse()
                answer.read()
                ok = 200 <= answer.status < 300
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                ok = False
            if now >= start:
                done += ok
                errors += not ok
        conn.close()
        with lock:
            counts[0] += done
            counts[1] += errors

    pool = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return counts[0], counts[1]


def closed_loop(port: int, template: Template, *, processes: int = 2, threads: int = 4, warmup: float = 1.0,
                duration: float = 4.0, tag: str = "load") -> tuple[float, int]:
    """Requests answered 2xx per second over ``duration`` (after ``warmup``), and the error count."""
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_closed_worker, port, template, f"{tag}{p}", threads, warmup, duration)
                   for p in range(processes)]
        results = [f.result(timeout=warmup + duration + 60) for f in futures]
    return sum(r[0] for r in results) / duration, sum(r[1] for r in results)


@dataclass(frozen=True)
class Sent:
    index: int
    scheduled: float
    sent: float
    done: float
    status: int  # 0: no answer

    @property
    def latency(self) -> float:
        """Seconds from the scheduled departure to the answer."""
        return self.done - self.scheduled


def paced(port: int, make: Callable[[int], tuple[str, bytes, dict[str, str]]], *, rate: float, count: int,
          connections: int = 16, clock: Callable[[], float] = time.time) -> list[Sent]:
    """Send ``count`` requests at ``rate`` per second, request i due at start + i / rate, over a pool of
    keep-alive connections. ``make(i)`` gives (path, body, headers). ``clock`` stamps the results (wall
    time by default, to compare with what a server recorded)."""
    start = time.monotonic() + 0.05
    offset = clock() - time.monotonic()
    results: list[Sent] = []
    lock = threading.Lock()
    next_index = iter(range(count))

    def loop() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while True:
            with lock:
                index = next(next_index, None)
            if index is None:
                break
            due = start + index / rate
            path, body, headers = make(index)
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            sent = time.monotonic()
            try:
                conn.request("POST", path, body=body, headers=headers)
                answer = conn.getresponse()
                answer.read()
                status = answer.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                status = 0
            done = time.monotonic()
            with lock:
                results.append(Sent(index, due + offset, sent + offset, done + offset, status))
        conn.close()

    pool = [threading.Thread(target=loop) for _ in range(connections)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return sorted(results, key=lambda s: s.index)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (``fraction`` in 0..1); inf for no values."""
    if not values:
        return float("inf")
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(fraction * len(ordered))))
    return ordered[rank - 1]
