"""A freeze through merge-hold's own ruleset (``freeze_mode: ruleset``) at the GitHub emulator: an org
freeze blocks every PR at once by the emulator's own reading of rulesets, with one write per repo each
way; exemptions and new heads; a lost permission falls back to statuses; a freeze window's edge flips
the ruleset; a ruleset changed behind our back, or a crash between the write and the record, converges.
The pacer keeps GitHub's hourly window under a fan-out of over a thousand PRs (0 refusals)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from redis import Redis

from core import keys
from core.chat_grammar import ChatCommand
from core.chat_request import ChatRequest, parse_binding
from core.freeze_gate import FREEZE_CONTEXT, RULESET_NAME
from core.holds import to_iso
from core.outbox import mark_member, parse_member
from state import store
from state.decoding import as_text
from state.room_holds import lift_holds, place_hold
from tests.chat_support import emulated_service, head_sha, seed_repo
from tests.e2e_support import Service, fixture
from tests.emulator import APP_ID, GitHubEmulator
from workers import runtime
from workers.chat.rooms import execute
from workers.ops.reconcile import reconcile_repo
from workers.publishing import freeze_marks
from workers.publishing.drain import drain
from workers.publishing.fanout import request_fanout
from workers.publishing.freeze_rulesets import recorded, sync
from workers.publishing.pacing import GATE_HOURLY_RESERVE
from workers.publishing.recompute import record

ORG = "acme"
REPOS = ("acme/widgets", "acme/gadgets")
PRS = 12
FAST = 600_000.0
ADMIN = {"metadata": "read", "contents": "read", "pull_requests": "read", "issues": "write",
         "statuses": "write", "administration": "write"}


def request(**fields: str) -> ChatRequest:
    base = {"platform": "slack", "team_id": "T1", "team_name": "acme", "channel_id": "C1", "channel_name": "ops",
            "user_id": "U1", "user_name": "dana", "command": "/hold", "text": "", "response_url": "",
            "received_at": datetime.now(UTC).isoformat(), "orgs": "acme", "admin": "1"}  # a chat admin's, as judged
    base.update(fields)
    return ChatRequest.from_dict(base)


def unmergeable(emu: GitHubEmulator) -> list[str]:
    return [f"{r}#{n}" for r in REPOS for n in range(1, PRS + 1) if not emu.mergeable(r, n)]


def ruleset_writes(emu: GitHubEmulator) -> int:
    """Writes of repositories' rulesets (without Organization administration, an org freeze's one try
    of the org ruleset is refused: tests/test_freeze_org_ruleset.py)."""
    return emu.count("POST", r"^/repos/.*/rulesets$") + emu.count("PUT", r"^/repos/.*/rulesets/\d+$")


@pytest.fixture()
def org(github_emulator: GitHubEmulator, redis_client: Redis, redis_url: str) -> Service:
    """Two repos of PRs into a protected main that requires `merge-hold` from this App, every PR
    showing "No holds" (mergeable), the service in ruleset mode."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST, freeze_mode="ruleset",
                           slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"))
    for repo in REPOS:
        seed_repo(github_emulator, redis_client, repo, PRS)
        github_emulator.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
    github_emulator.set_installation_permissions(1, ADMIN)
    request_fanout(svc.rt, ORG)
    svc.drain()
    assert unmergeable(github_emulator) == []
    github_emulator.reset_log()
    return svc


def pull_event(repo: str, number: int, sha: str) -> dict[str, Any]:
    payload = fixture("pull_request", "opened.payload.json")
    pull = payload["pull_request"]
    pull.update(number=number, updated_at="2026-12-03T10:00:00Z", state="open", draft=False, labels=[])
    pull["head"].update(sha=sha, ref=f"topic-{number}")
    pull["head"]["repo"]["full_name"] = pull["base"]["repo"]["full_name"] = repo
    pull["base"]["ref"] = "main"
    payload["repository"].update(full_name=repo, default_branch="main")
    payload.update(action="synchronize", number=number, installation={"id": 1}, before=head_sha(repo, number),
                   after=sha)
    return payload


