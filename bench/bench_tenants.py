"""The noisy neighbour: two installations on one service, two `merge-hold worker` processes, the GitHub
emulator (issue 25). Installation A (``bigco``) has repos of 50 open PRs each; installation B
(``acme``) one repo. While A's work runs, B places and lifts a hold by PR comment about once a second
(alternating, within B's own write pace), and each delivery's latency is timed from its queuing to
the emulator's `merge-hold` status of the verdict it asked for (the status's own time at the emulator).

Scenarios, per size of A:
- **A is installed** (its bootstrap: one job per repo on A's bulk queue, each a fan-out pass that lists
  the PRs and records every verdict, the statuses paced on A's outbox);
- **A freezes its org** (statuses mode: an org hold fanned out over every PR of A).

Rows: B's hold → status p50 / p99 / max (budget: p99 ≤ 1 s, max ≤ 2 s), the jobs queued ahead of B's
delivery on the interactive queue (budget: as many as there are workers), A's bootstrap throughput (PRs
recorded a second: reported), Redis memory per open PR and per installation after the bootstrap
(reported, for the README's sizing table), and, with more than one size, B's wait at the largest size
over the smallest (budget 1.2: B's wait does not grow with A): its p50 during the bootstrap (a larger
A's bootstrap lasts longer, so it gives more comments and a higher p99 by sampling alone), and its p99
during the freeze (the same 20 comments at every size).

Sizes: ``BENCH_TENANT_SIZES`` (PRs of A, comma-separated; default ``1000``, a couple of minutes). The
issue's sizes: ``BENCH_TENANT_SIZES=1000,5000,10000 python -m bench tenants`` (about half an hour; A's
hourly REST budget is raised at the emulator as GitHub Enterprise Cloud's 15,000 would allow).
Redis: ``REDIS_URL`` if set (own queue and keys, removed afterwards), else a throwaway one.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from redis import Redis
from rq import Worker

from bench.loadgen import process, redis_url
from bench.timing import Row
from core import keys
from foundation.settings import Settings
from merge_hold import samples
from state import store
from state.queueing import enqueue_delivery
from workers import runtime
from workers.runtime import Runtime

if TYPE_CHECKING:
    from tests.emulator import GitHubEmulator

PER_REPO = 50
WORKERS = 2
B_EVERY = 1.0
"""Seconds between two of B's comments (B's pacer allows 60 writes a minute plus a burst of 10)."""
P99_BUDGET, MAX_BUDGET, GROWTH_BUDGET = 1.0, 2.0, 1.2
TIMEOUT = 600.0
FREEZE_WINDOW = 20.0
"""Seconds B is timed while A's org freeze fans out (its records are done within seconds; its
statuses take hours at A's write pace, so the window is what matters)."""
A_INST, B_INST = 7001, 7002
"""The installations of the first size; each later size takes the next pair: a size's emulator is new,
and a token of the previous one, still cached in Redis under the same id, would be refused."""
_ids = itertools.count(1)


def _settings(url: str, emulator: GitHubEmulator, queue: str) -> Settings:
    from tests.emulator import APP_ID, private_key_pem

    return Settings(redis_url=url, github_app_id=APP_ID, github_private_key=private_key_pem(),
                    github_api_url=emulator.url, app_slug=emulator.app_slug, queue_name=queue)


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({"REDIS_URL": str(settings.redis_url), "GITHUB_APP_ID": str(settings.github_app_id),
                "GITHUB_PRIVATE_KEY": str(settings.github_private_key), "GITHUB_API_URL": settings.github_api_url,
                "MERGE_HOLD_APP_SLUG": str(settings.app_slug), "MERGE_HOLD_QUEUE": settings.queue_name,
                "MERGE_HOLD_LOG_LEVEL": "WARNING"})
    return env


@contextmanager
def _workers(rt: Runtime, settings: Settings, workdir: Path) -> Iterator[None]:
    argv = [sys.executable, "-m", "merge_hold.cli", "worker"]
    with ExitStack() as stack:
        for index in range(WORKERS):
            stack.enter_context(process([*argv, "--name", f"bench-tenants-{uuid.uuid4().hex[:6]}-{index}"],
                                        _env(settings), workdir / f"worker-{index}.log"))
        deadline = time.monotonic() + 30
        while Worker.count(connection=rt.redis, queue=rt.queue) < WORKERS:
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start (see {workdir})")
            time.sleep(0.1)
        yield


