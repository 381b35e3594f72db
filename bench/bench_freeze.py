"""An org freeze over 5,000 open PRs in 50 repos (one installation) at the GitHub emulator, design §7 row
"org freeze": GitHub's two secondary write windows enforced (80 content-creating requests in any 60 s,
500 in any hour; a refused write is counted), `main` protected to require ``merge-hold`` from the App,
every PR showing ``merge-hold`` success from the App at the start. Mergeability is the emulator's own
reading (protection and active rulesets, `tests.emulator.rulesets`). The pacer runs at its defaults
(60 a minute, burst 10, 450 an hour), `merge-hold worker` processes run the queue meanwhile.

- **ruleset mode** (``freeze_mode: ruleset``, Administration: write): seconds from the chat command
  ``/hold ORG`` until every PR is unmergeable, and the writes (rulesets and statuses) made by then; then
  ``/unhold ORG`` — while the per-PR `merge-hold/freeze` descriptions are being written, paced, at low
  priority — until every PR is mergeable again. Budget: 60 s each way, one write per repo each way, no
  description between the thaw's ruleset writes (they give way; one already on its way may land), no
  refused write.
- **statuses mode** (the default): the freeze is one status per PR, so within the hourly cap it cannot
  finish in a run. Measured over a fixed window: the writes (at most the pacer's allowance, under
  GitHub's 80 a minute), refusals (0), the seconds until the first PR is blocked; reported: the time
  until every PR would be blocked at the hourly cap, and the ruleset freeze's time as a share of it.

The state is seeded the way the service leaves it after a fan-out (PRs synced, verdicts recorded, their
``merge-hold`` success posted by the App): posting 10,000 statuses through the service first would take
longer than the measurement. ``python -m bench.bench_freeze --small`` (or ``BENCH_FREEZE_SMALL=1``) runs a
few repos in seconds.
Redis: ``REDIS_URL`` if set (own queues, orgs and keys, removed afterwards), else a throwaway one.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from redis import Redis
from rq import Worker

from bench.loadgen import process, redis_url
from bench.timing import Row
from core import keys
from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, Reply
from core.freeze_gate import FREEZE_CONTEXT
from core.outbox import bucket as outbox_bucket
from core.prstate import Facts, PullState, record_facts
from foundation.settings import Settings
from state import store
from state.posted_status import form as posted_form
from state.posted_status import wanted_status
from workers import runtime
from workers.chat.rooms import execute
from workers.publishing.recompute import record
from workers.runtime import Runtime

if TYPE_CHECKING:
    from tests.emulator import GitHubEmulator

REPOS, PER_REPO, WINDOW = 50, 100, 60.0
SMALL = (4, 20, 15.0)
"""--small: repos, PRs per repo, seconds of the statuses window."""
BUDGET_SECONDS = 60.0
TIMEOUT = 150.0
"""A freeze or thaw not done by then fails the row (the poll gives up)."""
RATE, BURST, HOURLY = 60.0, 10, 450
"""The pacer's defaults (`foundation.settings.Settings`), written out: the rows are about them."""
GITHUB_MINUTE, GITHUB_HOUR = 80, 500
RATIO_BUDGET = 0.01
"""A ruleset freeze binds the org in at most a hundredth of the time statuses take."""
TEAM = "T1"
ADMIN = {"metadata": "read", "contents": "read", "pull_requests": "read", "issues": "write",
         "statuses": "write", "administration": "write"}
Pulls = list[tuple[str, int]]


@dataclass
class Org:
    name: str
    installation: int
    repos: list[str]
    pulls: Pulls
    settings: Settings
    rt: Runtime


def _settings(url: str, emulator: GitHubEmulator, queue: str, org: str, mode: str) -> Settings:
    from tests.emulator import APP_ID, private_key_pem

    return Settings(redis_url=url, github_app_id=APP_ID, github_private_key=private_key_pem(),
                    github_api_url=emulator.url, app_slug=emulator.app_slug, queue_name=queue,
                    write_rate_per_minute=RATE, write_burst=BURST, write_hourly=HOURLY, freeze_mode=mode,
                    slack_teams=((TEAM, (org,)),))