def test_an_org_freeze_blocks_every_pr_at_once_and_the_thaw_frees_them(org: Service,
                                                                         github_emulator: GitHubEmulator) -> None:
    before = len(github_emulator.status_posts())
    reply = execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    # Before any per-PR work runs (nothing drained yet): every PR is blocked by GitHub's own rules.
    assert len(unmergeable(github_emulator)) == len(REPOS) * PRS
    assert ruleset_writes(github_emulator) == len(REPOS)
    assert "rulesets active in 2 of 2 repos" in reply.text
    assert "per-repo rulesets: org rulesets unavailable (GitHub answered 403" in reply.text
    assert len(github_emulator.status_posts()) == before  # not one `merge-hold` write
    org.drain()
    record = org.verdict(REPOS[0], 3) or {}
    assert record["held"] and record["state"] == "success"  # the hook and the API say held; the status per PR
    assert {s["state"] for s in github_emulator.status_posts(FREEZE_CONTEXT)} == {"failure"}
    assert len(github_emulator.status_posts(FREEZE_CONTEXT)) == len(REPOS) * PRS  # descriptions, for people
    assert len(github_emulator.status_posts()) == before
    assert github_emulator.merge_blockers(REPOS[0], 3) == [f"{FREEZE_CONTEXT}: failure"]
    listing = execute(org.rt, request(), ChatCommand("list", ORG)).text
    assert "• acme: @dana in slack:acme/#ops: incident 4711 — per-repo rulesets: org rulesets unavailable" in listing
    assert "organisation rulesets); rulesets active 2 of 2; descriptions written " \
           f"{len(REPOS) * PRS} of {len(REPOS) * PRS}" in listing

    github_emulator.reset_log()
    reply = execute(org.rt, request(), ChatCommand("unhold", ORG))
    assert unmergeable(github_emulator) == []  # at once, before any PR is republished
    assert ruleset_writes(github_emulator) == len(REPOS)
    assert "rulesets disabled in 2 of 2 repos" in reply.text
    org.drain()
    assert not (org.verdict(REPOS[0], 3) or {})["held"]
    assert unmergeable(github_emulator) == []


THAW_REPOS = tuple(f"acme/thaw-{index}" for index in range(10))


