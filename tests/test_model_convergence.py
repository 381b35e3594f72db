"""Model-based test of the hold engine's invariants (design §4): convergence, idempotence, economy.

Hypothesis generates what happens on one or two PRs (`tests/reference_model.py`), each event with its
own strictly increasing timestamp and id. The deliveries go in shuffled and duplicated (under the same
and new delivery ids) through the signed HTTP receiver, and two `merge-hold worker --burst` processes
race on the queue against the GitHub emulator. Once drained, the status on each PR's head and the
verdict record must say what the independent reference model says; delivering everything again must
change and post nothing. Coalescing and lost updates get focused tests at the end.
"""

from __future__ import annotations

import hashlib
import itertools
import subprocess
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core import keys
from core.holds import to_iso
from core.prstate import Register, record_comment
from state import store
from tests import reference_model as model
from tests.e2e_support import Service, fixture, service_settings, worker_processes
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from workers.publishing.request import RECOMPUTE_JOB, request_recompute

OWNER = "acme"
ASSOCIATION = {"write": "COLLABORATOR", "maintain": "MEMBER", "none": "CONTRIBUTOR"}
BRANCHES = {1: "feature-one", 2: "feature-two"}
MAX_EXAMPLES = 20
"""1 to 2.5 s each (two worker processes per example). To explore, raise it and drop `derandomize`."""
_repos = itertools.count(1)


# --- the same history as GitHub's webhook deliveries ------------------------------------------------


class Rig:
    """The service and the emulated GitHub it talks to (a plain class: hypothesis reports it briefly)."""

    def __init__(self, svc: Service, emu: GitHubEmulator) -> None:
        self.svc, self.emu = svc, emu


@dataclass
class Pull:
    number: int
    sha: str
    labels: tuple[str, ...] = ()
    previous: str = ""
    events: list[model.Event] = field(default_factory=list)
    reviews: list[model.Reviewed] = field(default_factory=list)


