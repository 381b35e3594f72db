"""Delivery to status against the budgets of design §7, end to end on loopback.

The GitHub emulator (`tests/emulator`) plays GitHub; `merge-hold serve` receives signed deliveries and
two `merge-hold worker` processes post statuses to the emulator as a GitHub App (real JWT, real token
mint). 50 pull requests are opened first (warm-up, not measured); then, at 50 deliveries a second for
10 s, each delivery is a `/hold` or `/unhold` comment that flips one PR's verdict (each PR gets one a
second). Measured:

- delivery -> status latency: from sending the delivery to the emulator recording a status that
  reflects it or a newer flip of the same PR (a flip overtaken before its status was written is
  rightly coalesced into the next write); p50 <= 50 ms, p99 <= 250 ms (a status that never comes
  counts as infinitely late);
- GitHub writes per verdict change (<= 1) — every delivery of the measured phase is one change;
- GitHub writes on no-op events (0): comments without a command and re-sent (duplicate) deliveries;
- installation token mints for the whole run (<= 1 per installation).

Redis: ``REDIS_URL`` if set (own queue, repo and installation; their keys are removed), else a throwaway
redis-server. ``BENCH_SECONDS`` sets the measured phase's length (default 10).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bench.loadgen import Sent, free_port, paced, percentile, process, redis_url, wait_http
from bench.timing import Row
from merge_hold import samples

if TYPE_CHECKING:
    from tests.emulator import GitHubEmulator

RATE = 50.0
PRS = 50
WORKERS = 2
P50_BUDGET_MS = 50.0
P99_BUDGET_MS = 250.0
"""Issue 17 raised them from design §7's 100 ms and 1 s: the engine measured 9 and 48 ms; keep it near."""
NOOP_DELIVERIES = 100
DRAIN_TIMEOUT = 30.0
PEAK_MB_BUDGET = 32.0
"""Peak Redis memory during the measured phase. Keeping finished delivery jobs (20 KB bodies) for ten
minutes grew it by ~60 KB per PR touched; with nothing kept of a success it stays near the baseline."""
SECRET = "merge-hold-bench-secret"
HOLDER = "alice"


@dataclass
class Plan:
    """One run's names, chosen fresh so that a shared Redis keeps nothing of another run."""

    tag: str
    repo: str
    installation: int
    queue: str
    first_comment: int

    @classmethod
    def new(cls) -> Plan:
        tag = uuid.uuid4().hex[:8]
        return cls(tag, f"merge-hold-bench/delivery-{tag}", 900_000_000 + int(tag[:6], 16),
                   f"bench-delivery-{tag}", int(time.time() * 1000))


def _seed(emulator: GitHubEmulator, plan: Plan) -> None:
    emulator.add_installation(plan.installation, "merge-hold-bench")
    emulator.add_repo(plan.repo, installation_id=plan.installation)
    emulator.set_permission(plan.repo, HOLDER, "write")
    for number in range(1, PRS + 1):
        emulator.add_pull(plan.repo, number, head_sha=samples.head_sha(plan.repo, number),
                          head_ref=f"feature/pr-{number}")


def _env(url: str, emulator: GitHubEmulator, key_file: Path, plan: Plan) -> dict[str, str]:
    from tests.emulator import APP_ID

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({
        "REDIS_URL": url, "GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY_PATH": str(key_file),
        "GITHUB_API_URL": emulator.url, "GITHUB_WEBHOOK_SECRET": SECRET, "MERGE_HOLD_QUEUE": plan.queue,
        "MERGE_HOLD_APP_SLUG": emulator.app_slug, "MERGE_HOLD_SECRET_KEY": "bench",
        "MERGE_HOLD_LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1",
        # Every status write goes through the installation's pacer (design §4.8): 60 a minute and 450 an
        # hour by default, for GitHub's secondary limits. This row measures the engine's own latency
        # (550 writes in a minute), so both windows are lifted here; bench_fanout and bench_freeze
        # measure the pacing itself. With the hourly window left on, the last 100 flips waited an hour.
        "MERGE_HOLD_WRITE_RATE": "600000", "MERGE_HOLD_WRITE_HOURLY": "0",
    })
    return env


