"""A call trace of one delivery, from ``POST /webhooks/github`` to the status POST (docs/architecture.md,
"One delivery"). Run it: ``python -m tests.delivery_trace`` (``--all`` lists the library calls too).

One real ``issue_comment`` delivery — ``/unhold`` on a PR an earlier ``/hold`` held — (or, ``--event
pull_request``, a ``synchronize`` pushing a new head to that PR; ``--event push``, the branch push that moves
it, ahead of its ``synchronize``; ``--event check_run``, a click on *Lift my hold* in the PR's check run) goes
through the three hand-offs in this one process: the receiver (the Flask app's WSGI `FastPath`, a signed POST by the
test client), the intake pump (`workers.intake.pump.pump_all`), and the rq delivery job (``job.perform()``),
which posts the status to the GitHub emulator. `sys.setprofile` records every call from one product
module into another (packages `PRODUCT`) until the status POST.

The counting rule: a *step* is a call into the processes' own code — a module of `app/` or `workers/`
(`STEP_PACKAGES`), from another module (a call within one module is not a step). `state/` (storage) and
`core/` and `foundation/` (pure rules, settings) are libraries: they take data and give data back, and
their calls are listed (``--all``) but not counted. What a library calls by way of a third-party one
(redis-py building our lock class) is the library's call. Two properties make the path one way:

- no re-entry: no call enters a product module that is already on the call stack below its caller
  (no callback into a caller, however far down);
- no call up: no call from `state/`, `core/` or `foundation/` into `app/` or `workers/`.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from redis import Redis

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("app", "workers", "state", "core", "foundation")
STEP_PACKAGES = ("app", "workers")
LIBRARY_PACKAGES = ("state", "core", "foundation")
STATUS_POST = ("workers/github/gateway.py", "post_status")
"""Where the trace ends: the call that POSTs the status (the last step counted)."""
STEP_BUDGET = 30
"""Issue 31's "at most ~30 calls" from the receiver to the status write."""
REPO = "acme/express"
NUMBER = 1
OUTSIDE = "-"
"""The caller of a hand-off's first call: Flask, the test, rq."""


@dataclass(frozen=True)
class Call:
    caller: str
    """The module path of the nearest product frame above the call, or `OUTSIDE`."""
    callee: str
    function: str
    below: tuple[str, ...]
    """The product modules on the stack under the caller's own frames (nearest first, runs collapsed)."""

    @property
    def step(self) -> bool:
        return self.callee.split("/", 1)[0] in STEP_PACKAGES

    @property
    def reenters(self) -> bool:
        return self.callee in self.below

    @property
    def goes_up(self) -> bool:
        return self.caller.split("/", 1)[0] in LIBRARY_PACKAGES and self.step

    def __str__(self) -> str:
        return f"{self.caller} -> {self.callee}:{self.function}"


class Tracer:
    """A `sys.setprofile` hook recording the cross-module product calls until `STATUS_POST`."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.done = False
        self._modules: dict[str, str | None] = {}

    def module(self, filename: str) -> str | None:
        known = self._modules.get(filename, "")
        if known != "":
            return known
        path = Path(filename)
        found: str | None = None
        if path.is_absolute() and path.is_relative_to(ROOT):
            relative = path.relative_to(ROOT).as_posix()
            found = relative if relative.split("/", 1)[0] in PRODUCT else None
        self._modules[filename] = found
        return found

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call" or self.done:
            return
        callee = self.module(frame.f_code.co_filename)
        if callee is None:
            return
        stack: list[str] = []
        up = frame.f_back
        while up is not None:
            module = self.module(up.f_code.co_filename)
            if module is not None and (not stack or stack[-1] != module):
                stack.append(module)
            up = up.f_back
        caller = stack[0] if stack else OUTSIDE
        if caller == callee:
            return
        self.calls.append(Call(caller, callee, frame.f_code.co_name, tuple(stack[1:])))
        if (callee, frame.f_code.co_name) == STATUS_POST:
            self.done = True

    @contextmanager
    def on(self) -> Iterator[Tracer]:
        sys.setprofile(self)
        try:
            yield self
        finally:
            sys.setprofile(None)

    def steps(self) -> list[Call]:
        return [c for c in self.calls if c.step]


DELIVERIES = ("issue_comment", "pull_request", "push", "check_run")
"""What can be traced: ``/unhold`` on the held PR (the status flips to success), a ``pull_request``
``synchronize`` pushing a new head to it, the ``push`` of its branch that moves its head (either way the
new head gets the held status), or the holder's click on *Lift my hold* in its check run (success)."""
NEW_HEAD = "5" * 40


