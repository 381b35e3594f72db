"""A room hold over 1,000 open PRs at the GitHub emulator, against the budget of design §7.

The repo is already managed (its PRs' history read, as after the installation's bootstrap). A hold is
placed and the fan-out runs in a real rq worker, talking to the emulator as a GitHub App. Measured:

- status writes for the hold (<= 1,000: each PR once), and on a repeated fan-out without change (0);
- list calls (<= 10: 100 PRs a page);
- PRs published out of order (0): approved non-drafts first, then other non-drafts, then drafts;
- records at once: with a slow write rate, one `merge-hold worker` process records all 1,000 verdicts
  (what the agent hook and the API read) within `RECORDS_BUDGET` seconds of the request, long before
  the paced statuses reach the last PR;
- pacing: two `merge-hold worker` processes fanning out two repos of one installation at a configured
  rate share one pace, a token bucket: in any window of w seconds at most `MERGE_HOLD_WRITE_BURST` +
  rate x w writes (+1 at the window's edge); the row is the largest excess over rate x w seen in windows
  of 1, 2, 5 and 10 s, against the burst.

The write rate for the first part is lifted (the pace is what the second part measures): at the default
60 a minute, 1,000 writes take 17 minutes. Redis: ``REDIS_URL`` if set (own queue and repos, removed
afterwards), else a throwaway redis-server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

from redis import Redis

from bench.loadgen import ROOT, redis_url
from bench.timing import Row
from core import keys
from core.prstate import Facts, PullState, Register, record_facts, record_review
from foundation.settings import Settings
from merge_hold import samples
from state import store
from workers import runtime
from workers.chat.rooms import place_hold
from workers.ops.tenants import burst
from workers.publishing.fanout import request_repo_fanout

if TYPE_CHECKING:
    from tests.emulator import GitHubEmulator

PRS = 1000
LIST_BUDGET = 10
PACED_PRS = 30
"""Per repo, in the pacing part (two repos)."""
PACED_RATE = 600.0
"""Writes a minute in the pacing part: fast enough to finish in seconds, slow enough to measure."""
UNPACED_RATE = 1_000_000.0
RECORDS_BUDGET = 10.0
"""Seconds from the fan-out request to all 1,000 verdict records held (a worker process's start included)."""
RECORDS_RATE = 60.0
"""Writes a minute in the records part: the default pace, at which 1,000 statuses take 17 minutes."""


def _draft(number: int) -> bool:
    return number % 10 == 0


def _approved(number: int) -> bool:
    return number % 7 == 0


def _class(number: int) -> int:
    if _draft(number):
        return 2
    return 0 if _approved(number) else 1


def _seed(emulator: GitHubEmulator, redis: Redis, repo: str, installation: int, count: int) -> None:
    """PRs at the emulator, and the same PRs known to merge-hold with their history read."""
    if installation not in emulator.installations:
        emulator.add_installation(installation, repo.split("/", 1)[0])
    emulator.add_repo(repo, installation_id=installation)
    store.save_repo(redis, repo, store.RepoMeta(installation_id=installation, config_loaded=True))
    at = datetime(2026, 1, 5, tzinfo=UTC)
    for number in range(1, count + 1):
        sha = samples.head_sha(repo, number)
        emulator.add_pull(repo, number, head_sha=sha, head_ref=f"topic-{number}", draft=_draft(number),
                          updated_at=at.timestamp(), created_at=at.timestamp())
        state = record_facts(PullState(repo=repo, number=number),
                             Facts(at=at, head_sha=sha, head_ref=f"topic-{number}", head_repo=repo, base="main",
                                   author="octocat", draft=_draft(number)))
        if _approved(number):
            state = record_review(state, "rita", Register(at=at, held=False, ref=str(number)))
        redis.set(keys.pr_state(repo, number), _json(replace(state, synced=True)))
        redis.sadd(keys.open_prs(repo), number)


def _json(state: PullState) -> str:
    import json

    return json.dumps(state.to_dict())


def _hold(redis: Redis, scope: str) -> None:
    place_hold(redis, scope, holder="dana", holder_id="slack:T1:U1", reason="bench", origin="slack:bench/#ops",
               now=datetime.now(UTC))


def _settings(url: str, emulator: GitHubEmulator, queue: str, rate: float) -> Settings:
    from tests.emulator import APP_ID, private_key_pem

    return Settings(redis_url=url, github_app_id=APP_ID, github_private_key=private_key_pem(),
                    github_api_url=emulator.url, app_slug=emulator.app_slug, queue_name=queue,
                    write_rate_per_minute=rate)


def _posted(emulator: GitHubEmulator, repo: str) -> list[tuple[float, str]]:
    with emulator.lock:
        return [(s.created_at, s.sha) for s in emulator.all_statuses if s.via_api and s.repo.lower() == repo]


def _economy(emulator: GitHubEmulator, url: str, tag: str) -> list[Row]:
    repo, queue = f"merge-hold-bench/fanout-{tag}", f"bench-fanout-{tag}"
    rt = runtime.install(runtime.build(_settings(url, emulator, queue, UNPACED_RATE)))
    _seed(emulator, rt.redis, repo, 910_000_000 + int(tag[:5], 16), PRS)
    emulator.reset_log()
    _hold(rt.redis, repo)
    request_repo_fanout(rt, repo)
    started = time.monotonic()
    burst(rt.queue, with_scheduler=False, logging_level="WARNING")
    took = time.monotonic() - started
    posted = _posted(emulator, repo)
    lists = emulator.count("GET", rf"^/repos/{repo}/pulls$")
    other_reads = emulator.count("GET", "") - lists
    by_sha = {samples.head_sha(repo, n): n for n in range(1, PRS + 1)}
    classes = [_class(by_sha[sha]) for _, sha in posted]
    misordered = sum(1 for a, b in pairwise(classes) if b < a)
    request_repo_fanout(rt, repo)
    burst(rt.queue, with_scheduler=False, logging_level="WARNING")
    again = len(_posted(emulator, repo)) - len(posted)
    _cleanup(rt.redis, [repo], queue)
    distinct = len({sha for _, sha in posted})
    return [
        (f"room hold over {PRS} open PRs: status writes", float(len(posted)), float(PRS),
         f"{distinct} PRs, {took:.1f} s unpaced, {other_reads} other GitHub reads"),
        (f"room hold over {PRS} open PRs: list calls", float(lists), float(LIST_BUDGET), "100 PRs a page"),
        ("fan-out: PRs out of most-mergeable order", float(misordered), 0.0, "approved, others, drafts"),
        ("fan-out repeated without change: status writes", float(again), 0.0, "posted only when it differs"),
    ]


def _worker_env(url: str, settings: Settings, queue: str, rate: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({"REDIS_URL": url, "GITHUB_APP_ID": str(settings.github_app_id),
                "GITHUB_PRIVATE_KEY": str(settings.github_private_key), "GITHUB_API_URL": str(settings.github_api_url),
                "MERGE_HOLD_APP_SLUG": str(settings.app_slug), "MERGE_HOLD_QUEUE": queue,
                "MERGE_HOLD_WRITE_RATE": str(rate)})
    return env


def _records(emulator: GitHubEmulator, url: str, tag: str, workdir: Path) -> list[Row]:
    repo, queue = f"merge-hold-bench/records-{tag}", f"bench-records-{tag}"
    settings = _settings(url, emulator, queue, RECORDS_RATE)
    rt = runtime.install(runtime.build(settings))
    _seed(emulator, rt.redis, repo, 930_000_000 + int(tag[:5], 16), PRS)
    _hold(rt.redis, repo)
    log = (workdir / "worker-records.log").open("wb")
    started = time.monotonic()
    request_repo_fanout(rt, repo)
    worker = subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler"],
                              env=_worker_env(url, settings, queue, RECORDS_RATE), cwd=ROOT,
                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        while rt.redis.scard(keys.held_prs(repo)) < PRS:
            if worker.poll() is not None or time.monotonic() - started > 120:
                raise RuntimeError(f"records not all held (see {workdir})")
            time.sleep(0.02)
        took = time.monotonic() - started
        posted = len(_posted(emulator, repo))
    finally:
        worker.kill()
        worker.wait(timeout=10)
    _cleanup(rt.redis, [repo], queue)
    return [(f"room hold over {PRS} open PRs: all verdict records held (s)", took, RECORDS_BUDGET,
             f"worker start included; {posted} statuses posted by then at {RECORDS_RATE:.0f}/min")]


def _pacing(emulator: GitHubEmulator, url: str, tag: str, workdir: Path) -> list[Row]:
    repos, queue = [f"merge-hold-bench/paced-{tag}-{i}" for i in (1, 2)], f"bench-paced-{tag}"
    settings = _settings(url, emulator, queue, PACED_RATE)
    rt = runtime.install(runtime.build(settings))
    installation = 920_000_000 + int(tag[:5], 16)
    for repo in repos:
        _seed(emulator, rt.redis, repo, installation, PACED_PRS)
        _hold(rt.redis, repo)
        request_repo_fanout(rt, repo)
    env = _worker_env(url, settings, queue, PACED_RATE)
    workers = []
    for index in range(2):
        log = (workdir / f"worker-{index}.log").open("wb")
        workers.append(subprocess.Popen(
            [sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler"],
            env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
    for worker in workers:
        worker.wait(timeout=120)
    times = sorted(t for repo in repos for t, _ in _posted(emulator, repo))
    _cleanup(rt.redis, repos, queue)
    if len(times) < 2 * PACED_PRS:
        raise RuntimeError(f"only {len(times)} of {2 * PACED_PRS} statuses were posted (see {workdir})")
    per_second = PACED_RATE / 60.0
    # A token bucket lets `write_burst` go at once after a quiet spell, then `rate` a second: the pace
    # holds when no window carries more than the burst on top of what the rate allows in it.
    excess, worst = 0.0, ""
    for window in (1.0, 2.0, 5.0, 10.0):
        busiest = max(sum(1 for t in times[i:] if t < start + window) for i, start in enumerate(times))
        if busiest - per_second * window >= excess:
            excess, worst = busiest - per_second * window, f"{busiest} writes in the busiest {window:g} s"
    mean = len(times) / (times[-1] - times[0] + 60.0 / PACED_RATE) * 60
    return [("paced fan-out, 2 workers, 2 repos: writes beyond rate x window", excess, settings.write_burst + 1.0,
             f"{PACED_RATE:.0f}/min, burst {settings.write_burst} configured; {worst}; "
             f"mean {mean:.0f}/min over {len(times)} writes")]


def _cleanup(redis: Redis, repos: list[str], queue: str) -> None:
    for repo in repos:
        found = list(redis.scan_iter(match=f"mh:{{{repo}}}:*", count=1000))
        if found:
            redis.delete(*found)
        redis.srem(keys.MANAGED_REPOS, repo)
    for key in redis.scan_iter(match=f"rq:*{queue}*", count=1000):
        redis.delete(key)


def run() -> list[Row]:
    from tests.emulator import GitHubEmulator

    tag = uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = stack.enter_context(redis_url(Path(tmp)))
        emulator = stack.enter_context(GitHubEmulator())
        return (_economy(emulator, url, tag) + _records(emulator, url, tag, Path(tmp))
                + _pacing(emulator, url, tag, Path(tmp)))


if __name__ == "__main__":
    for row in run():
        print(row)
