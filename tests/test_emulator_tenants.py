"""Two installations on one emulated GitHub, as two tenants of one service see it: each token reaches
only its own installation's repos, and each installation has its own primary budget and its own
secondary write windows (GitHub counts both per installation)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests

from tests.emulator import GitHubEmulator
from tests.test_emulator import Clock, get, token_for

A_REPO, B_REPO = "bigco/service", "acme/widgets"
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def emu(clock: Clock) -> Iterator[GitHubEmulator]:
    with GitHubEmulator(clock=clock) as emulator:
        emulator.add_installation(1, "bigco")
        emulator.add_installation(2, "acme")
        emulator.add_repo(A_REPO, installation_id=1)
        emulator.add_repo(B_REPO, installation_id=2)
        emulator.add_pull(A_REPO, 1, head_sha=SHA, head_ref="a")
        emulator.add_pull(B_REPO, 1, head_sha=SHA, head_ref="b")
        yield emulator


def post_status(emu: GitHubEmulator, repo: str, token: str) -> int:
    return requests.post(f"{emu.url}/repos/{repo}/statuses/{SHA}", json={"state": "success", "context": "c"},
                         headers={"Authorization": f"token {token}"}, timeout=5).status_code


@pytest.mark.parametrize(("installation", "repo", "status"), [
    (1, A_REPO, 200),
    (2, B_REPO, 200),
    (1, B_REPO, 404),  # the other tenant's repo: GitHub does not confirm it exists
    (2, A_REPO, 404),
])
def test_a_token_reaches_only_its_installations_repos(emu: GitHubEmulator, installation: int, repo: str,
                                                      status: int) -> None:
    assert get(emu, f"/repos/{repo}/pulls/1", token_for(emu, installation)).status_code == status


@pytest.mark.parametrize(("a_minute", "a_hour", "a_ok", "b_ok"), [
    (2, None, 2, 5),  # A's own minute
    (None, 3, 3, 5),  # A's own hour
    (None, None, 5, 5),  # A's windows off: both write freely
])
def test_each_installation_has_its_own_write_windows(emu: GitHubEmulator, a_minute: int | None, a_hour: int | None,
                                                     a_ok: int, b_ok: int) -> None:
    emu.secondary_limit(80, 500)  # GitHub's own figures, for every installation...
    emu.secondary_limit(a_minute, a_hour, installation_id=1)  # ...but A's
    a, b = token_for(emu, 1), token_for(emu, 2)
    a_answers = [post_status(emu, A_REPO, a) for _ in range(5)]
    b_answers = [post_status(emu, B_REPO, b) for _ in range(5)]
    assert a_answers.count(201) == a_ok and b_answers.count(201) == b_ok
    # Counted only while a window is on (as GitHub's limit is what counts them here).
    assert emu.writes_in_window(1) == (a_ok if (a_minute, a_hour) != (None, None) else 0)
    assert emu.writes_in_window(2) == b_ok
    assert emu.refused_writes_of(1) == 5 - a_ok and emu.refused_writes_of(2) == 0


def test_a_full_window_of_one_installation_leaves_the_others_open(emu: GitHubEmulator, clock: Clock) -> None:
    emu.secondary_limit(2, None)
    a, b = token_for(emu, 1), token_for(emu, 2)
    assert [post_status(emu, A_REPO, a) for _ in range(3)] == [201, 201, 403]
    assert [post_status(emu, B_REPO, b) for _ in range(2)] == [201, 201]
    clock.now = time.time() + 61  # A's minute has passed
    assert post_status(emu, A_REPO, a) == 201


def test_each_installation_has_its_own_primary_budget(emu: GitHubEmulator) -> None:
    emu.rate_limit(2, installation_id=1)
    a, b = token_for(emu, 1), token_for(emu, 2)
    assert [get(emu, f"/repos/{A_REPO}", a).status_code for _ in range(3)] == [200, 200, 403]
    answers = [get(emu, f"/repos/{B_REPO}", b) for _ in range(3)]
    assert [x.status_code for x in answers] == [200, 200, 200]
    assert answers[0].headers["x-ratelimit-limit"] == "5000"