class Neighbour:
    """Installation B: one repo, one PR, a hold placed and lifted by comment every `B_EVERY` seconds."""

    def __init__(self, emulator: GitHubEmulator, rt: Runtime, org: str, inst: int) -> None:
        from tests.chat_support import head_sha

        self.emulator, self.rt, self.repo, self.inst = emulator, rt, f"{org}/widgets", inst
        self.sha = head_sha(self.repo, 1)
        emulator.add_installation(inst, org)
        emulator.add_repo(self.repo, installation_id=inst)
        emulator.add_pull(self.repo, 1, head_sha=self.sha, head_ref="topic")
        emulator.set_permission(self.repo, "alice", "write")
        store.save_repo(rt.redis, self.repo, store.RepoMeta(installation_id=inst, config_loaded=True))
        self.held = False
        self.latencies: list[float] = []
        self.ahead: list[int] = []

    def comment(self) -> tuple[float, str]:
        """Queue B's next comment; returns when it was queued and the status state it asks for."""
        self.held = not self.held
        body = "/hold release blocker" if self.held else "/unhold"
        payload = samples.issue_comment_event(self.repo, 1, body=body, commenter="alice", at=datetime.now(UTC),
                                              comment_id=900_000 + next(_ids), installation_id=self.inst)
        self.ahead.append(int(self.rt.queue.count))
        queued = time.time()
        enqueue_delivery(self.rt.queue, "issue_comment", f"b-{uuid.uuid4()}", samples.encode(payload))
        return queued, "failure" if self.held else "success"

    def wait_for(self, queued: float, state: str, limit: float = 30.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with self.emulator.lock:  # the status's own time at the emulator
                times = [s.created_at for s in self.emulator.all_statuses
                         if s.sha == self.sha and s.context == "merge-hold" and s.state == state
                         and s.created_at >= queued]
            if times:
                self.latencies.append(min(times) - queued)
                return
            time.sleep(0.005)
        self.latencies.append(float("inf"))

    def run_while(self, busy: Callable[[], bool]) -> None:
        while busy():
            started = time.monotonic()
            queued, state = self.comment()
            self.wait_for(queued, state)
            time.sleep(max(B_EVERY - (time.monotonic() - started), 0.0))


def _seed_a(emulator: GitHubEmulator, org: str, prs: int, inst: int) -> list[str]:
    from tests.chat_support import head_sha

    emulator.add_installation(inst, org)
    repos = [f"{org}/repo-{i:03d}" for i in range(max(prs // PER_REPO, 1))]
    start = 1_767_000_000
    for index, repo in enumerate(repos):
        emulator.add_repo(repo, installation_id=inst)
        for number in range(1, PER_REPO + 1):
            emulator.add_pull(repo, number, head_sha=head_sha(repo, number), head_ref=f"t-{number}",
                              updated_at=start + number * 1000 + index)
    emulator.rate_limit(max(15_000, prs * 4), installation_id=inst)
    return repos


def _recorded(redis: Redis, repos: list[str]) -> int:
    with redis.pipeline(transaction=False) as pipe:
        for repo in repos:
            pipe.hget(keys.fanout(repo), "cursor")
            pipe.hget(keys.fanout(repo), "done")
        answers = pipe.execute()
    return sum(int(answers[i] or 0) for i in range(0, len(answers), 2))


def _all_done(redis: Redis, repos: list[str]) -> bool:
    with redis.pipeline(transaction=False) as pipe:
        for repo in repos:
            pipe.hmget(keys.fanout(repo), ["done", "want"])
        return all(int(d or 0) >= 1 and int(d or 0) >= int(w or 0) for d, w in pipe.execute())


def _memory(redis: Redis, pattern: str) -> int:
    total = 0
    for key in redis.scan_iter(match=pattern, count=1000):
        total += int(redis.memory_usage(key) or 0)
    return total


def _stats(name: str, b: Neighbour) -> list[Row]:
    lat = sorted(b.latencies) or [float("inf")]
    p50, p99 = statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    return [
        (f"{name}: B's hold -> status p50 / p99, s ({len(lat)} comments)", p99, P99_BUDGET, f"p50 {p50:.3f} s"),
        (f"{name}: B's hold -> status max, s", lat[-1], MAX_BUDGET, "2 workers"),
        (f"{name}: jobs queued ahead of B's delivery, max", float(max(b.ahead or [0])), float(WORKERS),
         "interactive queue only: A's work waits on its own bulk queue"),
    ]


def _size(emulator: GitHubEmulator, url: str, prs: int, workdir: Path,
          turn: int) -> tuple[list[Row], tuple[float, float]]:
    """The rows of one size of A, and B's p50 during A's bootstrap and p99 during A's freeze (the same
    number of comments at every size, so the two p99s compare)."""
    tag = uuid.uuid4().hex[:6]
    a_inst, b_inst = A_INST + 2 * turn, B_INST + 2 * turn
    settings = _settings(url, emulator, f"bench-tenants-{tag}")
    rt = runtime.install(runtime.build(settings))
    a_org, b_org = f"bigco{tag}", f"acme{tag}"
    try:
        repos = _seed_a(emulator, a_org, prs, a_inst)
        b = Neighbour(emulator, rt, b_org, b_inst)
        rows: list[Row] = []
        with _workers(rt, settings, workdir):
            b.run_while(lambda: len(b.latencies) < 3)  # B alone: warm (tokens, its PR's history read)
            b.latencies.clear()
            b.ahead.clear()
            created = {"action": "created", "installation": {"id": a_inst, "account": {"login": a_org}},
                       "repositories": [{"full_name": r, "private": False} for r in repos],
                       "sender": {"login": "octocat"}}
            used = int(rt.redis.info("memory")["used_memory"])
            started = time.monotonic()
            enqueue_delivery(rt.queue, "installation", f"a-{tag}", samples.encode(created))
            b.run_while(lambda: not _all_done(rt.redis, repos) and time.monotonic() - started < TIMEOUT)
            took = time.monotonic() - started
            recorded = _recorded(rt.redis, repos)
            per_pr = (int(rt.redis.info("memory")["used_memory"]) - used) / max(recorded, 1)
            per_inst = _memory(rt.redis, f"*inst-{a_inst}*") + _memory(rt.redis, f"*bootstrap:{a_inst}*")
            name = f"A bootstraps {prs} PRs"
            rows += _stats(name, b)
            rows += [
                (f"{name}: A's PRs recorded a second (reported)", 0.0, 0.0,
                 f"{recorded} PRs in {took:.1f} s: {recorded / took:.0f}/s"),
                (f"{name}: Redis bytes per open PR, bootstrapped (reported)", 0.0, 0.0,
                 f"{per_pr:.0f} B (used_memory delta, A's statuses still paced on its outbox)"),
                (f"{name}: Redis bytes per installation (reported)", 0.0, 0.0,
                 f"{per_inst} B (outbox, pacer, bulk queue, bootstrap record)"),
            ]
            p50 = statistics.median(b.latencies or [float("inf")])
            b.latencies.clear()
            b.ahead.clear()
            from workers.chat.rooms import place_hold
            from workers.publishing.fanout import request_fanout

            place_hold(rt.redis, a_org, holder="dana", holder_id="slack:T1:U1", reason="freeze",
                       origin=f"slack:{a_org}/#ops", now=datetime.now(UTC))
            request_fanout(rt, a_org)
            froze = time.monotonic()
            b.run_while(lambda: time.monotonic() - froze < FREEZE_WINDOW)
            rows += _stats(f"A freezes {len(repos)} repos ({prs} PRs, statuses mode)", b)
        return rows, (p50, rows[-3][1])
    finally:
        _cleanup(rt.redis, settings.queue_name, [*repos, b.repo] if "b" in locals() else [], (a_inst, b_inst))


def _cleanup(redis: Redis, queue: str, repos: list[str], insts: tuple[int, int]) -> None:
    for repo in repos:
        found = list(redis.scan_iter(match=f"mh:{{{repo.lower()}}}:*", count=1000))
        if found:
            redis.delete(*found)
        redis.srem(keys.MANAGED_REPOS, repo.lower())
    a_inst, b_inst = insts
    for pattern in (f"rq:*{queue}*", f"*inst-{a_inst}*", f"*inst-{b_inst}*", f"*bootstrap*{a_inst}*",
                    f"*bulk-queues:{queue}"):
        for key in redis.scan_iter(match=pattern, count=1000):
            redis.delete(key)


def sizes() -> list[int]:
    raw = os.environ.get("BENCH_TENANT_SIZES", "1000")
    return [int(s) for s in raw.split(",") if s.strip()]


def run() -> list[Row]:
    from tests.emulator import GitHubEmulator

    rows: list[Row] = []
    seen: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = stack.enter_context(redis_url(Path(tmp)))
        for turn, prs in enumerate(sizes()):
            with GitHubEmulator() as emulator:
                found, figures = _size(emulator, url, prs, Path(tmp), turn)
            rows += found
            seen.append(figures)
    if len(seen) > 1:
        small, large = sizes()[0], sizes()[-1]
        rows.append((f"B's p50 while A bootstraps, A = {large} over A = {small}",
                     seen[-1][0] / max(seen[0][0], 1e-3), GROWTH_BUDGET, "B's wait does not grow with A"))
        rows.append((f"B's p99 while A freezes, A = {large} over A = {small} (20 comments each)",
                     seen[-1][1] / max(seen[0][1], 1e-3), GROWTH_BUDGET, "B's wait does not grow with A"))
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
