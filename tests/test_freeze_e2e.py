"""Freeze windows end to end: a repo config with a window, PRs at the GitHub emulator, `publish` at
chosen moments (no sleeping) around two daylight-saving changes, exempt labels and exemptions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest
from redis import Redis

from core.exempt_labels import LabelGrant
from core.prstate import Facts, PullState, record_facts
from state import store
from tests.chat_support import emulated_service, head_sha, latest
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from tests.publish_now import publish
from workers.chat.rooms import lift_exemption, place_exemption
from workers.events.repos import load_repo_config

REPO = "acme/widgets"
CONFIG = """\
# Sunday night deploys are frozen, Berlin time.
exempt-labels: [emergency]
freeze-windows:
  - name: sunday-freeze
    days: [sun]
    from: "01:00"
    to: "04:00"
    timezone: Europe/Berlin
    branches: [main, "release/*"]
    exempt-labels: [hotfix]
"""
PRS = {1: ("main", ()), 2: ("main", ("hotfix",)), 3: ("main", ("emergency",)), 4: ("dev", ()),
       5: ("release/2", ()), 6: ("main", ("do-not-merge/hold",))}
"""number -> (base, labels)."""
CEST = "Frozen by sunday-freeze: freeze sunday-freeze until Sun 04:00 CEST"
CET = "Frozen by sunday-freeze: freeze sunday-freeze until Sun 04:00 CET"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture()
def frozen(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    svc = emulated_service(github_emulator, redis_url)
    github_emulator.add_installation(1, "acme")
    github_emulator.add_repo(REPO, installation_id=1)
    github_emulator.set_file(REPO, ".github/merge-hold.yml", CONFIG)
    load_repo_config(svc.rt, REPO, installation_id=1, default_branch="main")
    for number, (base, labels) in PRS.items():
        github_emulator.add_pull(REPO, number, head_sha=head_sha(REPO, number), head_ref=f"t{number}", base=base,
                                 labels=labels)
        facts = Facts(at=utc("2026-01-01T00:00:00"), head_sha=head_sha(REPO, number), head_ref=f"t{number}",
                      head_repo=REPO, base=base, author="octocat", labels=tuple(labels))
        # Known to merge-hold since before the window, history read (`synced`), as after a bootstrap; the
        # exempt labels added by a maintainer on this head (`core.exempt_labels`).
        grants = {label: LabelGrant(facts.at, True, by="maya", trusted=True, head_sha=facts.head_sha)
                  for label in labels if label != "do-not-merge/hold"}
        store.update_pull(redis_client, REPO, number, partial(known_granted, facts, grants))
    return svc


def known(facts: Facts, state: PullState) -> PullState:
    return replace(record_facts(state, facts), synced=True)


def known_granted(facts: Facts, grants: dict[str, LabelGrant], state: PullState) -> PullState:
    return replace(known(facts, state), grants=grants)


def states_at(svc: Service, emulator: GitHubEmulator, moment: datetime) -> dict[int, str]:
    """Publish every PR as of ``moment``; the description now posted on each."""
    for number in PRS:
        publish(svc.rt, REPO, number, moment)
    return {n: (latest(emulator, REPO, n) or {}).get("description", "") for n in PRS}


@pytest.mark.parametrize(("moment", "frozen_with"), [
    # An ordinary winter Sunday: 01:00-04:00 CET is 00:00-03:00 UTC.
    ("2026-03-22T00:00:00", CET), ("2026-03-22T02:59:59", CET), ("2026-03-22T03:00:00", None),
    ("2026-03-21T23:59:59", None),
    # Spring forward (29 March 2026, 02:00 CET -> 03:00 CEST): 00:00-02:00 UTC, two hours of wall clock lost.
    ("2026-03-28T23:59:59", None), ("2026-03-29T00:00:00", CEST), ("2026-03-29T01:59:59", CEST),
    ("2026-03-29T02:00:00", None), ("2026-03-29T02:30:00", None),
    # Fall back (25 October 2026, 03:00 CEST -> 02:00 CET): 23:00 UTC Saturday to 03:00 UTC, four hours.
    ("2026-10-24T22:59:59", None), ("2026-10-24T23:00:00", CET), ("2026-10-25T02:30:00", CET),
    ("2026-10-25T02:59:59", CET), ("2026-10-25T03:00:00", None),
])
def test_the_status_names_the_freeze_while_it_lasts_across_dst(frozen: Service, github_emulator: GitHubEmulator,
                                                               moment: str, frozen_with: str | None) -> None:
    seen = states_at(frozen, github_emulator, utc(moment))
    free = "No holds"
    assert seen[1] == (frozen_with or free)
    assert seen[5] == (frozen_with or free)  # a release branch is frozen too
    assert seen[2] == free  # the window's own exempt label
    assert seen[3] == free  # the config-wide exempt label
    assert seen[4] == free  # a branch the window does not cover
    assert seen[6].startswith("Held by label do-not-merge/hold")  # no exempt label lifts a label hold


def test_the_freeze_ends_on_time_through_its_scheduled_wakeup(frozen: Service,
                                                              github_emulator: GitHubEmulator) -> None:
    start, end = utc("2026-03-29T00:00:00"), utc("2026-03-29T02:00:00")
    publish(frozen.rt, REPO, 1, start + timedelta(minutes=30))
    assert (latest(github_emulator, REPO, 1) or {})["state"] == "failure"
    wakeups = frozen.rt.queue.scheduled_job_registry.get_job_ids()
    assert f"wake-acme_widgets-1-{int(end.timestamp())}" in wakeups
    job = frozen.rt.queue.fetch_job(f"wake-acme_widgets-1-{int(end.timestamp())}")
    assert job is not None and job.func_name == "workers.publishing.recompute.recompute_job" and job.args == (REPO, 1)
    # What that job does when rq's scheduler runs it at the end of the window:
    assert publish(frozen.rt, REPO, 1, end) == "posted"
    assert (latest(github_emulator, REPO, 1) or {}) ["description"] == "No holds"
    # And a freeze that starts later wakes the PR at its start.
    publish(frozen.rt, REPO, 1, end + timedelta(hours=1))
    next_start = utc("2026-04-04T23:00:00")  # Sunday 5 April, 01:00 CEST
    assert f"wake-acme_widgets-1-{int(next_start.timestamp())}" in frozen.rt.queue.scheduled_job_registry.get_job_ids()


def test_an_exemption_lets_one_pr_through_the_freeze_until_it_ends(frozen: Service, github_emulator: GitHubEmulator,
                                                                   redis_client: Redis) -> None:
    during = utc("2026-03-22T01:00:00")
    place_exemption(redis_client, f"{REPO}#1", by="dana", reason="security fix", origin="slack:acme/#ops",
                    now=during, duration=timedelta(minutes=30), head_sha=head_sha(REPO, 1))
    place_exemption(redis_client, f"{REPO}#6", by="dana", reason="security fix", origin="slack:acme/#ops",
                    now=during, head_sha=head_sha(REPO, 6))
    seen = states_at(frozen, github_emulator, during)
    assert seen[1] == "No holds"
    assert seen[5] == CET  # exemptions are per PR
    assert seen[6].startswith("Held by label")  # never through a label hold
    wake = f"wake-acme_widgets-1-{int((during + timedelta(minutes=30)).timestamp())}"
    assert wake in frozen.rt.queue.scheduled_job_registry.get_job_ids()
    assert states_at(frozen, github_emulator, during + timedelta(minutes=30))[1] == CET  # expired
    place_exemption(redis_client, f"{REPO}#1", by="dana", reason="again", origin="slack:acme/#ops", now=during,
                    head_sha=head_sha(REPO, 1))
    assert states_at(frozen, github_emulator, during)[1] == "No holds"
    lift_exemption(redis_client, f"{REPO}#1", actor="erin", origin="slack:acme/#ops")
    assert states_at(frozen, github_emulator, during)[1] == CET