@contextmanager
def _service(url: str, emulator: GitHubEmulator, plan: Plan, workdir: Path) -> Iterator[int]:
    """`merge-hold serve` and the workers, up and registered; yields the web port."""
    from tests.emulator import PRIVATE_KEY_PEM

    key_file = workdir / "app-key.pem"
    key_file.write_text(PRIVATE_KEY_PEM, encoding="utf-8")
    env = _env(url, emulator, key_file, plan)
    port = free_port()
    cli = [sys.executable, "-m", "merge_hold.cli"]
    with ExitStack() as stack:
        web = stack.enter_context(process([*cli, "serve", "--port", str(port), "--workers", "2"], env,
                                          workdir / "web.log"))
        for n in range(WORKERS):
            stack.enter_context(process([*cli, "worker", "--name", f"bench-{plan.tag}-{n}"], env,
                                        workdir / f"worker{n}.log"))
        wait_http(port, "/healthz", process=web)
        _wait_workers(url, plan.queue)
        yield port


def _wait_workers(url: str, queue: str, timeout: float = 30.0) -> None:
    from redis import Redis
    from rq import Queue, Worker

    client = Redis.from_url(url)
    deadline = time.monotonic() + timeout
    while len(Worker.all(queue=Queue(queue, connection=client))) < WORKERS:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{WORKERS} workers did not register within {timeout:.0f} s")
        time.sleep(0.1)
    client.close()


def _statuses(emulator: GitHubEmulator, repo: str) -> list[tuple[float, str, str, str]]:
    """(created_at, sha, state, description) of every `merge-hold` status the App posted on ``repo``."""
    with emulator.lock:
        return [(s.created_at, s.sha, s.state, s.description or "") for s in emulator.all_statuses
                if s.via_api and s.repo.lower() == repo.lower() and s.context == "merge-hold"]


def _heads_posted(emulator: GitHubEmulator, repo: str) -> int:
    return len({sha for _, sha, _, _ in _statuses(emulator, repo)})


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class MemoryPeak:
    """Samples Redis's ``used_memory`` in a thread while the ``with`` block runs; ``peak`` in bytes."""

    def __init__(self, url: str) -> None:
        from redis import Redis

        self.client = Redis.from_url(url)
        self.start = self.peak = int(self.client.info("memory")["used_memory"])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, int(self.client.info("memory")["used_memory"]))

    def __enter__(self) -> MemoryPeak:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self.client.close()


