"""Chat notifications end to end: `/hold subscribe` through the signed Slack endpoint, freezes and
reviews through the real publish path and webhooks, the hook's records through the API, a real rq
worker posting the pending lines, and a Slack Web API stand-in on loopback receiving ``chat.postMessage``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from redis import Redis

from core import jobs, keys
from core.prstate import Facts
from merge_hold.tokens import create as create_token
from state import room_holds, store, subscriptions
from tests.chat_support import (
    BINDING,
    MATTERMOST_TOKEN,
    SLACK_SECRET,
    drain,
    dry_runtime,
    emulated_service,
    head_sha,
    latest,
    response_catcher,
    slack_body,
    slack_headers,
)
from tests.e2e_support import Service
from tests.emulator import GitHubEmulator
from tests.publish_now import publish
from tests.slack_standin import SlackStandIn, slack_standin
from tests.test_freeze_e2e import CONFIG, PRS, REPO, known, utc
from workers.events.repos import load_repo_config

FROZEN_AT = utc("2026-03-22T00:30:00")  # within sunday-freeze (01:00-04:00 Berlin, CET)


@pytest.fixture()
def standin() -> Iterator[SlackStandIn]:
    with slack_standin() as running:
        yield running


@pytest.fixture()
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drain at once (no rq scheduler in the in-process worker) and retry at once."""
    monkeypatch.setattr(subscriptions, "BATCH_SECONDS", 0)
    monkeypatch.setattr(jobs, "NOTIFY_POST", replace(jobs.NOTIFY_POST, retry=(0, 0, 0)))


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str, standin: SlackStandIn,
        tmp_path: Path, fast: None) -> Service:
    service = emulated_service(github_emulator, redis_url, slack_signing_secret=SLACK_SECRET, slack_teams=BINDING,
                               slack_bot_token="xoxb-test-token", slack_api_url=standin.api_url,
                               api_tokens_file=str(tmp_path / "tokens"), queue_name="merge-hold-notify",
                               chat_admins=("UADMIN",))
    github_emulator.add_installation(1, "acme")
    github_emulator.add_repo(REPO, installation_id=1)
    github_emulator.set_file(REPO, ".github/merge-hold.yml", CONFIG)
    load_repo_config(service.rt, REPO, installation_id=1, default_branch="main")
    for number, (base, labels) in PRS.items():
        github_emulator.add_pull(REPO, number, head_sha=head_sha(REPO, number), head_ref=f"t{number}", base=base,
                                 labels=labels)
        facts = Facts(at=utc("2026-01-01T00:00:00"), head_sha=head_sha(REPO, number), head_ref=f"t{number}",
                      head_repo=REPO, base=base, author="octocat", labels=tuple(labels))
        store.update_pull(redis_client, REPO, number, partial(known, facts))
    return service


def chat(svc: Service, text: str, **fields: str) -> str:
    body = slack_body("/hold", text, **fields)
    response = svc.client.post("/chat/slack", data=body, headers=slack_headers(body))
    assert response.status_code == 200
    return str(response.get_json()["text"])


def freeze(svc: Service) -> None:
    for number in PRS:
        publish(svc.rt, REPO, number, FROZEN_AT)


def test_subscribed_channel_hears_the_freeze_start(svc: Service, standin: SlackStandIn) -> None:
    assert "now hears about acme/widgets" in chat(svc, "subscribe acme/widgets")
    freeze(svc)
    drain(svc.rt)
    (call,) = standin.wait(1)
    assert call["channel"] == "C0REL" and call["token"] == "xoxb-test-token"
    assert "freeze sunday-freeze started: acme/widgets#1 is held" in call["text"]
    assert "acme/widgets#5" in call["text"] and "acme/widgets#4" not in call["text"]  # dev is not frozen
    svc.redis.delete(keys.notify_sent("slack:T0MERGE1:C0REL"))  # past the rate limit's interval
    for number in PRS:
        publish(svc.rt, REPO, number, utc("2026-03-22T03:00:00"))  # the window has ended
    drain(svc.rt)
    ended = standin.wait(2)[-1]["text"]
    assert ":sunny: freeze sunday-freeze ended: acme/widgets#1 is free" in ended
    assert "acme/widgets#6" not in ended  # still held by its label


def test_held_pr_approved_and_queued_told_once(svc: Service, standin: SlackStandIn) -> None:
    chat(svc, "subscribe acme/widgets")
    freeze(svc)
    drain(svc.rt)
    standin.wait(1)
    svc.redis.delete(keys.notify_sent("slack:T0MERGE1:C0REL"))
    review = {"action": "submitted", "repository": {"full_name": REPO, "default_branch": "main"},
              "installation": {"id": 1},
              "review": {"id": 77, "user": {"login": "maria"}, "state": "approved", "body": "",
                         "submitted_at": "2026-03-22T00:40:00Z", "html_url": "", "author_association": "MEMBER"},
              "pull_request": {"number": 6, "user": {"login": "octocat"}}}
    group = {"action": "checks_requested", "repository": {"full_name": REPO, "default_branch": "main"},
             "installation": {"id": 1},
             "merge_group": {"head_sha": "a" * 40, "head_ref": f"refs/heads/gh-readonly-queue/main/pr-6-{'b' * 40}",
                             "base_ref": "refs/heads/main", "base_sha": "c" * 40}}
    for _twice in (1, 2):  # a redelivery is told once
        assert svc.deliver("pull_request_review", review).status_code in (200, 202)
        assert svc.deliver("merge_group", group).status_code in (200, 202)
    svc.drain()
    texts = [c["text"] for c in standin.wait(2)]
    assert len(texts) == 2, texts
    # #6 carries the hold label: held whatever the clock says (the recomputes run at the real clock, after the
    # freeze's window, and a PR only the freeze held would be free by the time the group arrives).
    told = texts[1].splitlines()
    for line in (":eyes: held PR acme/widgets#6 was approved by maria; it stays held",
                 ":eyes: held PR acme/widgets#6 was added to the merge queue; its group stays held"):
        assert told.count(line) == 1, told