class History:
    """Plays steps on a fresh repo of the GitHub emulator (a worker reading a PR's history there sees the
    same world), keeping the model's events and the deliveries GitHub would send. Each starts with an
    empty Redis, half an hour ago: a 10m hold is long expired when checked, a 1h one far from its end."""

    def __init__(self, rig: Rig, roles: dict[str, str] = model.ROLES) -> None:
        rig.svc.redis.flushdb()
        self.emu, self.repo, self.roles = rig.emu, f"{OWNER}/m{next(_repos)}", roles
        self.emu.add_repo(self.repo, installation_id=1, default_branch="main")
        for login, role in roles.items():
            self.emu.set_permission(self.repo, login, role)
        self.start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
        self.clock = itertools.count()
        self.pulls: dict[int, Pull] = {}
        self.deliveries: list[tuple[str, dict[str, Any]]] = []
        base = fixture("pull_request", "opened.payload.json")["repository"]
        self.repository = {**base, "full_name": self.repo, "name": self.repo.split("/")[1], "default_branch": "main",
                           "private": False, "owner": {**base["owner"], "login": OWNER}}

    def tick(self) -> datetime:
        return self.start + timedelta(seconds=next(self.clock))

    def sha(self, number: int) -> str:
        return hashlib.sha1(f"{self.repo}#{number}/{next(self.clock)}".encode()).hexdigest()

    def envelope(self, user: str, **fields: Any) -> dict[str, Any]:
        return {**fields, "repository": self.repository, "installation": {"id": 1},
                "sender": {"login": user, "type": "User"}}

    def snapshot(self, pull: Pull, at: datetime) -> dict[str, Any]:
        """The `pull_request` object of a delivery: the PR as it is right after the event at `at`."""
        pr: dict[str, Any] = fixture("pull_request", "opened.payload.json")["pull_request"]
        pr.update(number=pull.number, state="open", draft=False, updated_at=to_iso(at),
                  labels=[{"name": name} for name in pull.labels])
        pr["user"] = {**pr["user"], "login": model.AUTHORS[pull.number]}
        pr["head"] = {**pr["head"], "sha": pull.sha, "ref": BRANCHES[pull.number], "repo": self.repository}
        pr["base"] = {**pr["base"], "ref": "main", "repo": self.repository}
        self.emu.update_pull(self.repo, pull.number, head_sha=pull.sha, labels=pull.labels, updated_at=at)
        return pr

    def record(self, pull: Pull, event: model.Event, name: str, payload: dict[str, Any]) -> None:
        pull.events.append(event)
        self.deliveries.append((name, payload))

    def open(self, number: int) -> None:
        at = self.tick()
        pull = self.pulls[number] = Pull(number, self.sha(number))
        self.emu.add_pull(self.repo, number, head_sha=pull.sha, head_ref=BRANCHES[number], base="main",
                          user=model.AUTHORS[number], created_at=at, updated_at=at)
        payload = self.envelope(model.AUTHORS[number], action="opened", number=number,
                                pull_request=self.snapshot(pull, at))
        self.record(pull, model.Opened(at, pull.sha), "pull_request", payload)

    def step(self, number: int, step: tuple[Any, ...]) -> None:
        if number not in self.pulls:
            self.open(number)
        pull, at, kind = self.pulls[number], self.tick(), step[0]
        if kind == "comment":
            self.comment(pull, at, step[1], *step[2])
        elif kind == "review":
            self.review(pull, at, step[1], step[2], *step[3])
        elif kind == "dismiss":
            self.dismiss(pull, at, step[1])
        elif kind == "label":
            name, added = step[1], step[1] not in pull.labels
            pull.labels = tuple(sorted(set(pull.labels) ^ {name}))
            payload = self.envelope("mia", action="labeled" if added else "unlabeled", number=pull.number,
                                    label={"name": name}, pull_request=self.snapshot(pull, at))
            self.record(pull, model.Labeled(at, name, added, pull.labels), "pull_request", payload)
        elif kind == "push" or pull.previous:
            self.push(pull, at, pull.previous if kind == "revert" else self.sha(pull.number))

    def push(self, pull: Pull, at: datetime, sha: str) -> None:
        forced = sha == pull.previous
        before, pull.sha, pull.previous = pull.sha, sha, pull.sha
        author = model.AUTHORS[pull.number]
        push = self.envelope(author, ref=f"refs/heads/{BRANCHES[pull.number]}", before=before, after=pull.sha,
                             created=False, deleted=False, forced=forced, commits=[], head_commit=None)
        # As in GitHub's `push` events: when the push was taken, epoch seconds.
        push["repository"] = {**self.repository, "pushed_at": int(at.timestamp())}
        self.deliveries.append(("push", push))
        self.record(pull, model.Pushed(at, before, pull.sha), "pull_request", self.envelope(
            author, action="synchronize", number=pull.number, before=before, after=pull.sha,
            pull_request=self.snapshot(pull, at)))

    def comment(self, pull: Pull, at: datetime, user: str, command: model.Command, body: str) -> None:
        association = ASSOCIATION[self.roles[user]]
        ident = self.emu.add_issue_comment(self.repo, pull.number, user=user, body=body, created_at=at,
                                           author_association=association)
        payload = fixture("issue_comment", "created.payload.json")
        payload["issue"].update(number=pull.number, pull_request={"url": f"https://api.github.com/repos/"
                                                                         f"{self.repo}/pulls/{pull.number}"})
        payload["issue"]["user"] = {**payload["issue"]["user"], "login": model.AUTHORS[pull.number]}
        payload["comment"].update(
            id=ident, body=body, created_at=to_iso(at), updated_at=to_iso(at), author_association=association,
            user={"login": user, "type": "User"},
            html_url=f"https://github.com/{self.repo}/pull/{pull.number}#issuecomment-{ident}")
        self.record(pull, model.Commented(at, ident, user, command, body), "issue_comment",
                    {**payload, **self.envelope(user)})

    def review(self, pull: Pull, at: datetime, user: str, state: str, command: model.Command, body: str) -> None:
        ident = self.emu.add_review(self.repo, pull.number, user=user, state=state.upper(), submitted_at=at,
                                    body=body, author_association=ASSOCIATION[self.roles[user]])
        review = model.Reviewed(at, ident, user, state, command, body)
        pull.reviews.append(review)
        self.record(pull, review, "pull_request_review", self.review_payload(pull, review, at, "submitted"))

    def dismiss(self, pull: Pull, at: datetime, pick: int) -> None:
        deciding = [r for r in pull.reviews if r.state != "commented"]
        if not deciding:
            return
        target = deciding[pick % len(deciding)]
        pull.reviews.remove(target)
        self.emu.dismiss_review(self.repo, pull.number, target.review_id)
        self.record(pull, model.Dismissed(at, target.review_id, target.user, target.at), "pull_request_review",
                    self.review_payload(pull, target, at, "dismissed"))

    def review_payload(self, pull: Pull, review: model.Reviewed, at: datetime, action: str) -> dict[str, Any]:
        body = fixture("pull_request_review", "submitted.payload.json")["review"]
        body.update(id=review.review_id, body=review.body or None, submitted_at=to_iso(review.at),
                    state="dismissed" if action == "dismissed" else review.state,
                    author_association=ASSOCIATION[self.roles[review.user]],
                    user={"login": review.user, "type": "User"},
                    html_url=f"https://github.com/{self.repo}/pull/{pull.number}#pullrequestreview-{review.review_id}")
        return self.envelope(review.user, action=action, review=body, pull_request=self.snapshot(pull, at))