class Deliveries:
    """Request i of a phase, built when it is due: ``open`` PR i+1; ``flip`` a `/hold` or `/unhold` by
    alice on PR (i mod 50)+1 (alternating per PR); ``noop`` a comment without a command."""

    def __init__(self, plan: Plan, kind: str, offset: int = 0) -> None:
        self.plan, self.kind, self.offset = plan, kind, offset
        self.sent: list[samples.Delivery] = []
        self.start = datetime.now(UTC).replace(microsecond=0)

    def __call__(self, index: int) -> tuple[str, bytes, dict[str, str]]:
        plan, number, now = self.plan, index % PRS + 1, datetime.now(UTC)
        if self.kind == "flip":
            # Round r's comments are dated start + r s. GitHub dates comments to the second, and two
            # commands of one user in the same second tie toward held (design §4 invariant 9); a
            # request built early by the load generator (up to 16/RATE s) could otherwise share its
            # second with the previous round's and rightly not flip the verdict.
            now = self.start + timedelta(seconds=index // PRS)
        if self.kind == "open":
            payload = samples.pull_request_event(plan.repo, number, at=now, installation_id=plan.installation)
            delivery = samples.delivery("pull_request", payload)
        else:
            body = (f"/hold bench round {index // PRS}" if (index // PRS) % 2 == 0 else "/unhold") \
                if self.kind == "flip" \
                else "Looks good to me, thanks!"
            payload = samples.issue_comment_event(
                plan.repo, number, body=body, commenter=HOLDER, at=now,
                comment_id=plan.first_comment + self.offset + index, installation_id=plan.installation)
            delivery = samples.delivery("issue_comment", payload)
        self.sent.append(delivery)
        return "/webhooks/github", delivery.body, delivery.headers(SECRET)


def _check_accepted(results: list[Sent], phase: str) -> None:
    refused = [r for r in results if not 200 <= r.status < 300]
    if refused:
        raise RuntimeError(f"{phase}: {len(refused)} deliveries not accepted (first answer {refused[0].status})")


def run() -> list[Row]:
    from tests.emulator import GitHubEmulator

    seconds = float(os.environ.get("BENCH_SECONDS", "10"))
    plan = Plan.new()
    count = int(RATE * seconds)
    with tempfile.TemporaryDirectory() as tmp, redis_url(Path(tmp)) as url, GitHubEmulator() as emulator:
        _seed(emulator, plan)
        try:
            with _service(url, emulator, plan, Path(tmp)) as port:
                # Warm-up: every PR opened and published once (and the token minted), not measured.
                _check_accepted(paced(port, Deliveries(plan, "open"), rate=RATE, count=PRS), "warm-up")
                if not _wait(lambda: _heads_posted(emulator, plan.repo) >= PRS, DRAIN_TIMEOUT):
                    raise RuntimeError("warm-up: not every PR got its first status; see the worker logs")
                before = len(_statuses(emulator, plan.repo))
                flips = Deliveries(plan, "flip")
                with MemoryPeak(url) as memory:
                    results = paced(port, flips, rate=RATE, count=count)
                    _check_accepted(results, "measured phase")
                    _wait(lambda: _queue_idle(url, plan), DRAIN_TIMEOUT)
                time.sleep(0.5)  # a late duplicate post would land now
                latencies = _match(results, _statuses(emulator, plan.repo), plan)
                flip_writes = len(_statuses(emulator, plan.repo)) - before
                noop_writes = _noop_phase(port, plan, flips.sent, emulator, url)
                mints = emulator.token_mints(plan.installation)
        finally:
            if os.environ.get("REDIS_URL"):
                _cleanup(url, plan)
    missing = sum(1 for v in latencies if v == float("inf"))
    finite = [v for v in latencies if v != float("inf")]
    note = f"{count} deliveries at {RATE:.0f}/s, {WORKERS} workers; {missing} statuses never seen"
    if finite:
        note += f"; max {max(finite):.0f} ms"
    return [
        ("delivery->status p50 ms", percentile(latencies, 0.5), P50_BUDGET_MS, note),
        ("delivery->status p99 ms", percentile(latencies, 0.99), P99_BUDGET_MS, note),
        ("GitHub writes per verdict change", flip_writes / count, 1.0,
         f"{flip_writes} status POSTs for {count} verdict changes"),
        ("GitHub writes on no-op events", float(noop_writes), 0.0,
         f"{NOOP_DELIVERIES} comments without a command + {NOOP_DELIVERIES} duplicate deliveries"),
        ("token mints per installation", float(mints), 1.0, "whole run, one installation"),
        ("peak Redis MB during the 50/s run", memory.peak / 2**20, PEAK_MB_BUDGET,
         f"used_memory sampled every 100 ms: {memory.start / 2**20:.1f} MB before, peak {memory.peak / 2**20:.1f} MB; "
         f"finished jobs are not kept"),
    ]


ROUND = re.compile(r"bench round (\d+)")
"""The round a held status answers, from its description (`Held by @alice: bench round 4`)."""


def _match(results: list[Sent], statuses: list[tuple[float, str, str, str]], plan: Plan) -> list[float]:
    """Latency (ms) of each flip: from its send to the first status on its PR's head that reflects it
    *or a newer flip of that PR*; inf when none came (the queue was drained, or the drain timed out).

    Round r of the measured phase flips every PR once: even rounds `/hold bench round r` (the held
    status names its round), odd rounds `/unhold`. When flip r+1 arrives before r's status is written,
    the engine rightly writes only the latest verdict (design §4 invariant 3: bursts coalesce, <= 1
    write per change), and that write answers flip r too. A held status answers its own round and every
    earlier one. A `success` status cannot name its round: it is credited, conservatively, to the first
    unhold after the last held status posted before it (it reflects that round or a later one), so a
    late write is never taken for an answer to a newer flip.
    """
    rounds: dict[int, dict[int, float]] = {}  # PR -> round -> sent
    for r in results:
        rounds.setdefault(r.index % PRS, {})[r.index // PRS] = r.sent
    by_pr: dict[int, list[tuple[float, int]]] = {}  # PR -> (posted at, round it answers)
    heads = {samples.head_sha(plan.repo, n + 1): n for n in range(PRS)}
    last_held: dict[int, int] = {}
    for at, sha, state, description in sorted(statuses):
        pr = heads.get(sha)
        if pr is None:
            continue
        held = ROUND.search(description)
        if state == "failure" and held:
            answered = last_held[pr] = int(held.group(1))
        elif state == "success":
            answered = last_held.get(pr, -1) + 1
            answered += 1 - answered % 2  # unholds are the odd rounds
        else:
            continue
        sent = rounds.get(pr, {}).get(answered)
        if sent is not None and sent <= at:
            by_pr.setdefault(pr, []).append((at, answered))
    latencies = []
    for r in results:
        pr, own = r.index % PRS, r.index // PRS
        ends = [at for at, answered in by_pr.get(pr, []) if answered >= own and at >= r.sent]
        latencies.append((min(ends) - r.sent) * 1000 if ends else float("inf"))
    return latencies


def _noop_phase(port: int, plan: Plan, earlier: list[samples.Delivery], emulator: GitHubEmulator,
                url: str) -> int:
    """Comments without a command, then exact re-sends of earlier deliveries: both must post nothing."""
    _wait(lambda: _queue_idle(url, plan), DRAIN_TIMEOUT)  # nothing of the last phase still to post
    before = len(_statuses(emulator, plan.repo))
    chatter = Deliveries(plan, "noop", offset=PRS * 1000)
    _check_accepted(paced(port, chatter, rate=RATE, count=NOOP_DELIVERIES), "no-op")
    replays = earlier[-NOOP_DELIVERIES:]

    def replay(index: int) -> tuple[str, bytes, dict[str, str]]:
        delivery = replays[index]
        return "/webhooks/github", delivery.body, delivery.headers(SECRET)

    _check_accepted(paced(port, replay, rate=RATE, count=len(replays)), "duplicates")
    _wait(lambda: _queue_idle(url, plan), DRAIN_TIMEOUT)
    time.sleep(0.5)
    return len(_statuses(emulator, plan.repo)) - before


def _queue_idle(url: str, plan: Plan) -> bool:
    """Nothing left to do: no delivery in the intake, no job queued or running, no status owed on an
    outbox (a write the pacer put off is done by a drain)."""
    from redis import Redis
    from rq import Queue

    from core import keys

    with Redis.from_url(url) as client:
        q = Queue(plan.queue, connection=client)
        return client.llen(keys.intake(plan.queue)) == 0 and q.count == 0 and q.started_job_registry.count == 0 \
            and client.zcard(keys.outbox(f"inst-{plan.installation}")) == 0


def _cleanup(url: str, plan: Plan) -> None:
    """On a shared Redis: this run's queue, repo, installation and delivery records go."""
    from redis import Redis
    from rq import Queue

    from core import keys

    with Redis.from_url(url) as client:
        Queue(plan.queue, connection=client).delete(delete_jobs=True)
        bucket = f"inst-{plan.installation}"
        patterns = [f"mh:{{{plan.repo.lower()}}}*", f"mh:inst:{plan.installation}:*", f"mh:intake:{plan.queue}*",
                    f"{keys.outbox(bucket)}*", keys.pacer(bucket)]
        for pattern in patterns:
            for key in client.scan_iter(match=pattern, count=500):
                client.delete(key)
        client.srem("mh:repos", plan.repo.lower())
        client.srem(keys.OUTBOXES, bucket)