def test_hook_block_is_heard(svc: Service, standin: SlackStandIn, tmp_path: Path) -> None:
    chat(svc, "subscribe acme/widgets")
    token = create_token(tmp_path / "tokens", "laptop", "hook-events")
    records = [{"repo": REPO, "pr": 1, "decision": "deny", "code": "held", "tool_name": "Bash",
                "reason": "acme/widgets#1 is held: waiting for the release"},
               {"repo": REPO, "pr": 2, "decision": "allow", "code": "free", "tool_name": "Bash", "reason": ""}]
    response = svc.client.post("/api/v1/hook-events", json={"events": records},
                               headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 202
    drain(svc.rt)
    (call,) = standin.wait(1)
    assert call["text"] == (":robot_face: merge-hold stopped Bash merging acme/widgets#1: "
                            "acme/widgets#1 is held: waiting for the release")


def test_unsubscribe_stops_them(svc: Service, standin: SlackStandIn) -> None:
    chat(svc, "subscribe acme/widgets")
    assert "no longer hears" in chat(svc, "unsubscribe acme/widgets")
    assert "was not subscribed" in chat(svc, "unsubscribe acme/widgets")
    freeze(svc)
    drain(svc.rt)
    assert standin.calls == []
    assert svc.redis.llen(keys.notify_pending("slack:T0MERGE1:C0REL")) == 0


def test_a_burst_is_one_message_and_the_next_waits(svc: Service, standin: SlackStandIn) -> None:
    chat(svc, "subscribe acme/widgets")
    now = utc("2026-03-20T10:00:00")
    for number in (1, 2, 3, 4, 5):
        room_holds.place_hold(svc.redis, f"{REPO}#{number}", holder="dana", holder_id="slack:T0MERGE1:U0DANA",
                              reason="release train", origin="chat", now=now)
    drain(svc.rt)
    (call,) = standin.wait(1)
    assert [line for line in call["text"].splitlines() if "held acme/widgets#" in line] == [
        f":no_entry: dana held {REPO}#{n}: release train" for n in (1, 2, 3, 4, 5)]
    room_holds.lift_holds(svc.redis, f"{REPO}#1", actor="dana", origin="chat")
    drain(svc.rt)  # within the interval: the drain puts itself off instead of posting
    assert len(standin.calls) == 1
    assert svc.redis.llen(keys.notify_pending("slack:T0MERGE1:C0REL")) == 1
    assert svc.rt.queue.scheduled_job_registry.count == 1


def test_failing_slack_is_retried_and_never_delays_the_status(
        svc: Service, standin: SlackStandIn, github_emulator: GitHubEmulator) -> None:
    assert "now hears about acme" in chat(svc, "subscribe acme", user_id="UADMIN")  # the whole org
    standin.fail_next = 2
    started = time.monotonic()
    freeze(svc)
    assert time.monotonic() - started < 10
    # The statuses are out before anything talks to Slack: the verdict path only appended.
    assert (latest(github_emulator, REPO, 1) or {}).get("state") == "failure"
    assert standin.calls == []
    drain(svc.rt)
    assert [c["failed"] for c in standin.calls] == [True, True, False]
    assert "freeze sunday-freeze started" in standin.calls[-1]["text"]
    assert svc.redis.llen(keys.notify_pending("slack:T0MERGE1:C0REL")) == 0


@pytest.mark.parametrize(("text", "fields", "expected"), [
    ("subscribe acme", {}, "needs a merge-hold chat admin"),
    ("subscribe other/repo", {}, "may act only on acme"),
    ("subscribe acme/widgets#1", {}, "a repo or an org, not"),
    ("subscribe", {}, "subscribe takes a repo or an org"),
    ("unsubscribe acme/widgets extra", {}, "unsubscribe takes a repo or an org"),
    ("subscribe acme", {"user_id": "UADMIN"}, "now hears about acme"),
])
def test_who_may_subscribe(svc: Service, text: str, fields: dict[str, str], expected: str) -> None:
    assert expected in chat(svc, text, **fields)


def test_mattermost_posts_to_the_subscribed_webhook_only_under_its_server(
        redis_client: Redis, redis_url: str, tmp_path: Path, fast: None) -> None:
    from tests.test_chat_mattermost import FORM, MM_TEAM, mm_app, mm_body

    headers = {"Content-Type": FORM, "Authorization": f"Token {MATTERMOST_TOKEN}"}
    with response_catcher() as hook:
        server = hook.url.split("/hooks/", 1)[0]
        client = mm_app(redis_client, redis_url, tmp_path, mattermost_url=server).test_client()
        for text, answer in ((f"subscribe acme/widgets {server}.evil.example/hooks/x", "MATTERMOST_URL"),
                             ("subscribe acme/widgets", "MATTERMOST_URL"),
                             (f"subscribe acme/widgets {hook.url}", "now hears about acme/widgets")):
            reply = client.post("/chat/mattermost", data=mm_body(text), headers=headers)
            assert answer in reply.get_json()["text"], text
        rt = dry_runtime(redis_client, redis_url, mattermost_url=server)  # the app's queue: merge-hold-test
        room_holds.place_hold(redis_client, "acme/widgets", holder="dana", holder_id=f"mattermost:{MM_TEAM}:u",
                              reason="release", origin="chat", now=utc("2026-03-20T10:00:00"))
        drain(rt)
        assert hook.wait(1) == [{"text": ":no_entry: dana held acme/widgets: release"}]