# --- running it --------------------------------------------------------------------------------------


@pytest.fixture()
def rig(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Rig:
    github_emulator.add_installation(1, OWNER)
    return Rig(Service.start(service_settings(redis_url, github_emulator.url, APP_ID, PRIVATE_KEY_PEM,
                                              github_emulator.app_slug)), github_emulator)


def finish(procs: list[subprocess.Popen[bytes]], timeout: float = 60) -> None:
    """Wait for burst workers to drain the queue and exit (reading their logs all the while, so that
    none blocks on a full pipe); fail with a worker's stderr on any error."""

    def wait(proc: subprocess.Popen[bytes]) -> bytes:
        try:
            return proc.communicate(timeout=timeout)[1]
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.communicate()[1] + b"\n(killed: the worker did not finish)"

    with ThreadPoolExecutor(len(procs)) as pool:
        logs = list(pool.map(wait, procs))
    for proc, log in zip(procs, logs, strict=True):
        assert proc.returncode == 0, log.decode(errors="replace")[-3000:]


def assert_drained(svc: Service) -> None:
    queue = svc.rt.queue
    assert queue.count == 0
    assert queue.started_job_registry.count == 0
    failed = queue.failed_job_registry
    if failed.count:
        job = queue.fetch_job(failed.get_job_ids()[0])
        raise AssertionError(f"job failed: {job.exc_info if job else failed.get_job_ids()}")
    retried = [j for j in queue.scheduled_job_registry.get_job_ids() if not j.startswith(("wake-", "sweep-"))]
    assert not retried, f"jobs left waiting for a retry: {retried}"


def posts(emu: GitHubEmulator, repo: str) -> list[tuple[str, str, str]]:
    return [(p["sha"], p["state"], p["description"]) for p in emu.status_posts() if p["repo"] == repo]


def check(svc: Service, emu: GitHubEmulator, repo: str, pull: Pull, want: model.Expected) -> None:
    """Convergence: the head's last status and the verdict record say what the model says. Economy."""
    latest = emu.latest_status(repo, want.head_sha)
    assert latest is not None, f"no status on #{pull.number}'s head {want.head_sha}"
    assert (latest["state"], latest["description"]) == (want.state, want.description)
    record = svc.verdict(repo, pull.number)
    assert record is not None
    assert (record["held"], record["state"], record["description"], record["head_sha"]) == (
        want.held, want.state, want.description, want.head_sha)
    assert [(h["source"], h["holder"]) for h in record["holds"]] == [(h.source, h.holder) for h in want.holds]
    # Economy.
    heads = [e.sha if isinstance(e, model.Opened) else e.after for e in pull.events
             if isinstance(e, model.Opened | model.Pushed)]
    on_pr = [p for p in posts(emu, repo) if p[0] in heads]
    assert all(a != b for a, b in itertools.pairwise(on_pr)), f"the same status POSTed twice running: {on_pr}"
    # A head force-pushed back to an earlier commit may get that commit's last status once more (the
    # `posted` record remembers one head): on such commits only the check above holds.
    for sha in {sha for sha in heads if heads.count(sha) == 1}:
        sequence = [p for p in on_pr if p[0] == sha]
        assert all(a != b for a, b in itertools.pairwise(sequence)), f"identical consecutive POSTs: {sequence}"
    # Each POST is a verdict change (the record's version counts them), and each event changes the
    # verdict at most once, plus the first verdict.
    # (An open PR's version is in its record; a closed one's is kept in `keys.verdict_version`.)
    record = store.load_verdict(svc.redis, repo, pull.number)
    changes = int(record["version"]) if record else int(svc.redis.get(keys.verdict_version(repo, pull.number)) or 0)
    assert len(on_pr) <= changes, f"{len(on_pr)} POSTs for {changes} verdict changes"
    assert len(on_pr) <= len(pull.events) + 1, f"{len(on_pr)} POSTs for {len(pull.events)} events"


def observable(svc: Service, emu: GitHubEmulator, repo: str, numbers: list[int]) -> Any:
    """What a duplicate must not change: statuses, verdict records, the audit history, the PR states.
    A PR state's push edges are left out: a push met before its PR's head was indexed had nowhere to
    go, and its redelivery may land; the `synchronize` event carries the head either way. So the
    verdict record's ``state_version`` (which state it was computed from) is left out too."""
    states = [{**store.load_pull(svc.redis, repo, n).to_dict(), "push_edges": None} for n in numbers]
    records = [{**(store.load_verdict(svc.redis, repo, n) or {}), "state_version": None} for n in numbers]
    return posts(emu, repo), states, records, svc.redis.xlen(keys.history(repo))


Delivery = tuple[str, dict[str, Any], str]  # event, payload, delivery id
Steps = list[tuple[int, tuple[Any, ...]]]


def play(rig: Rig, steps: Steps, arrive: Callable[[list[Delivery]], list[Delivery]],
         roles: dict[str, str] = model.ROLES) -> History:
    """Deliver the history in the order ``arrive`` makes of it, drain it with two worker processes, check
    the invariants against the model, then deliver everything again and check that nothing changes."""
    svc, emu, history = rig.svc, rig.emu, History(rig, roles)
    for number, step in steps:
        history.step(number, step)
    originals = [(event, payload, str(uuid.uuid4())) for event, payload in history.deliveries]
    for event, payload, delivery in arrive(originals):
        assert svc.deliver(event, payload, delivery_id=delivery).status_code == 202
    finish(list(worker_processes(svc.settings, 2)))
    assert_drained(svc)
    now = datetime.now(UTC)
    for pull in history.pulls.values():
        want = model.expected(pull.events, roles=roles, author=model.AUTHORS[pull.number], now=now)
        check(svc, emu, history.repo, pull, want)
    # Idempotence: everything once more, under the same and under new delivery ids, changes nothing.
    numbers = sorted(history.pulls)
    before = observable(svc, emu, history.repo, numbers)
    for event, payload, delivery in originals:
        svc.deliver(event, payload, delivery_id=delivery)
        svc.deliver(event, payload)
    svc.drain()
    assert observable(svc, emu, history.repo, numbers) == before
    return history


@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=model.histories(), data=st.data())
def test_any_delivery_order_converges_on_the_model_verdict(rig: Rig, steps: Steps, data: st.DataObject) -> None:
    def shuffled_with_duplicates(originals: list[Delivery]) -> list[Delivery]:
        again = data.draw(st.lists(st.tuples(st.sampled_from(range(len(originals))), st.booleans()),
                                   max_size=8), label="duplicates (index, same delivery id)")
        copies = [(e, p, d if same else str(uuid.uuid4())) for (e, p, d), same in
                  ((originals[i], same) for i, same in again)]
        return data.draw(st.permutations(originals + copies), label="arrival order")

    play(rig, steps, shuffled_with_duplicates)