def _worker_env(settings: Settings, org: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MERGE_HOLD_", "GITHUB_"))}
    env.update({"REDIS_URL": str(settings.redis_url), "GITHUB_APP_ID": str(settings.github_app_id),
                "GITHUB_PRIVATE_KEY": str(settings.github_private_key), "GITHUB_API_URL": settings.github_api_url,
                "MERGE_HOLD_APP_SLUG": str(settings.app_slug), "MERGE_HOLD_QUEUE": settings.queue_name,
                "MERGE_HOLD_WRITE_RATE": str(RATE), "MERGE_HOLD_WRITE_BURST": str(BURST),
                "MERGE_HOLD_WRITE_HOURLY": str(HOURLY), "MERGE_HOLD_FREEZE_MODE": settings.freeze_mode,
                "MERGE_HOLD_SLACK_TEAMS": f"{TEAM}={org}", "MERGE_HOLD_LOG_LEVEL": "WARNING"})
    return env


def _seed(emulator: GitHubEmulator, url: str, tag: str, mode: str, installation: int, repos: int,
          per_repo: int) -> Org:
    """The org as a fan-out leaves it: every PR synced and recorded "No holds", that status posted by
    the App (seeded at the emulator as the App's, and remembered as posted)."""
    from tests.chat_support import head_sha
    from tests.emulator import APP_ID
    from tests.emulator.identity import bot_login

    name = f"mhb-{tag}-{mode[0]}"
    settings = _settings(url, emulator, f"bench-freeze-{tag}-{mode}", name, mode)
    rt = runtime.install(runtime.build(settings))
    emulator.add_installation(installation, name)
    emulator.set_installation_permissions(installation, ADMIN)
    at, app = datetime(2026, 1, 5, tzinfo=UTC), bot_login(emulator.app_slug)
    org = Org(name, installation, [f"{name}/repo-{i:02d}" for i in range(repos)], [], settings, rt)
    for repo in org.repos:
        emulator.add_repo(repo, installation_id=installation)
        emulator.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
        meta = store.RepoMeta(installation_id=installation, config_loaded=True)
        store.save_repo(rt.redis, repo, meta)
        for number in range(1, per_repo + 1):
            sha = head_sha(repo, number)
            emulator.add_pull(repo, number, head_sha=sha, head_ref=f"topic-{number}", created_at=at.timestamp(),
                              updated_at=at.timestamp())
            facts = Facts(at=at, head_sha=sha, head_ref=f"topic-{number}", head_repo=repo, base="main",
                          author="octocat")
            state = replace(record_facts(PullState(repo=repo, number=number), facts), synced=True)
            rt.redis.set(keys.pr_state(repo, number), json.dumps(state.to_dict()))
            rt.redis.sadd(keys.open_prs(repo), number)
            record(rt, repo, number, at)
            wanted = wanted_status(store.load_verdict(rt.redis, repo, number))
            if wanted is None or wanted[1]["state"] != "success":
                raise RuntimeError(f"{repo}#{number} was not recorded free: {wanted}")
            emulator.add_status(repo, sha, state="success", context="merge-hold", creator=app,
                                description=wanted[1]["description"], target_url=wanted[1].get("target_url"))
            rt.redis.set(keys.posted(repo, number), posted_form(*wanted))
            org.pulls.append((repo, number))
        rt.redis.delete(keys.outbox(outbox_bucket(meta.installation_id)))  # posted above: nothing waits
    if emulator.unmergeable(org.pulls):
        raise RuntimeError("seeded PRs are not all mergeable")
    return org


def _request(org: str) -> ChatRequest:
    return ChatRequest.from_dict({
        "platform": "slack", "team_id": TEAM, "team_name": org, "channel_id": "C1", "channel_name": "ops",
        "user_id": "U1", "user_name": "dana", "command": "/hold", "text": "", "response_url": "",
        "received_at": datetime.now(UTC).isoformat(), "orgs": org,
        "admin": "1"})  # a chat admin's command, as the web tier judged it (`app.chat`)


@contextmanager
def _workers(org: Org, workdir: Path, count: int = 2) -> Iterator[None]:
    """`merge-hold worker` processes (with rq's scheduler: paced jobs re-enqueue themselves later)."""
    env = _worker_env(org.settings, org.name)
    argv = [sys.executable, "-m", "merge_hold.cli", "worker"]
    with ExitStack() as stack:
        for index in range(count):
            stack.enter_context(process([*argv, "--name", f"bench-{org.name}-{index}"], env,
                                        workdir / f"worker-{org.name}-{index}.log"))
        deadline = time.monotonic() + 30
        while Worker.count(connection=org.rt.redis, queue=org.rt.queue) < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start (see {workdir})")
            time.sleep(0.1)
        yield


@dataclass(frozen=True)
class Writes:
    """The writes GitHub answered since the last `reset_log`, by kind."""

    rulesets: int
    statuses: int
    """``merge-hold``: what may merge."""
    descriptions: int
    """`FREEZE_CONTEXT`: the freeze's reason for people to read (low priority)."""

    @classmethod
    def read(cls, emulator: GitHubEmulator) -> Writes:
        counts = {"rulesets": 0, "statuses": 0, "descriptions": 0}
        for req in emulator.requests:
            if req.status >= 400 and "/rulesets" in req.path:
                continue  # refused, written nothing: an org ruleset tried without Organization administration
            if (req.method == "POST" and req.path.endswith("/rulesets")) or \
                    (req.method == "PUT" and "/rulesets/" in req.path):
                counts["rulesets"] += 1
            elif req.method == "POST" and "/statuses/" in req.path:
                context = req.body.get("context") if isinstance(req.body, dict) else None
                counts["descriptions" if context == FREEZE_CONTEXT else "statuses"] += 1
        return cls(**counts)

    @property
    def binding(self) -> int:
        """The writes that decide what may merge."""
        return self.rulesets + self.statuses

    def text(self) -> str:
        return (f"{self.binding + self.descriptions} writes: {self.rulesets} rulesets, {self.statuses} statuses, "
                f"{self.descriptions} descriptions")


def _all(emulator: GitHubEmulator, org: Org, blocked: bool) -> Callable[[], bool]:
    """Whether every PR is unmergeable (``blocked``) or every PR mergeable, by the emulator's reading:
    one PR of each repo first (cheap), all of them once those agree."""
    probes = [(repo, 1) for repo in org.repos]

    def check(pulls: Pulls) -> bool:
        found = len(emulator.unmergeable(pulls))
        return found == len(pulls) if blocked else found == 0

    return lambda: check(probes) and check(org.pulls)


def _timed(org: Org, command: ChatCommand, done: Callable[[], bool]) -> tuple[float, Reply]:
    """Run the chat command (in a thread, as a chat job would) and poll the emulator until ``done``:
    the seconds from the command to the first poll that finds it so."""
    replies: list[Reply] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            replies.append(execute(org.rt, _request(org.name), command))
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while not done():
        if errors or time.monotonic() - started > TIMEOUT:
            break
        time.sleep(0.05)  # the check itself takes longer: it holds the emulator's lock
    took = time.monotonic() - started
    thread.join(TIMEOUT)
    if errors:
        raise errors[0]
    if not replies:
        raise RuntimeError(f"{command.action} {org.name} did not return")
    return (took if took <= TIMEOUT else float("inf")), replies[0]


def _ruleset_mode(emulator: GitHubEmulator, org: Org, workdir: Path) -> list[Row]:
    n, size = len(org.repos), f"{len(org.pulls)} PRs in {len(org.repos)} repos"
    emulator.secondary_limit(GITHUB_MINUTE, GITHUB_HOUR)
    with _workers(org, workdir):
        emulator.reset_log()
        froze, reply = _timed(org, ChatCommand("hold", org.name, reason="incident 4711"), _all(emulator, org, True))
        freeze = Writes.read(emulator)
        if f"rulesets active in {n} of {n} repos" not in reply.text:
            raise RuntimeError(f"unexpected freeze reply: {reply.text}")
        # The thaw comes while the descriptions are being written (low priority, paced): it must not
        # wait behind them.
        deadline = time.monotonic() + 60
        while Writes.read(emulator).descriptions < min(3, len(org.pulls)) and time.monotonic() < deadline:
            time.sleep(0.2)
        described = Writes.read(emulator).descriptions
        emulator.reset_log()
        since = time.time()
        thawed, reply = _timed(org, ChatCommand("unhold", org.name), _all(emulator, org, False))
        thaw = Writes.read(emulator)
        between = emulator.statuses_between_ruleset_writes(FREEZE_CONTEXT, since)
        refused = emulator.refused_writes
    if f"rulesets disabled in {n} of {n} repos" not in reply.text:
        raise RuntimeError(f"unexpected thaw reply: {reply.text}")
    return [
        (f"org freeze, ruleset mode, {size}: s until every PR unmergeable ({freeze.text()})", froze,
         BUDGET_SECONDS, f"pacer {RATE:.0f}/min, burst {BURST}"),
        ("org freeze, ruleset mode: writes per repo until every PR is blocked", freeze.binding / n, 1.0,
         f"{freeze.rulesets} ruleset writes for {n} repos"),
        (f"org thaw, ruleset mode, {size}: s until every PR mergeable ({thaw.text()})", thawed, BUDGET_SECONDS,
         f"{described} descriptions written between freeze and thaw"),
        ("org thaw, ruleset mode: writes per repo until every PR is free", thaw.binding / n, 1.0,
         f"{thaw.rulesets} ruleset writes for {n} repos"),
        ("org thaw, ruleset mode: descriptions written between its ruleset writes", float(between), 1.0,
         f"they wait for the rulesets (one on its way may land); {thaw.descriptions - between} landed before "
         "the first or after the last"),
        ("org freeze and thaw, ruleset mode: writes GitHub refused", float(refused), 0.0,
         f"GitHub's windows: {GITHUB_MINUTE}/min, {GITHUB_HOUR}/h"),
    ]


def _held(org: Org) -> int:
    with org.rt.redis.pipeline(transaction=False) as pipe:
        for repo in org.repos:
            pipe.scard(keys.held_prs(repo))
        return sum(int(n) for n in pipe.execute())


def _statuses_mode(emulator: GitHubEmulator, org: Org, workdir: Path, window: float, froze: float) -> list[Row]:
    total = len(org.pulls)
    emulator.secondary_limit(GITHUB_MINUTE, GITHUB_HOUR)
    with _workers(org, workdir):
        emulator.reset_log()
        since = time.time()
        held_at: list[float] = []

        def first_blocked() -> bool:
            if not held_at and _held(org) == total:
                held_at.append(time.time() - since)
            return Writes.read(emulator).statuses > 0 and bool(emulator.unmergeable(org.pulls))

        first, _ = _timed(org, ChatCommand("hold", org.name, reason="incident 4711"), first_blocked)
        while time.time() < since + window:
            if not held_at and _held(org) == total:
                held_at.append(time.time() - since)
            time.sleep(0.2)
        with emulator.lock:
            written = sum(1 for s in emulator.all_statuses if s.via_api and since <= s.created_at < since + window
                          and s.repo.lower().startswith(org.name))
        blocked = len(emulator.unmergeable(org.pulls))
        refused = emulator.refused_writes
    # The pacer's hour: `HOURLY` writes in any sliding hour, so the last of `total` PRs is blocked in
    # the hour after (total - 1) // HOURLY full hours, its batch written at the minute's rate.
    full = (total - 1) // HOURLY
    projected = (full + (total - full * HOURLY) / RATE / 60) * 3600 if full else max(total - BURST, 0) / RATE * 60
    allowance = BURST + RATE * window / 60 + 1
    return [
        (f"org freeze, statuses mode, {total} PRs: writes in the first {window:.0f} s ({written} statuses)",
         float(written), allowance, f"{blocked} PRs blocked after {window:.0f} s; pacer allowance {BURST} + "
         f"{RATE:.0f}/min"),
        ("org freeze, statuses mode: writes GitHub refused", float(refused), 0.0,
         f"GitHub's windows: {GITHUB_MINUTE}/min, {GITHUB_HOUR}/h"),
        ("org freeze, statuses mode: s until the first PR is blocked", first, window,
         f"every verdict record held after {held_at[0] if held_at else float('inf'):.1f} s (what the hook and the "
         "API read); the writes follow the records"),
        (f"org freeze: ruleset time, % of statuses time (projected {projected / 3600:.1f} h)",
         100 * froze / projected, 100 * RATIO_BUDGET, f"{total} PRs at {HOURLY} writes an hour vs {froze:.1f} s"),
    ]


def _cleanup(redis: Redis, org: Org) -> None:
    for repo in org.repos:
        found = list(redis.scan_iter(match=f"mh:{{{repo}}}:*", count=1000))
        if found:
            redis.delete(*found)
        redis.srem(keys.MANAGED_REPOS, repo)
    for pattern in (f"rq:*{org.settings.queue_name}*", f"*inst-{org.installation}*"):
        for key in redis.scan_iter(match=pattern, count=1000):
            redis.delete(key)


def run(small: bool | None = None) -> list[Row]:
    from tests.emulator import GitHubEmulator

    if small is None:
        small = os.environ.get("BENCH_FREEZE_SMALL") == "1"
    repos, per_repo, window = SMALL if small else (REPOS, PER_REPO, WINDOW)
    tag = uuid.uuid4().hex[:8]
    base = 940_000_000 + int(tag[:5], 16)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = stack.enter_context(redis_url(Path(tmp)))
        emulator = stack.enter_context(GitHubEmulator())
        orgs = []
        try:
            orgs.append(_seed(emulator, url, tag, "ruleset", base, repos, per_repo))
            rows = _ruleset_mode(emulator, orgs[0], Path(tmp))
            orgs.append(_seed(emulator, url, tag, "statuses", base + 1, repos, per_repo))
            return rows + _statuses_mode(emulator, orgs[1], Path(tmp), window, rows[0][1])
        finally:
            for org in orgs:
                _cleanup(org.rt.redis, org)


if __name__ == "__main__":
    for row in run("--small" in sys.argv[1:]):
        print(row)
