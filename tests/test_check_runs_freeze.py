"""The check run under a freeze: an org freeze over hundreds of PRs writes every `merge-hold` status before
any check run (runs wait on the outbox after every status, written by the same drain: counted in the
emulator's own request log, not by a clock), one run per PR, PRs held by their own holds before
freeze-only ones; and *Request exemption* reaches the freeze's chat room with the PR and the clicker."""

from __future__ import annotations

from datetime import UTC, datetime

from redis import Redis

from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, parse_binding
from core.check_run import NAME
from state import subscriptions
from tests.chat_support import response_catcher
from tests.check_run_support import HEAD, REPO, audit_events, click, comment, run_on, settle, start
from tests.emulator import GitHubEmulator
from tests.slack_standin import SlackStandIn
from workers.chat.rooms import execute
from workers.publishing.pacing import Pacer

PULLS = 240
FAST = 600_000.0


def chat(**fields: str) -> ChatRequest:
    base = {"platform": "slack", "team_id": "T1", "team_name": "acme", "channel_id": "C1", "channel_name": "ops",
            "user_id": "U1", "user_name": "dana", "command": "/hold", "text": "", "response_url": "",
            "received_at": datetime.now(UTC).isoformat(), "orgs": "acme", "admin": "1"}
    base.update(fields)
    return ChatRequest.from_dict(base)


def test_a_freeze_over_hundreds_of_prs_writes_every_status_before_any_run(
        github_emulator: GitHubEmulator, redis_url: str, redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles={"alice": "write"}, pulls=PULLS, write_rate_per_minute=FAST,
                write_hourly=10_000, slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"))
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    emu.reset_log()
    execute(svc.rt, chat(), ChatCommand("hold", "acme", reason="incident 4711"))
    settle(svc)
    log = emu.requests
    statuses = [i for i, r in enumerate(log) if r.method == "POST" and "/statuses/" in r.path
                and (r.body or {}).get("context") == "merge-hold"]
    runs = [i for i, r in enumerate(log) if r.method in ("POST", "PATCH") and "/check-runs" in r.path]
    assert len(statuses) == PULLS  # #5's description gains "(+1 more)"
    assert len(runs) == PULLS  # one write each: #5's run updated, the others created
    assert max(statuses) < min(runs)  # not one run write before a status that waited
    first = log[runs[0]]
    assert first.method == "PATCH"  # #5, held by its own hold too, before the freeze-only ones
    shown = emu.check_run_shown(REPO, f"{200:040x}", NAME) or {}
    assert (shown["conclusion"], shown["title"]) == ("action_required", "Held by @dana")
    assert shown["buttons"] == ["Lift my hold", "Request exemption", "Refresh"]
    assert "incident 4711" in shown["summary"] and "slack:acme/\\#ops" in shown["summary"]
    # Counted in GitHub's windows like every write: the pacer handed out a slot for each.
    assert Pacer.of(svc.redis, svc.settings, "inst-3").counters()["granted"] >= len(statuses) + len(runs)


def test_request_exemption_reaches_the_freeze_room(github_emulator: GitHubEmulator, redis_url: str,
                                                  redis_client: Redis, slack: SlackStandIn) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles={"erin": "write"}, slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"),
                slack_bot_token="xoxb-checks", slack_api_url=slack.api_url)
    execute(svc.rt, chat(), ChatCommand("hold", "acme/widgets", reason="release freeze"))
    settle(svc)
    assert (run_on(emu) or {})["buttons"] == ["Lift my hold", "Request exemption", "Refresh"]
    click(svc, emu, "exempt", "erin")
    [told] = slack.posted
    assert told["channel"] == "#ops"
    assert "@erin" in told["text"] and "acme/widgets#5" in told["text"] and "@dana" in told["text"]
    assert "/hold exempt acme/widgets#5" in told["text"]
    requested = [d for e, d in audit_events(svc.redis) if e == "exemption.requested"]
    assert requested and requested[-1]["actor"] == "erin" and requested[-1]["origin"] == "check_run"
    assert "@erin asked for an exemption (from the Checks tab)" in (run_on(emu) or {})["summary"]
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "failure"  # asking grants nothing


def test_request_exemption_without_a_freeze_is_answered(github_emulator: GitHubEmulator, redis_url: str,
                                                       redis_client: Redis, slack: SlackStandIn) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles={"alice": "write"}, slack_bot_token="xoxb-checks", slack_api_url=slack.api_url)
    comment(svc, "alice", "/hold mine", comment_id=51, at="2026-12-05T10:00:00Z")
    payload = emu.click(REPO, int((run_on(emu) or {})["id"]), "lift", "alice")
    payload["requested_action"]["identifier"] = "exempt"  # a stale button: the run showed it before a thaw
    svc.deliver("check_run", payload)
    settle(svc)
    assert slack.posted == []
    assert "@alice: nothing to ask for, no freeze or room hold covers this PR" in (run_on(emu) or {})["summary"]


def test_request_exemption_reaches_a_mattermost_freeze_room(github_emulator: GitHubEmulator, redis_url: str,
                                                            redis_client: Redis) -> None:
    """A freeze placed from a Mattermost channel: the request goes to that channel's incoming webhook (the
    one its subscription to the repo or org recorded; Mattermost has no bot post by channel name)."""
    emu = github_emulator
    with response_catcher() as hook:
        server = hook.url.split("/hooks/", 1)[0]
        svc = start(emu, redis_url, roles={"erin": "write"}, mattermost_url=server,
                    mattermost_teams=parse_binding("MERGE_HOLD_MATTERMOST_TEAMS", "TMM=acme"))
        room = chat(platform="mattermost", team_id="TMM", team_name="acme-mm", channel_id="CH9",
                    channel_name="release")
        subscriptions.subscribe(svc.redis, "acme", subscriptions.Subscription(
            platform="mattermost", team_id="TMM", channel_id="CH9", channel_name="release", webhook=hook.url,
            queue=svc.settings.queue_name, by="dana"))
        execute(svc.rt, room, ChatCommand("hold", "acme/widgets", reason="release freeze"))
        settle(svc)
        hook.bodies.clear()  # the subscription also hears the freeze start
        click(svc, emu, "exempt", "erin")
        told = [body["text"] for body in hook.wait(1) if "asks, from the PR's Checks tab" in body["text"]]
    assert len(told) == 1, told
    # Names reach Mattermost with a zero-width space after the @ (mentioned, not paged: core.escaping).
    assert "@\u200berin" in told[0] and "@\u200bdana" in told[0]
    assert "acme/widgets#5" in told[0] and "release freeze" in told[0]
    assert "/hold exempt acme/widgets#5" in told[0]