def test_a_thaw_does_not_wait_behind_the_descriptions(github_emulator: GitHubEmulator, redis_client: Redis,
                                                    redis_url: str) -> None:
    """At a binding pace the descriptions of the freeze (low priority) are still being written when the
    thaw comes; its ruleset writes take every slot meanwhile, instead of every other one. Over ten repos
    at one slot per 10 ms, a writer that did not give way posts descriptions during the thaw (with
    `Pacer.yield_low_priority` made a no-op, one lands every run); one already on its way when the
    thaw began may land by the second ruleset write, never later."""
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=6000.0, write_burst=1,
                           freeze_mode="ruleset", slack_teams=parse_binding("MERGE_HOLD_SLACK_TEAMS", "T1=acme"))
    prs = 3
    for repo in THAW_REPOS:
        seed_repo(github_emulator, redis_client, repo, prs)
        github_emulator.protect_branch(repo, "main", checks=[("merge-hold", APP_ID)])
    github_emulator.set_installation_permissions(1, ADMIN)
    request_fanout(svc.rt, ORG)
    svc.drain()
    execute(svc.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    svc.drain()
    # The descriptions to write again, by a writer of their own (another worker), as the thaw begins.
    for repo in THAW_REPOS:
        for number in range(1, prs + 1):
            redis_client.delete(keys.posted_mark(repo, number))
            freeze_marks.note(svc.rt, "inst-1", repo, number, svc.verdict(repo, number))
    writer = runtime.build(svc.settings)
    svc.rt.bulk("inst-1").empty()  # type: ignore[no-untyped-call]  # the drain the marks asked for: this writer
    redis_client.delete(keys.outbox_drain_queued("inst-1"))
    marks = threading.Thread(target=drain, args=(writer, "inst-1"), kwargs={"writes_for_people": True}, daemon=True)
    marks.start()
    while len(github_emulator.status_posts(FREEZE_CONTEXT)) < len(THAW_REPOS) * prs + 2:
        time.sleep(0.002)
    github_emulator.reset_log()
    thaw_began = github_emulator.clock()
    reply = execute(svc.rt, request(), ChatCommand("unhold", ORG))
    between = github_emulator.statuses_between_ruleset_writes(FREEZE_CONTEXT, thaw_began, after=1)
    marks.join(10)
    assert f"rulesets disabled in {len(THAW_REPOS)} of {len(THAW_REPOS)} repos" in reply.text
    assert ruleset_writes(github_emulator) == len(THAW_REPOS)
    assert between == 0  # not one description during the thaw's ruleset writes (the writer waits for them)
    svc.drain()
    assert all(github_emulator.mergeable(r, n) for r in THAW_REPOS for n in range(1, prs + 1))


def test_a_pr_recorded_while_the_thaw_is_written_waits_for_its_ruleset(org: Service, redis_client: Redis,
                                                                       github_emulator: GitHubEmulator) -> None:
    """A fan-out still running when the thaw comes records PRs whose ruleset is not yet disabled: no
    "Exempt from the freeze" success for each (an urgent write per PR racing the one per repo)."""
    repo = REPOS[0]
    execute(org.rt, request(), ChatCommand("hold", ORG, reason="incident 4711"))
    org.drain()
    marks = len(github_emulator.status_posts(FREEZE_CONTEXT))
    lift_holds(redis_client, ORG, actor="dana", origin="slack:acme/#ops")  # the thaw, its rulesets not yet
    record(org.rt, repo, 3, datetime.now(UTC))
    assert not (org.verdict(repo, 3) or {}).get("held")
    assert (org.verdict(repo, 3) or {}).get("freeze_mark") is None
    assert redis_client.zscore(keys.outbox("inst-1"), mark_member(repo, 3)) is None
    assert redis_client.exists(keys.freeze_sync_queued(repo))  # its sync is on the way instead
    org.drain()
    assert (recorded(redis_client, repo) or {}).get("enforcement") == "disabled"
    assert unmergeable(github_emulator) == [f"{r}#{n}" for r in REPOS[1:] for n in range(1, PRS + 1)]
    assert len(github_emulator.status_posts(FREEZE_CONTEXT)) == marks  # not one mark on the way


def test_two_syncs_of_one_repo_at_once_write_its_ruleset_once(org: Service, redis_client: Redis,
                                                               github_emulator: GitHubEmulator,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The thaw's own sync and a worker's (asked for by a recompute that saw the ruleset out of step)
    reach the same repo together: the second finds it in step."""
    from workers.publishing import freeze_rulesets

    repo = REPOS[0]
    place_hold(redis_client, repo, holder="dana", holder_id="slack:T1:U1", reason="incident 4711",
               origin="slack:acme/#ops", now=datetime.now(UTC))
    slow = freeze_rulesets._write

    def slow_write(*args: Any) -> tuple[int, Any]:
        time.sleep(0.3)  # a pacer slot waited for, GitHub slow to answer
        return slow(*args)

    monkeypatch.setattr(freeze_rulesets, "_write", slow_write)
    outcomes: list[str] = []
    racers = [threading.Thread(target=lambda: outcomes.append(sync(org.rt, repo, datetime.now(UTC))))
              for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(10)
    assert sorted(outcomes) == ["active", "unchanged"]
    assert ruleset_writes(github_emulator) == 1
    assert not github_emulator.mergeable(repo, 1)


def test_an_exempt_pr_merges_and_a_push_ends_its_exemption(org: Service, redis_client: Redis,
                                                            github_emulator: GitHubEmulator) -> None:
    repo = REPOS[0]
    execute(org.rt, request(), ChatCommand("hold", repo, reason="incident 4711"))
    execute(org.rt, request(), ChatCommand("exempt", f"{repo}#2", reason="the fix"))
    org.drain()
    assert github_emulator.mergeable(repo, 2)
    assert not github_emulator.mergeable(repo, 1)
    mark = github_emulator.latest_status(repo, head_sha(repo, 2), FREEZE_CONTEXT) or {}
    assert (mark.get("state"), mark.get("description")) == ("success", "Exempt from the freeze: the fix (@dana)")

    new_head = "f" * 40
    github_emulator.update_pull(repo, 2, head_sha=new_head)
    assert org.deliver("pull_request", pull_event(repo, 2, new_head)).status_code == 202
    org.drain()
    assert not github_emulator.mergeable(repo, 2)  # the exemption covered the reviewed head only
    assert (github_emulator.latest_status(repo, new_head, FREEZE_CONTEXT) or {}).get("state") == "failure"
    assert store.exemption(redis_client, repo, 2) is None


def test_a_sticky_exempt_pr_keeps_its_exemption_on_a_new_head(org: Service, redis_client: Redis,
                                                              github_emulator: GitHubEmulator) -> None:
    repo = REPOS[0]
    execute(org.rt, request(), ChatCommand("hold", repo, reason="incident 4711"))
    execute(org.rt, request(), ChatCommand("exempt", f"{repo}#2", reason="the fix", sticky=True))
    org.drain()
    assert github_emulator.mergeable(repo, 2)

    new_head = "f" * 40
    github_emulator.update_pull(repo, 2, head_sha=new_head)
    assert org.deliver("pull_request", pull_event(repo, 2, new_head)).status_code == 202
    assert not github_emulator.mergeable(repo, 2)  # a new head carries no mark yet
    org.drain()
    assert github_emulator.mergeable(repo, 2)
    assert (github_emulator.latest_status(repo, new_head, FREEZE_CONTEXT) or {}).get("state") == "success"

    # The exemption ends: the success left on the head is replaced first (urgent), the PR blocked again.
    execute(org.rt, request(), ChatCommand("unexempt", f"{repo}#2"))
    org.drain()
    assert not github_emulator.mergeable(repo, 2)


def test_without_the_permission_the_freeze_falls_back_to_statuses(org: Service, redis_client: Redis,
                                                                   github_emulator: GitHubEmulator) -> None:
    github_emulator.set_installation_permissions(1, {**ADMIN, "administration": "read"})
    reply = execute(org.rt, request(), ChatCommand("hold", REPOS[0], reason="incident 4711"))
    assert "freeze through statuses: the App lacks Administration: write" in reply.text
    assert redis_client.get(keys.freeze_fallback(REPOS[0])) is not None
    org.drain()
    assert {s["description"] for s in github_emulator.status_posts() if s["repo"] == REPOS[0]} == {
        "No holds", "Held by @dana in slack:acme/#ops: incident 4711"}
    assert all(not github_emulator.mergeable(REPOS[0], n) for n in range(1, PRS + 1))
    assert github_emulator.status_posts(FREEZE_CONTEXT) == []


def test_a_freeze_window_edge_activates_the_ruleset(org: Service, redis_client: Redis,
                                                    github_emulator: GitHubEmulator) -> None:
    repo = REPOS[0]
    window = 'freeze_windows: [{name: all-day, days: daily, from: "00:00", to: "24:00", branches: [main]}]\n'
    store.save_repo(redis_client, repo, store.RepoMeta(installation_id=1, config_loaded=True, config_text=window))
    request_fanout(org.rt, repo)  # what a config push does; each recompute sees the ruleset out of step
    org.drain()
    record = recorded(redis_client, repo) or {}
    assert (record.get("enforcement"), record.get("include")) == ("active", ["refs/heads/main"])
    assert all(not github_emulator.mergeable(repo, n) for n in range(1, PRS + 1))
    assert all(github_emulator.mergeable(REPOS[1], n) for n in range(1, PRS + 1))
    assert ruleset_writes(github_emulator) == 1  # the window reached GitHub as one write
    # Recomputes that ran before the ruleset was written carried the freeze on their status (never
    # nothing); once it binds, every PR's `merge-hold` is back to what is per PR.
    assert {(github_emulator.latest_status(repo, head_sha(repo, n)) or {}).get("state")
            for n in range(1, PRS + 1)} == {"success"}

    store.save_repo(redis_client, repo, store.RepoMeta(installation_id=1, config_loaded=True, config_text=""))
    request_fanout(org.rt, repo)  # the window gone (its end works the same way: a recompute at the edge)
    org.drain()
    assert (recorded(redis_client, repo) or {}).get("enforcement") == "disabled"
    assert unmergeable(github_emulator) == []


def test_a_ruleset_out_of_step_converges(org: Service, redis_client: Redis, github_emulator: GitHubEmulator) -> None:
    repo = REPOS[0]
    execute(org.rt, request(), ChatCommand("hold", repo, reason="incident 4711"))
    org.drain()
    ruleset_id = (recorded(redis_client, repo) or {})["id"]
    # Someone disables it on GitHub during the incident: the reconcile's verifying sync repairs it.
    github_emulator.rulesets[ruleset_id]["enforcement"] = "disabled"
    assert github_emulator.mergeable(repo, 1)
    assert reconcile_repo(org.rt, repo, rebuild=False)["ruleset"] == 1
    assert not github_emulator.mergeable(repo, 1)
    # Again, and GitHub tells us (`repository_ruleset` edited, on ours): repaired at once, no reconcile.
    github_emulator.rulesets[ruleset_id]["enforcement"] = "disabled"
    event = fixture("repository_ruleset", "edited.payload.json")
    event["repository_ruleset"].update(id=ruleset_id, name=RULESET_NAME, enforcement="disabled")
    event["repository"].update(full_name=repo, name=repo.split("/", 1)[1])
    event.update(installation={"id": 1})
    assert org.deliver("repository_ruleset", event).status_code == 202
    org.drain()
    assert not github_emulator.mergeable(repo, 1)
    assert sync(org.rt, repo, datetime.now(UTC), verify=True) == "unchanged"  # in step now: a read, no write

    # A crash between the ruleset write and its record: the PRs' statuses carry the freeze meanwhile
    # (never nothing), and the next recompute's sync finds our ruleset by name instead of a second one.
    redis_client.delete(keys.freeze_ruleset(repo))
    github_emulator.reset_log()
    request_fanout(org.rt, repo)
    org.drain()
    assert (recorded(redis_client, repo) or {}).get("id") == ruleset_id
    assert [r["name"] for r in github_emulator.rulesets.values()] == [RULESET_NAME]  # still one
    assert github_emulator.count("POST", r"/rulesets$") == 0


def test_the_pacer_keeps_githubs_hourly_window_over_a_big_fan_out(github_emulator: GitHubEmulator,
                                                                  redis_client: Redis, redis_url: str) -> None:
    github_emulator.secondary_limit(None, 120)  # GitHub's hour, scaled down so that the test binds it
    svc = emulated_service(github_emulator, redis_url, write_rate_per_minute=FAST, write_hourly=100)
    seed_repo(github_emulator, redis_client, REPOS[0], 1200)
    execute(svc.rt, request(), ChatCommand("hold", REPOS[0], reason="incident 4711"))
    svc.drain()
    kept = min(GATE_HOURLY_RESERVE, 100 // 10)  # the hour's share that only ruleset writes take
    assert len(github_emulator.status_posts()) == 100 - kept
    assert github_emulator.refused_writes == 0  # never a write GitHub would refuse
    waiting = [parse_member(as_text(m)) for m in redis_client.zrange(keys.outbox("inst-1"), 0, -1)]
    assert sum(m.status for m in waiting) == 1100 + kept  # the rest wait for the hour to turn (their runs after them)
    assert all((svc.verdict(REPOS[0], n) or {}).get("held") for n in (1, 600, 1200))  # held at once anyway


# --- the merge queue: queue_on_freeze ----------------------------------------------------------------


def group_event(repo: str, number: int, sha: str) -> dict[str, Any]:
    payload = fixture("merge_group", "checks_requested.payload.json")
    payload["repository"].update(full_name=repo, name=repo.split("/", 1)[1], default_branch="main")
    payload["repository"]["owner"]["login"] = ORG
    payload["merge_group"].update(head_sha=sha, head_ref=f"refs/heads/gh-readonly-queue/main/pr-{number}-{'0' * 40}",
                                  base_ref="refs/heads/main")
    payload["installation"] = {"id": 1}
    return payload


@pytest.mark.parametrize(("mode", "queue_on_freeze"), [
    ("ruleset", "stop"), ("ruleset", "drain"), ("statuses", "stop"), ("statuses", "drain")])
def test_queue_on_freeze_stops_or_drains_the_groups_being_checked(
        org: Service, redis_client: Redis, github_emulator: GitHubEmulator, mode: str, queue_on_freeze: str) -> None:
    repo = REPOS[0]
    config = f"freeze_mode: {mode}\nqueue_on_freeze: {queue_on_freeze}\n"
    store.save_repo(redis_client, repo, store.RepoMeta(installation_id=1, config_loaded=True, config_text=config))
    early, late = "a" * 40, "b" * 40
    for sha in (early, late):
        github_emulator.add_commit(repo, sha)
    assert org.deliver("merge_group", group_event(repo, 1, early)).status_code == 202
    org.drain()
    assert (github_emulator.latest_status(repo, early) or {}).get("state") == "success"

    # The first group's checks were requested a while before the freeze begins (times are kept to the
    # second; a group requested in the freeze's own second counts as after it: held, failing closed).
    redis_client.set(keys.group_since(repo, early), to_iso(datetime.now(UTC) - timedelta(seconds=5)) or "")
    execute(org.rt, request(), ChatCommand("hold", repo, reason="incident 4711"))
    assert org.deliver("merge_group", group_event(repo, 2, late)).status_code == 202  # entered after the freeze
    org.drain()

    def passes(sha: str) -> bool:
        """The group's commit would pass: `merge-hold` success, and under the ruleset its context too."""
        ok = (github_emulator.latest_status(repo, sha) or {}).get("state") == "success"
        if mode == "ruleset":
            ok = ok and (github_emulator.latest_status(repo, sha, FREEZE_CONTEXT) or {}).get("state") == "success"
        return ok

    assert passes(early) is (queue_on_freeze == "drain")  # checks requested before the freeze began
    assert not passes(late)  # nothing new enters
    assert (github_emulator.latest_status(repo, late) or {}).get("description", "").startswith("PR #2: Held by @dana")


def test_a_thaw_without_the_permission_frees_the_prs_through_their_marks(
        org: Service, redis_client: Redis, github_emulator: GitHubEmulator) -> None:
    """Administration: write was taken away during the freeze: the ruleset cannot be disabled, so the
    thaw falls back to what statuses can do — a `merge-hold/freeze` success on every PR it still binds."""
    repo = REPOS[0]
    execute(org.rt, request(), ChatCommand("hold", repo, reason="incident 4711"))
    org.drain()
    github_emulator.set_installation_permissions(1, {**ADMIN, "administration": "read"})
    reply = execute(org.rt, request(), ChatCommand("unhold", repo))
    assert "freeze through statuses: the App lacks Administration: write" in reply.text
    assert all(not github_emulator.mergeable(repo, n) for n in range(1, PRS + 1))  # the ruleset still binds
    org.drain()
    assert all(github_emulator.mergeable(repo, n) for n in range(1, PRS + 1))
    mark = github_emulator.latest_status(repo, head_sha(repo, 1), FREEZE_CONTEXT) or {}
    assert (mark.get("state"), mark.get("description")) == ("success", "No freeze holds this PR")
