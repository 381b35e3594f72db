"""A room hold's verdict records land at once; only the GitHub writes are paced (design §4 invariant 8).

An org hold over many PRs at a slow write rate, fanned out by a real `merge-hold worker` process against
the GitHub emulator: every PR's verdict record is held within seconds — what the agent hook and the API
read — while the statuses trickle out at the configured rate, and the PR that comes last in the pace
has no status yet.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from redis import Redis

from core import keys
from core.outbox import parse_member
from hook.verdicts.sources import PrQuery, RedisSource
from tests.chat_support import emulated_service, latest, seed_repo
from tests.e2e_support import ROOT, service_env
from tests.emulator import GitHubEmulator
from tests.webapp_support import make_app
from workers.chat.rooms import place_hold
from workers.publishing.fanout import request_fanout

REPOS = ("acme/widgets", "acme/gadgets")
PRS = 100
RATE = 30.0
"""Writes a minute: one every two seconds, so the pace lags the records by minutes."""
RECORDS_WITHIN = 20.0
"""Seconds for every record (generous: two shared cores; measured a few seconds, see bench_fanout)."""


def _held(redis: Redis) -> int:
    return sum(int(redis.scard(keys.held_prs(repo))) for repo in REPOS)


def test_an_org_hold_is_held_for_the_hook_and_the_api_before_the_pace_reaches_the_last_pr(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=RATE)
    for repo in REPOS:
        seed_repo(github_emulator, redis_client, repo, PRS)
    place_hold(redis_client, "acme", holder="dana", holder_id="slack:T1:U1", reason="org freeze",
               origin="slack:acme/#releases", now=datetime.now(UTC))
    assert request_fanout(svc.rt, "acme") == sorted(REPOS)
    env = {**service_env(svc.settings), "MERGE_HOLD_WRITE_RATE": str(RATE)}
    log = tempfile.TemporaryFile()  # noqa: SIM115 — the child holds it
    started = time.monotonic()
    worker = subprocess.Popen([sys.executable, "-m", "merge_hold.cli", "worker", "--burst", "--no-scheduler"],
                              env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
    try:
        while _held(redis_client) < len(REPOS) * PRS:
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() - started < RECORDS_WITHIN, f"only {_held(redis_client)} records held"
            time.sleep(0.05)
        took = time.monotonic() - started
        posted = len(github_emulator.status_posts())
        print(f"{len(REPOS) * PRS} records held in {took:.2f} s, {posted} statuses posted by then")
        # The pace: one write every 2 s (plus whatever burst the pacer allows): far fewer than the records.
        assert posted < len(REPOS) * PRS // 4, (posted, took)
        waiting = [bytes(m).decode() for m in redis_client.zrange(keys.outbox("inst-1"), 0, -1)  # type: ignore[arg-type]
                   if parse_member(bytes(m)).status]  # type: ignore[arg-type]  # the runs wait after them
        assert len(waiting) >= len(REPOS) * PRS - posted - 1
        repo, _, number = waiting[-1].rpartition("#")  # the last PR in pace order
        assert latest(github_emulator, repo, int(number)) is None  # GitHub has not seen its status yet

        # The agent hook's reader and the API say held all the same.
        source = RedisSource(redis_url, timeout_s=2.0)
        try:
            answers, _ = source.lookup([PrQuery(repo, number=int(number))], [])
        finally:
            source.close()
        assert isinstance(answers[0].record, dict) and answers[0].record["held"] is True
        assert "org freeze" in answers[0].record["description"]
        app, token = make_app(redis_client, tmp_path, redis_url)
        api = app.test_client().get(f"/api/v1/verdicts/{repo}/{number}", headers={"Authorization": f"Bearer {token}"})
        assert api.status_code == 200 and api.get_json()["held"] is True
    finally:
        worker.kill()
        worker.wait(timeout=10)
