"""What a worker's log says when things fail (issue 28 item 5): a failed try of a job is one line with its
cause, the traceback comes once (when the job fails for good); the App-slug check's warning, when GitHub
cannot be asked, is a line in the log format like every other."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from rq import Queue, Retry

from foundation.logs import FORMAT
from merge_hold.redis_server import free_port
from tests.conftest import ROOT
from tests.emulator import APP_ID, PRIVATE_KEY_PEM
from tests.worker_support import FAIL, worker_env
from workers.ops.rqworker import CAUSE_CHARS, cause

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")
assert FORMAT == "%(asctime)s %(levelname)s %(name)s: %(message)s", "LOG_LINE follows foundation.logs.FORMAT"


def burst(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def _chained() -> BaseException:
    try:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except OSError as exc:
            raise RuntimeError("Max retries exceeded with url: /app\n  (second line)") from exc
    except RuntimeError as outer:
        return outer


@pytest.mark.parametrize(("exc", "line"), [
    (ValueError("bad"), "ValueError: bad"),
    (KeyError("k"), "KeyError: 'k'"),
    (TimeoutError(), "TimeoutError"),
    (_chained(), "RuntimeError: Max retries exceeded with url: /app (second line) "
                 "(caused by ConnectionResetError: [Errno 104] Connection reset by peer)"),
    (RuntimeError("x" * 1000), "RuntimeError: " + "x" * (CAUSE_CHARS - 15) + "…"),
    (None, "unknown error"),
])
def test_cause_is_one_line(exc: BaseException | None, line: str) -> None:
    assert cause(exc) == line
    assert "\n" not in cause(exc) and len(cause(exc)) <= CAUSE_CHARS


def test_a_retried_job_logs_one_line_per_try_and_its_traceback_once(redis_client: Any, redis_url: str) -> None:
    job = Queue("merge-hold", connection=redis_client).enqueue(FAIL, retry=Retry(max=2, interval=0))
    run = burst(worker_env(redis_url))
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    tries = [line for line in lines if f"job {job.id} " in line]
    assert len(tries) == 3, run.stderr
    assert all(LOG_LINE.match(line) for line in tries)
    said = "failed: RuntimeError: GET /repos/acme/widgets failed (caused by OSError: connection reset by peer)"
    assert all(said in line for line in tries)
    assert "WARNING" in tries[0] and "retrying in 0s (then 1 more retry)" in tries[0]
    assert "WARNING" in tries[1] and "retrying in 0s (then 0 more retries)" in tries[1]
    assert "ERROR" in tries[2] and "no retry left" in tries[2]
    # The chained traceback (two "Traceback" sections joined by this sentence) once, at the end.
    assert run.stderr.count("The above exception was the direct cause of the following exception") == 1
    assert job.get_status(refresh=True) == "failed"


def test_the_app_slug_warning_is_in_the_log_format(redis_client: Any, redis_url: str) -> None:
    """GET /app unreachable: the worker starts, and says so in a log line (it printed a bare line, outside
    the log format, before logging was configured)."""
    env = worker_env(redis_url, GITHUB_APP_ID=str(APP_ID), GITHUB_PRIVATE_KEY=PRIVATE_KEY_PEM,
                     GITHUB_API_URL=f"http://127.0.0.1:{free_port()}", MERGE_HOLD_APP_SLUG="merge-hold")
    del env["MERGE_HOLD_DRY_RUN"]
    run = burst(env)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "cannot check MERGE_HOLD_APP_SLUG" in line]
    assert len(said) == 1 and LOG_LINE.match(said[0]) and " WARNING " in said[0], run.stderr