def _met_late(originals: list[Delivery]) -> list[Delivery]:
    """A PR first met after its opening (the App installed later): its history is read from GitHub."""
    return [d for d in originals if d[1].get("action") != "opened"]


_hold, _review, _label, _push, _revert = (model.hold_step, model.review_step, ("label", model.HOLD_LABEL),
                                          ("push",), ("revert",))


@pytest.mark.parametrize(("steps", "arrive"), [
    # Found by the test above. The label was placed first: it is named first, however late its snapshot.
    ([(1, _hold("walt")), (1, _label), (1, _hold("walt")), (1, _review("mia", "changes_requested"))], list),
    ([(1, _hold("walt")), (1, _label), (1, _hold("mia"))], _met_late),
    # A force-push back to the commit before: the pushes go round in a circle, the facts tell the head.
    ([(1, _push), (1, _hold("mia")), (1, _push), (1, _revert)], list),
    ([(1, _push), (1, _push), (1, _revert), (1, _hold("mia")), (1, _revert)], reversed),
    # A review redelivered under a new delivery id is not audited again.
    ([(1, _review("walt", "approved"))], list),
], ids=["label-then-rehold", "label-on-a-pr-met-late", "revert", "revert-twice", "redelivered-review"])
def test_histories_that_once_broke_the_engine(rig: Rig, steps: Steps,
                                              arrive: Callable[[list[Delivery]], list[Delivery]]) -> None:
    play(rig, steps, lambda originals: list(arrive(originals)))


