"""Installing on a big org: a bootstrap queues its statuses most-recently-active first across the
installation's repos, activity on a PR it has not reached puts that PR at the front, and `doctor`
shows how far it is (N of M PRs have a status, about when the rest will) and warns against requiring
`merge-hold` while it is far from done."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from core import keys
from merge_hold import samples
from merge_hold.doctor_bootstrap import bootstrap_checks
from state.queueing import enqueue_delivery
from tests.chat_support import emulated_service, head_sha, seed_repo
from tests.e2e_support import Service, fixture
from tests.emulator import GitHubEmulator
from tests.webapp_support import make_app, post_form
from workers.ops.tenants import tenant_worker, work
from workers.publishing.pacing import Pacer

REPOS = ["bigco/api", "bigco/web", "bigco/ops"]
PRS = 4
FAST = 600_000.0


def activity(repo_index: int, number: int) -> int:
    """Epoch seconds of a PR's last activity: interleaved across the repos, newest in the middle repo."""
    return 1_767_000_000 + number * 100 + (repo_index * 7) % len(REPOS)


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    service = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST)
    github_emulator.add_installation(1, "bigco")
    for index, repo in enumerate(REPOS):
        github_emulator.add_repo(repo, installation_id=1)
        for number in range(1, PRS + 1):
            github_emulator.add_pull(repo, number, head_sha=head_sha(repo, number), head_ref=f"t-{number}",
                                     updated_at=activity(index, number))
    seed_repo(github_emulator, redis_client, "acme/widgets", 1, installation_id=2)
    return service


def run(svc: Service, jobs: int = 10_000) -> None:
    work(tenant_worker(svc.rt.queue), burst=True, max_jobs=jobs, with_scheduler=False)


def install(svc: Service) -> None:
    created = fixture("installation", "created.payload.json")
    created["installation"]["id"] = 1
    created["repositories"] = [{"full_name": r, "private": False} for r in REPOS]
    enqueue_delivery(svc.rt.queue, "installation", "install-1", samples.encode(created))


def outbox(redis: Redis) -> list[str]:
    return [m.decode() if isinstance(m, bytes) else str(m) for m in redis.zrange(keys.outbox("inst-1"), 0, -1)]


def newest_first() -> list[str]:
    ranked = sorted(((activity(i, n), f"{repo}#{n}") for i, repo in enumerate(REPOS) for n in range(1, PRS + 1)),
                    reverse=True)
    return [member for _, member in ranked]


def test_a_bootstrap_queues_its_statuses_most_recently_active_first(svc: Service) -> None:
    Pacer.of(svc.redis, svc.settings, "inst-1").pause(3600)  # the hour is spent: every write waits
    install(svc)
    run(svc)
    assert outbox(svc.redis) == newest_first()  # across the repos, not repo by repo


def test_activity_on_a_pr_not_yet_reached_puts_it_at_the_front(svc: Service) -> None:
    Pacer.of(svc.redis, svc.settings, "inst-1").pause(3600)
    install(svc)
    run(svc)
    oldest = newest_first()[-1]
    repo, number = oldest.split("#")
    labeled = samples.pull_request_event(repo, int(number), action="labeled", at=datetime.now(UTC), installation_id=1,
                                         sha=head_sha(repo, int(number)))
    enqueue_delivery(svc.rt.queue, "pull_request", "labeled-1", samples.encode(labeled))
    run(svc)
    assert outbox(svc.redis) == [oldest, *newest_first()[:-1]]


def test_doctor_follows_the_bootstrap_and_warns_while_it_is_far_from_done(svc: Service) -> None:
    install(svc)
    run(svc, 1)  # the installation delivery: three bootstrap jobs wait
    (check,) = bootstrap_checks(svc.redis, svc.settings)
    assert (check.name, check.ok) == ("bootstrap of installation 1", False)
    assert check.detail.startswith("0 of 0 open PRs have a status (3 of 3 repos not listed yet)")
    assert "required check" in check.fix
    Pacer.of(svc.redis, svc.settings, "inst-1").pause(3600)  # nothing written for now
    run(svc)
    (check,) = bootstrap_checks(svc.redis, svc.settings)
    assert not check.ok and check.detail.startswith(f"0 of {len(REPOS) * PRS} open PRs have a status; at the write")
    assert "the rest in about" in check.detail
    # The window opens again (and the drain that waited for it is due).
    svc.redis.delete(keys.pacer("inst-1"), keys.pacer_hour("inst-1"), keys.outbox_lease("inst-1"))
    from workers.publishing.drain import drain

    drain(svc.rt, "inst-1", slice_seconds=None)
    (check,) = bootstrap_checks(svc.redis, svc.settings)
    assert check.ok and check.detail == f"{len(REPOS) * PRS} of {len(REPOS) * PRS} open PRs have a status; done"


@pytest.mark.parametrize(("stage", "shown"), [
    ("queued", "Installing (installation 1): 0 of 0 open PRs have a status (3 of 3 repos not listed yet)"),
    ("listed", f"Installing (installation 1): 0 of {len(REPOS) * PRS} open PRs have a status; at the write"),
    ("done", None),
])
def test_the_dashboard_shows_a_bootstrap_under_way(svc: Service, tmp_path: Path, stage: str,
                                                   shown: str | None) -> None:
    install(svc)
    run(svc, 1)
    if stage != "queued":
        if stage == "listed":
            Pacer.of(svc.redis, svc.settings, "inst-1").pause(3600)
        run(svc)
    app, token = make_app(svc.redis, tmp_path)
    client = app.test_client()
    assert post_form(client, "/login", {"token": token}).status_code == 302
    page = client.get("/").get_data(as_text=True)
    # /setup, once the App exists, shows the same to the operator on this machine (read-only)
    from tests.emulator import APP_ID, PRIVATE_KEY_PEM

    configured, _ = make_app(svc.redis, tmp_path / "app", github_app_id=APP_ID, github_private_key=PRIVATE_KEY_PEM)
    setup_page = configured.test_client().get("/setup").get_data(as_text=True)
    for text in (page, setup_page):
        if shown is None:
            assert "Installing" not in text
        else:
            assert shown in text and "do not make <code>merge-hold</code> a required check" in text
    assert ("No bootstrap under way" in setup_page) is (shown is None)
