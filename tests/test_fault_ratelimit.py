"""A rate limit that outlasts PyGithub's own retries pauses the writers for as long as GitHub asked —
not a default minute per failed write. Found by the crash-loop storm (`tests/test_fault_storm.py`):
twenty status writes failing in a row, with `retry-after: 1`, paused every write of the installation
a minute per attempt, and PRs held during the burst showed `success` for minutes after it."""

from __future__ import annotations

import pytest
from redis import Redis

from tests.chat_support import emulated_service, head_sha, seed_repo
from tests.emulator import GitHubEmulator
from tests.paced_gateway import PacedGateway, RateLimited
from workers.publishing.pacing import DEFAULT_PAUSE, Pacer

REPO = "acme/widgets"
PAYLOAD = {"state": "failure", "context": "merge-hold", "description": "Held by @alice"}


@pytest.mark.parametrize(("status", "advised", "pause"), [
    (429, "1", 1.0), (403, "2", 2.0),
    (403, "0", DEFAULT_PAUSE), (429, None, DEFAULT_PAUSE),  # no advice: the default minute
], ids=["429-retry-after-1", "403-retry-after-2", "403-retry-after-0", "429-no-advice"])
def test_an_exhausted_rate_limit_pauses_as_long_as_github_asked(
        github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, status: int, advised: str | None,
        pause: float) -> None:
    svc = emulated_service(github_emulator, redis_url)
    seed_repo(github_emulator, redis_client, REPO, 1)
    pacer = Pacer(redis_client, 600_000.0, "inst-1")
    gateway = PacedGateway(svc.rt.github, pacer)
    headers = {"retry-after": advised} if advised is not None else {}
    # More refusals than PyGithub's retry tries (each after its retry-after): the gateway gets them.
    github_emulator.inject("POST", r"/statuses/", status, headers=headers, times=4,
                           body={"message": "You have exceeded a secondary rate limit."})
    with pytest.raises(RateLimited) as limited:
        gateway.post_status(REPO, head_sha(REPO, 1), PAYLOAD)
    assert limited.value.seconds == pytest.approx(pause, abs=0.1)
    assert pacer.paused_for() == pytest.approx(pause, abs=0.2)
