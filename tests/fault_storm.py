"""The crash-loop storm of issue 7, as a repeatable harness (`tests/test_fault_storm.py` runs it).

Everything is a real process talking over a socket: `merge-hold serve` (gunicorn) receives the signed
deliveries over HTTP, two `merge-hold worker` processes are SIGKILLed and restarted every few hundred
milliseconds, redis-server (``appendonly yes``, ``appendfsync always``) is SIGKILLed and restarted on its
append-only file three times, and the GitHub emulator answers about twenty status writes in a row with
502/500/403-secondary/429. Each PR gets a mix of deliveries — comment holds from two users, own and
maintainers' lifts, changes-requested reviews and approvals, dismissals, the hold label added and
removed, pushes, a `/hold` and `/unhold` in one second — delivered shuffled within a window and partly
duplicated (the same delivery id again, or a new one). A refused delivery (503 while Redis is down)
stays pending, as GitHub's redelivery would bring it back. The storm is seeded: a seed replays it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from redis import Redis

from foundation.settings import Settings
from merge_hold.redis_server import free_port
from tests import reference_model as model
from tests.e2e_support import ROOT, service_env, sign
from tests.emulator import GitHubEmulator
from tests.fault_support import DurableRedis, Fleet, Scenario
from tests.test_model_convergence import History, Rig

STATUSES = r"^/repos/[^/]+/[^/]+/statuses/"
WRITERS = ("wanda", "walt")
"""The two users whose comment holds and reviews cross on every PR (both have write access)."""
FAULTS: tuple[tuple[int, dict[str, str]], ...] = (
    (502, {}), (500, {}), (403, {"retry-after": "1"}), (429, {"retry-after": "1"}))


@dataclass(frozen=True)
class Answer:
    status_code: int


class Receiver:
    """`merge-hold serve` as deployed: gunicorn, one process, reached over HTTP."""

    def __init__(self, settings: Settings, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "merge_hold.cli", "serve", "--port", str(self.port), "--workers", "1"],
            env=service_env(settings), cwd=ROOT, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while not self._up():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"merge-hold serve did not come up: {log.read_text()[-2000:]}")
            time.sleep(0.1)

    def _up(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/healthz", timeout=1):
                return True
        except (OSError, urllib.error.HTTPError):
            return False

    def deliver(self, event: str, payload: dict[str, Any], *, delivery_id: str | None = None) -> Answer:
        body = json.dumps(payload).encode()
        request = urllib.request.Request(f"{self.base}/webhooks/github", data=body, method="POST", headers={
            "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()), "X-Hub-Signature-256": sign(body)})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return Answer(answer.status)
        except urllib.error.HTTPError as exc:
            return Answer(exc.code)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


class StormHistory(History):
    """A `History` whose next step may share the previous step's second (``same_second``): GitHub
    stamps comments to the second, and only the comment id orders two of one second."""

    def __init__(self, rig: Rig) -> None:
        super().__init__(rig)
        self.same_second = False
        self.last: datetime | None = None

    def tick(self) -> datetime:
        if self.same_second and self.last is not None:
            self.same_second = False
            return self.last
        self.last = super().tick()
        return self.last


def pr_steps(rng: random.Random, count: int) -> list[tuple[tuple[Any, ...], bool]]:
    """One PR's steps, each with whether it shares the previous step's second (a comment after a
    comment only: label and review events of one second are genuine ties, which resolve toward held)."""
    steps: list[tuple[tuple[Any, ...], bool]] = []
    previous = ""
    for _ in range(count):
        kind, user = rng.random(), rng.choice(WRITERS)
        if kind < 0.28:
            reason = rng.choice(model.REASONS)
            step: tuple[Any, ...] = ("comment", user, (model.Command("hold", reason), f"/hold {reason}".rstrip()))
        elif kind < 0.42:
            step = ("comment", user, (model.Command("lift"), rng.choice(("/unhold", "/hold cancel"))))
        elif kind < 0.46:
            step = ("comment", "mia", (model.Command("lift_all"), "/unhold all"))
        elif kind < 0.49:
            step = ("comment", "mia", (model.Command("lift_other", target=user), f"/unhold @{user}"))
        elif kind < 0.51:
            step = ("comment", "nora", (model.Command("hold"), "/hold"))  # refused: no access, not the author
        elif kind < 0.64:
            step = ("review", rng.choice((*WRITERS, "mia")), "changes_requested", (model.Command("noise"), ""))
        elif kind < 0.74:
            step = ("review", rng.choice((*WRITERS, "mia")), "approved", (model.Command("noise"), ""))
        elif kind < 0.78:
            step = ("dismiss", rng.randrange(8))
        elif kind < 0.94:
            step = ("label", model.HOLD_LABEL)
        else:
            step = ("push",)
        same = step[0] == "comment" and previous == "comment" and rng.random() < 0.35
        steps.append((step, same))
        previous = step[0]
    return steps


def free_up(history: StormHistory, number: int) -> None:
    """Lift everything on a PR (a lost lift would show as a PR left `failure`)."""
    pull = history.pulls[number]
    history.step(number, ("comment", "mia", (model.Command("lift_all"), "/unhold all")))
    for review in [r for r in pull.reviews if r.state == "changes_requested"]:
        history.step(number, ("review", review.user, "approved", (model.Command("noise"), "")))
    if model.HOLD_LABEL in pull.labels:
        history.step(number, ("label", model.HOLD_LABEL))


class StormScenario(Scenario):
    """Several repos with PRs 1 and 2 each; deliveries shuffled within a window and partly duplicated."""

    def __init__(self, rig: Rig, *, repos: int, steps: int, seed: int, window: int = 6,
                 duplicates: float = 0.15) -> None:
        rng = random.Random(seed)
        self.histories: list[History] = []
        by_repo = []
        for _ in range(repos):
            history = StormHistory(rig)
            plan = [(n, s) for n in (1, 2) for s in pr_steps(rng, steps)]
            rng.shuffle(plan)  # the two PRs' steps interleave; each PR's own order is kept below
            per_pr = {n: [s for m, s in plan if m == n] for n in (1, 2)}
            order = [n for n, _ in plan]
            for number in order:
                step, same = per_pr[number].pop(0)
                history.same_second = same
                history.step(number, step)
            for number in (1, 2):
                if rng.random() < 0.5:
                    free_up(history, number)
            self.histories.append(history)
            by_repo.append([(e, p, str(uuid.uuid4())) for e, p in history.deliveries])
        pending = _shuffle_windows(rng, _interleave(by_repo), window)
        for index in sorted(rng.sample(range(len(pending)), int(len(pending) * duplicates)), reverse=True):
            event, payload, guid = pending[index]
            again = (event, payload, guid if rng.random() < 0.5 else str(uuid.uuid4()))
            pending.insert(min(len(pending), index + rng.randint(1, 3 * window)), again)
        self.pending = pending
        self.acknowledged = 0


def _interleave(groups: list[list[Any]]) -> list[Any]:
    out: list[Any] = []
    for index in range(max(len(g) for g in groups)):
        out += [g[index] for g in groups if index < len(g)]
    return out


def _shuffle_windows(rng: random.Random, items: list[Any], window: int) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(items), window):
        chunk = items[start:start + window]
        rng.shuffle(chunk)
        out += chunk
    return out


@dataclass
class StormReport:
    seed: int
    deliveries: int
    worker_kills: int = 0
    redis_kills: int = 0
    storm_seconds: float = 0.0
    settle_seconds: float = 0.0
    fault_tail_seconds: float = 0.0
    faults_left: int = 0
    failed_jobs: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


def github_burst(emu: GitHubEmulator, rng: random.Random, *, writes: int = 20, runs: bool = True) -> None:
    """``writes`` status writes in a row fail. ``runs``: in runs of one kind each, in a seeded order — a
    write attempt (PyGithub's first try and its three retries) that ends on a 403/429 pauses every writer
    for GitHub's ``retry-after`` (`workers.publishing.pacing.rate_limit_wait`). Without ``runs`` the kinds alternate
    and every attempt ends on a 5xx, so nothing pauses: a storm short enough for `make test`."""
    if runs:
        kinds = list(FAULTS)
        rng.shuffle(kinds)
        sequence = [kind for kind in kinds for _ in range(writes // len(kinds))]
    else:
        sequence = [FAULTS[i % len(FAULTS)] for i in (2, 3, 0, 1) * (writes // len(FAULTS))]
    for status, headers in sequence:  # the emulator answers with its first matching fault
        emu.inject("POST", STATUSES, status, headers=headers, times=1)


def storm(scenario: Scenario, receiver: Receiver, emu: GitHubEmulator, fleet: Fleet, redis: DurableRedis,
          rng: random.Random, *, redis_kills: int = 3, runs: bool = True, writes: int = 20) -> float:
    """Stream every delivery while the workers die by turns a few hundred milliseconds after each got
    going, Redis dies ``redis_kills`` times and GitHub fails a burst of writes; returns the seconds it
    took. Ends with the last fault it causes (the GitHub burst may outlast it: writes use it up)."""
    start = time.monotonic()
    total = len(scenario.pending)
    kill_at = [total * (i + 1) // (redis_kills + 1) for i in range(redis_kills)]
    burst_at: int | None = rng.randrange(max(1, total // 2))
    client = Redis(port=redis.port, socket_timeout=1)
    sent, turn = 0, 0
    while scenario.pending or kill_at:
        if kill_at and (sent >= kill_at[0] or not scenario.pending):
            kill_at.pop(0)
            redis.kill()
            # Deliveries meet a dead Redis: 503, kept for redelivery.
            scenario.deliver(receiver, budget=2)  # type: ignore[arg-type]
            time.sleep(rng.uniform(0.3, 1.0))
            redis.start()
        if burst_at is not None and sent >= burst_at:
            github_burst(emu, rng, runs=runs, writes=writes)
            burst_at = None
        index, turn = turn % len(fleet.procs), turn + 1
        deadline = time.monotonic() + 8
        while not fleet.up(index, client) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(rng.uniform(0.1, 0.5))  # it runs jobs for a few hundred milliseconds...
        sent += scenario.deliver(receiver, budget=rng.randint(1, 3))  # type: ignore[arg-type]
        fleet.restart(index)  # ...and dies, in whatever it was doing
    client.close()
    return time.monotonic() - start