# --- coalescing and races on one PR ------------------------------------------------------------------


def until(condition: Any, what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def test_requests_during_a_running_recompute_coalesce_into_exactly_one_more(rig: Rig) -> None:
    svc, emu = rig.svc, rig.emu
    history = History(rig)
    repo = history.repo
    history.open(1)
    svc.deliver(*history.deliveries[0])
    svc.drain()
    assert posts(emu, repo) == [(history.pulls[1].sha, "success", "No holds")]
    queued, lock = keys.recompute_queued(repo, 1), keys.recompute_lock(repo, 1)

    def hold(index: int) -> None:
        at = history.start + timedelta(minutes=1, seconds=index)
        register = Register(at=at, held=True, ref=str(5000 + index), reason=f"r{index}")
        store.update_pull(svc.redis, repo, 1, lambda s: record_comment(s, f"dev{index:02d}", register))

    hold(0)
    with emu.lock:  # GitHub stalls: the recompute now posting its status keeps running until released
        assert request_recompute(svc.rt, repo, 1)
        procs = list(worker_processes(svc.settings, 1))
        until(lambda: svc.redis.exists(lock), "a recompute runs")
        until(lambda: not svc.redis.exists(queued), "the running recompute took its request (or the next is lost)")
        hold(1)
        assert request_recompute(svc.rt, repo, 1), "a request while one runs must lead to one more"
        # A second worker takes that one and waits for the PR's lock; the next 19 requests find it queued.
        procs += worker_processes(svc.settings, 1)
        # (A drain job may wait meanwhile: the watchdog drains an outbox whose write is in flight.)
        until(lambda: not [j for j in svc.rt.queue.jobs if j.func_name == RECOMPUTE_JOB],
              "the second worker takes the next recompute")
        for index in range(2, 21):
            hold(index)
            assert not request_recompute(svc.rt, repo, 1), f"request {index} was not coalesced"
    finish(procs)
    assert_drained(svc)
    # Finished recomputes leave no job behind (design §7): the two `True` requests above are the two runs.
    sha = history.pulls[1].sha
    assert posts(emu, repo) == [(sha, "success", "No holds"), (sha, "failure", "Held by @dev00: r0"),
                                (sha, "failure", "Held by @dev00: r0 (+20 more)")]


def test_two_workers_racing_on_one_pr_lose_no_update(rig: Rig) -> None:
    roles = {**model.ROLES, **{f"dev{i:02d}": "write" for i in range(30)}}
    steps = [(1, model.hold_step(f"dev{i:02d}", f"r{i}")) for i in range(30)]
    history = play(rig, steps, list, roles)
    latest = rig.emu.latest_status(history.repo, history.pulls[1].sha)
    assert latest is not None and latest["description"] == "Held by @dev00: r0 (+29 more)"
