"""Machinery of the fault tests: a Redis that can be SIGKILLed and restarted on its append-only file,
`merge-hold worker` processes that can be SIGKILLed and restarted, seeded histories on several repos,
deliveries that GitHub would redeliver until acknowledged, and convergence on the reference model.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core import keys
from foundation.settings import Settings
from merge_hold.redis_server import free_port, redis_server_binary
from tests import reference_model as model
from tests.e2e_support import ROOT, Service, service_env
from tests.emulator import GitHubEmulator
from tests.test_model_convergence import History, Rig

USERS = sorted(model.ROLES)


class DurableRedis:
    """redis-server on a fixed port with ``appendonly yes`` and ``appendfsync always``: SIGKILL loses
    nothing acknowledged, and a restart on the same port finds every key again."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir, self.port = data_dir, free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.kills = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> DurableRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [redis_server_binary(), "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.data_dir),
             "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        import redis

        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_timeout=1).ping():
                    return self
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not come up")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Fleet:
    """`merge-hold worker` processes, each in its own session so SIGKILL takes the whole process group
    (rq's scheduler child with it), as a container's death would."""

    def __init__(self, settings: Settings, count: int, log_dir: Path, **env: str) -> None:
        self.env = service_env(settings) | {"MERGE_HOLD_WRITE_RATE": "60000", **env}
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * count
        self.names = [""] * count
        self.kills = 0
        for index in range(count):
            self.start(index)

    def start(self, index: int) -> None:
        log = (self.log_dir / f"worker-{index}.log").open("ab")
        self.names[index] = f"w{index}-{uuid.uuid4().hex[:6]}"
        self.procs[index] = subprocess.Popen(
            [sys.executable, "-m", "merge_hold.cli", "worker", "--name", self.names[index]],
            env=self.env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)

    def kill(self, index: int) -> None:
        proc = self.procs[index]
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            self.kills += 1
        self.procs[index] = None

    def restart(self, index: int) -> None:
        self.kill(index)
        self.start(index)

    def up(self, index: int, redis: Any) -> bool:
        """The worker got going: its watchdog beats (a worker killed while importing never ran a job)."""
        try:
            return bool(redis.exists(keys.worker_alive(self.names[index])))
        except Exception:
            return False  # Redis is down: nobody is known to be up

    def all_running(self) -> bool:
        return all(p is not None and p.poll() is None for p in self.procs)

    def stop(self) -> None:
        for index in range(len(self.procs)):
            self.kill(index)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in self.log_dir.glob("*.log"))


def random_steps(rng: random.Random, count: int) -> list[tuple[int, tuple[Any, ...]]]:
    """Holds, lifts, reviews, dismissals, the hold label and pushes on PRs 1 and 2 of one repo."""
    steps: list[tuple[int, tuple[Any, ...]]] = []
    for _ in range(count):
        user, kind = rng.choice(USERS), rng.random()
        if kind < 0.35:
            reason = rng.choice(model.REASONS)
            step: tuple[Any, ...] = ("comment", user, (model.Command("hold", reason), f"/hold {reason}".rstrip()))
        elif kind < 0.55:
            step = ("comment", user, (model.Command("lift"), "/unhold"))
        elif kind < 0.62:
            step = ("comment", user, (model.Command("lift_all"), "/unhold all"))
        elif kind < 0.75:
            step = ("review", user, rng.choice(("changes_requested", "approved")), (model.Command("noise"), ""))
        elif kind < 0.8:
            step = ("dismiss", rng.randrange(8))
        elif kind < 0.92:
            step = ("label", model.HOLD_LABEL)
        else:
            step = ("push",)
        steps.append((rng.choice((1, 2)), step))
    return steps


class Scenario:
    """Several repos' histories, their deliveries in order, and the model's verdicts."""

    def __init__(self, rig: Rig, *, repos: int, steps: int, seed: int) -> None:
        rng = random.Random(seed)
        # Each History starts from an empty Redis: build them all before anything is delivered.
        self.histories = [History(rig) for _ in range(repos)]
        for history in self.histories:
            for number, step in random_steps(rng, steps):
                history.step(number, step)
        by_repo = [[(event, payload, str(uuid.uuid4())) for event, payload in h.deliveries] for h in self.histories]
        self.pending: list[tuple[str, dict[str, Any], str]] = _interleave(by_repo)
        self.acknowledged = 0

    def deliver(self, svc: Service, budget: int | None = None) -> int:
        """Deliver up to ``budget`` pending deliveries, oldest first; a refused one (503: Redis down)
        stays pending, as GitHub's redelivery would bring it back. Returns how many were acknowledged."""
        done = 0
        for delivery in list(self.pending[:budget] if budget else self.pending):
            event, payload, guid = delivery
            try:
                code = svc.deliver(event, payload, delivery_id=guid).status_code
            except Exception:
                code = 503
            if code != 202:
                break
            self.pending.remove(delivery)
            done += 1
        self.acknowledged += done
        return done

    def expected(self) -> dict[tuple[str, int], model.Expected]:
        now = datetime.now(UTC)
        return {(h.repo, n): model.expected(pull.events, roles=model.ROLES, author=model.AUTHORS[n], now=now)
                for h in self.histories for n, pull in h.pulls.items()}

    def wrong(self, svc: Service, emu: GitHubEmulator) -> list[str]:
        """PRs whose status on GitHub or verdict record differs from the model (empty: converged)."""
        found = []
        for (repo, number), want in self.expected().items():
            latest = emu.latest_status(repo, want.head_sha)
            got = None if latest is None else (latest["state"], latest["description"])
            try:
                record = svc.verdict(repo, number)
            except Exception as exc:
                found.append(f"{repo}#{number}: {exc}")
                continue
            if got != (want.state, want.description):
                # The record's description tells a lost event (the record agrees) from a lost write.
                said = record and (record["state"], record.get("description"))
                found.append(f"{repo}#{number}: status {got}, record {said}, model {(want.state, want.description)}")
                continue
            if record is None or (record["held"], record["state"]) != (want.held, want.state):
                found.append(f"{repo}#{number}: record {record and (record['held'], record['state'])}")
        return found


def _interleave(groups: list[list[Any]]) -> list[Any]:
    out: list[Any] = []
    for index in range(max(len(g) for g in groups)):
        out += [g[index] for g in groups if index < len(g)]
    return out


def converge(scenario: Scenario, svc: Service, emu: GitHubEmulator, fleet: Fleet, *, within: float,
             also: Callable[[], None] = lambda: None) -> float:
    """Deliver what is left, then wait until every PR is right; the seconds it took. Fails with the
    PRs still wrong and the workers' logs."""
    start = time.monotonic()
    wrong: list[str] = []
    while time.monotonic() - start < within:
        also()
        if scenario.pending:
            scenario.deliver(svc)
        elif not (wrong := scenario.wrong(svc, emu)):
            return time.monotonic() - start
        time.sleep(0.25)
    raise AssertionError(f"not converged in {within:.0f}s: {wrong or scenario.pending[:3]}\n{fleet.logs()}")