def trace_delivery(redis_url: str, event: str = "issue_comment") -> Tracer:
    """Deliver ``/hold`` (untraced: it warms the caches a steady state has), then trace one delivery of
    ``event`` (`DELIVERIES`) through the receiver, the pump and the delivery job until its status POST."""
    from core.check_run import LIFT, NAME
    from merge_hold import samples
    from tests.chat_support import emulated_service, head_sha, latest, seed_repo
    from tests.check_run_support import CHECKS, settle
    from tests.e2e_support import fixture
    from tests.emulator import GitHubEmulator
    from workers.intake.pump import pump_all

    Redis.from_url(redis_url).flushdb()
    with GitHubEmulator() as emulator:
        svc = emulated_service(emulator, redis_url, write_rate_per_minute=600_000.0)
        seed_repo(emulator, svc.redis, REPO, NUMBER)
        emulator.set_permission(REPO, "alice", "write")
        if event == "check_run":  # the installation lets the App write check runs: the run shows the button
            emulator.set_installation_permissions(1, CHECKS)

        def comment(body: str, comment_id: int) -> dict[str, Any]:
            return samples.issue_comment_event(REPO, NUMBER, body=body, commenter="alice", at=datetime.now(UTC),
                                               comment_id=comment_id, installation_id=1)

        assert svc.deliver("issue_comment", comment("/hold waiting for QA", 101)).status_code == 202
        settle(svc)  # the check runs' writer too (scheduled jobs run at once)
        assert (latest(emulator, REPO, NUMBER) or {}).get("state") == "failure"

        if event == "issue_comment":
            payload, head, wanted = comment("/unhold", 102), None, "success"
        elif event == "pull_request":
            emulator.update_pull(REPO, NUMBER, head_sha=NEW_HEAD)
            payload = samples.pull_request_event(REPO, NUMBER, action="synchronize", at=datetime.now(UTC),
                                                 installation_id=1, sha=NEW_HEAD, head_ref=f"topic-{NUMBER}")
            head, wanted = NEW_HEAD, "failure"
        elif event == "push":  # the branch push GitHub sends before the PR's `synchronize` (`workers/events/pushes.py`)
            emulator.update_pull(REPO, NUMBER, head_sha=NEW_HEAD)
            payload = fixture("push", "with-installation.payload.json")
            payload.update(ref=f"refs/heads/topic-{NUMBER}", before=head_sha(REPO, NUMBER), after=NEW_HEAD,
                           created=False, deleted=False, forced=False, commits=[], head_commit=None,
                           repository={**samples.repository(REPO), "pushed_at": int(datetime.now(UTC).timestamp())},
                           installation={"id": 1})
            head, wanted = NEW_HEAD, "failure"
        else:  # *Lift my hold* on the run the /hold wrote (`workers/events/check_actions.py`)
            run = emulator.check_run_shown(REPO, head_sha(REPO, NUMBER), NAME)
            assert run is not None, "no check run to click on"
            payload, head, wanted = emulator.click(REPO, int(run["id"]), LIFT, "alice"), None, "success"
        tracer = Tracer()
        with tracer.on():
            assert svc.deliver(event, payload).status_code == 202  # 1-2. the receiver, the intake
            pump_all(svc.redis, svc.rt.queue, "trace")  # 3. the pump
            job = svc.rt.queue.fetch_job(svc.rt.queue.job_ids[0])
            assert job is not None
            job.perform()  # 4-8. the delivery job, to the status POST
        assert tracer.done, "the delivery posted no status"
        posted = latest(emulator, REPO, NUMBER) if head is None else emulator.latest_status(REPO, head)
        assert (posted or {}).get("state") == wanted
        return tracer


def listing(calls: list[Call]) -> str:
    return "\n".join(f"{n:3}. {call}" for n, call in enumerate(calls, 1))


def main(argv: list[str] | None = None) -> int:
    from merge_hold.redis_server import LocalRedis

    logging.disable(logging.WARNING)  # the in-process worker's chatter: the listing is the output

    parser = argparse.ArgumentParser(prog="python -m tests.delivery_trace", description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="list the calls into state/, core/ and foundation/ too")
    parser.add_argument("--event", choices=DELIVERIES, default=DELIVERIES[0],
                        help="the delivery traced: /unhold (issue_comment, the default), a new head "
                             "(pull_request synchronize), the branch push that moves it (push), or a click on "
                             "Lift my hold (check_run)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        server = LocalRedis(Path(scratch)).start()  # a throwaway Redis: the trace flushes its database
        try:
            tracer = trace_delivery(server.url, args.event)
        finally:
            server.stop()
    steps = tracer.steps()
    print(listing(tracer.calls if args.all else steps))
    print(f"\n{len(steps)} steps (calls into app/ and workers/; budget {STEP_BUDGET}), "
          f"{len(tracer.calls)} cross-module calls in all; "
          f"re-entries: {sum(c.reenters for c in tracer.calls)}, calls up: {sum(c.goes_up for c in tracer.calls)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
