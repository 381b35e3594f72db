"""The check run `merge-hold / holds` at the GitHub emulator: one run per head, written only on change, its
buttons clicked as different users through GitHub's own `requested_action` deliveries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from redis import Redis

from core import keys
from core.check_run import NAME, NOT_CODE
from core.holds import to_iso
from tests.check_run_support import (
    HEAD,
    INSTALLATION,
    REPO,
    audit_events,
    click,
    comment,
    run_on,
    run_writes,
    settle,
    start,
)
from tests.e2e_support import fixture
from tests.emulator import GitHubEmulator
from workers.publishing.recompute import recompute

ROLES = {"alice": "write", "bob": "write", "carol": "write", "dave": "write", "mallory": "read"}


def test_a_held_pr_gets_one_run_and_one_update_per_change(github_emulator: GitHubEmulator, redis_url: str,
        redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    assert run_on(emu) is None and run_writes(emu) == (0, 0)  # a free PR never held: no run at all
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    shown = run_on(emu) or {}
    assert (shown["conclusion"], shown["title"]) == ("action_required", "Held by @alice")
    assert "waiting for DB migration" in shown["summary"] and NOT_CODE in shown["summary"]
    assert "2026-12-05 10:00 UTC" in shown["summary"]  # since, exact
    assert shown["buttons"] == ["Lift my hold", "Refresh"]  # no freeze: nothing to ask an exemption from
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "failure"  # the gate, unchanged
    assert run_writes(emu) == (1, 0)

    recompute(svc.rt, REPO, 5)  # nothing changed: nothing written
    settle(svc)
    assert run_writes(emu) == (1, 0)

    placed = datetime.now(UTC).replace(microsecond=0)
    comment(svc, "bob", "/hold for 2h release notes", comment_id=52, at=to_iso(placed) or "")
    shown = run_on(emu) or {}
    assert shown["title"] == "Held by @alice (+1 more)" and "release notes" in shown["summary"]
    ends = placed + timedelta(hours=2)
    assert f"ends {ends.strftime('%Y-%m-%d %H:%M')} UTC (in 1 h 59 min)" in shown["summary"]  # exact and relative
    assert run_writes(emu) == (1, 1)  # the same run, updated in place
    assert len(emu.check_runs(REPO, HEAD, NAME)) == 1


def test_lift_by_the_holder_frees_the_pr_and_the_run_says_success_once(github_emulator: GitHubEmulator,
                                                                       redis_url: str, redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    click(svc, emu, "lift", "alice")
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "success"
    shown = run_on(emu) or {}
    assert (shown["conclusion"], shown["title"], shown["buttons"]) == ("success", "No holds", ["Refresh"])
    assert "@alice lifted the hold (from the Checks tab)" in shown["summary"]
    lifted = [data for event, data in audit_events(svc.redis) if event == "hold.lifted"]
    assert lifted and lifted[-1]["origin"] == "check_run" and lifted[-1]["actor"] == "alice"
    from app.history import page

    acts, _ = page(svc.redis, REPO, 5, "main")
    assert any(a.raw.event == "hold.lifted" and a.raw.data.get("origin") == "check_run" for a in acts)
    writes = run_writes(emu)
    recompute(svc.rt, REPO, 5)
    settle(svc)
    assert run_writes(emu) == writes  # free: left alone until the next hold


def test_lift_comes_after_the_hold_the_run_showed_even_in_its_second(github_emulator: GitHubEmulator,
                                                                    redis_url: str, redis_client: Redis) -> None:
    """GitHub dates the comment a second or two ahead of our clock; the click follows at once. Ties (and an
    earlier lift) fail closed, yet the clicker saw the hold in the run: the lift is dated after it."""
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    ahead = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=20)
    comment(svc, "alice", "/hold until QA signs off", comment_id=51, at=to_iso(ahead) or "")
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "failure"
    click(svc, emu, "lift", "alice")
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "success"
    assert (run_on(emu) or {}).get("title") == "No holds"


def test_a_click_by_someone_with_no_hold_is_answered_in_the_run(github_emulator: GitHubEmulator,
                                                                redis_url: str, redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    click(svc, emu, "lift", "carol")
    shown = run_on(emu) or {}
    assert shown["conclusion"] == "action_required"  # alice's hold stands
    assert "@carol: nothing lifted, you hold nothing on this PR" in shown["summary"]
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "failure"
    refused = [data for event, data in audit_events(svc.redis) if event == "hold.refused"]
    assert refused and refused[-1]["origin"] == "check_run"


def test_a_click_is_authorised_as_the_same_comment_would_be(github_emulator: GitHubEmulator,
                                                            redis_url: str, redis_client: Redis) -> None:
    """dave held the PR while he had write access; he has read now: his /unhold would be refused, so is his
    click. Someone with no access to the private repo may not even refresh it."""
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "dave", "/hold audit", comment_id=51, at="2026-12-05T10:00:00Z")
    emu.set_permission(REPO, "dave", "read")
    svc.redis.delete(keys.permission_cache(REPO, "dave"))  # the cached permission: GitHub says read now
    click(svc, emu, "lift", "dave")
    shown = run_on(emu) or {}
    assert shown["conclusion"] == "action_required"
    assert "@dave: not done, lifting your hold needs write access" in shown["summary"]
    click(svc, emu, "refresh", "stranger")  # no access to the private repo
    assert "@stranger: not done, a refresh needs read access" in (run_on(emu) or {})["summary"]


def test_refresh_recomputes_and_answers_in_the_run(github_emulator: GitHubEmulator, redis_url: str,
        redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    before = run_writes(emu)
    click(svc, emu, "refresh", "mallory")
    assert "@mallory asked for a refresh (from the Checks tab)" in (run_on(emu) or {})["summary"]
    assert run_writes(emu) == (before[0], before[1] + 1)
    assert ("check_run.refreshed", "mallory") in [(e, d.get("actor")) for e, d in audit_events(svc.redis)]


def test_a_button_the_run_does_not_show_cannot_be_clicked(github_emulator: GitHubEmulator, redis_url: str,
        redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold x", comment_id=51, at="2026-12-05T10:00:00Z")
    shown = run_on(emu) or {}
    try:
        emu.click(REPO, int(shown["id"]), "exempt", "alice")
    except ValueError:
        pass
    else:
        raise AssertionError("the emulator let a missing button be clicked")


def test_check_run_false_in_the_repo_config_leaves_the_status_alone(github_emulator: GitHubEmulator,
                                                                    redis_url: str, redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES, config="check_run: false\n")
    comment(svc, "alice", "/hold waiting", comment_id=51, at="2026-12-05T10:00:00Z")
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "failure"
    assert run_on(emu) is None and emu.count(None, r"/check-runs") == 0


def test_runs_turned_off_later_leave_no_run_saying_held(github_emulator: GitHubEmulator, redis_url: str,
                                                         redis_client: Redis) -> None:
    """A run written as held, then `check_run: false` pushed: the run is written once more, neutral and
    without buttons, saying the status is the gate; the lift that follows writes no run."""
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold waiting for DB migration", comment_id=51, at="2026-12-05T10:00:00Z")
    assert (run_on(emu) or {}).get("conclusion") == "action_required"
    emu.set_file(REPO, ".github/merge-hold.yml", "check_run: false\n", ref="main")
    push = fixture("push", "payload.json")
    push.update(ref="refs/heads/main", after="c" * 40)
    push["repository"] = {**push["repository"], "full_name": REPO, "private": True}
    push["installation"] = {"id": INSTALLATION}
    push["commits"] = [{"added": [], "removed": [], "modified": [".github/merge-hold.yml"]}]
    emu.add_commit(REPO, "c" * 40)
    assert svc.deliver("push", push).status_code == 202
    settle(svc)
    shown = run_on(emu) or {}
    assert (shown["conclusion"], shown["title"], shown["buttons"]) == (
        "neutral", "Turned off for this repository", [])
    assert "`merge-hold` status stays the gate" in shown["summary"]
    writes = run_writes(emu)
    comment(svc, "alice", "/unhold", comment_id=52, at="2026-12-05T10:05:00Z")
    assert (emu.latest_status(REPO, HEAD) or {}).get("state") == "success"
    assert run_writes(emu) == writes


def test_without_checks_write_the_status_alone_and_no_write_is_tried(github_emulator: GitHubEmulator,
                                                                     redis_url: str, redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES, checks=False)
    comment(svc, "alice", "/hold waiting", comment_id=51, at="2026-12-05T10:00:00Z")
    comment(svc, "bob", "/hold more", comment_id=52, at="2026-12-05T10:01:00Z")
    assert (emu.latest_status(REPO, HEAD) or {}).get("description") == "Held by @alice: waiting (+1 more)"
    assert emu.count(None, r"/check-runs") == 0  # the token said Checks: none; GitHub was not asked


def test_checks_write_accepted_later_starts_the_run(github_emulator: GitHubEmulator, redis_url: str,
                                                     redis_client: Redis) -> None:
    """Without the permission the status alone; once the installation accepts Checks: write (its
    ``new_permissions_accepted`` event), the held PR gets its run."""
    from tests.check_run_support import CHECKS, INSTALLATION
    from tests.e2e_support import fixture

    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES, checks=False)
    comment(svc, "alice", "/hold waiting", comment_id=51, at="2026-12-05T10:00:00Z")
    assert run_on(emu) is None
    emu.set_installation_permissions(INSTALLATION, CHECKS)
    accepted = fixture("installation", "new_permissions_accepted.payload.json")
    accepted["installation"]["id"] = INSTALLATION
    accepted["repositories"] = [{"full_name": REPO, "private": True}]
    assert svc.deliver("installation", accepted).status_code == 202
    settle(svc)
    assert (run_on(emu) or {}).get("title") == "Held by @alice"


def test_githubs_own_rerun_of_the_run_is_a_refresh(github_emulator: GitHubEmulator, redis_url: str,
                                                   redis_client: Redis) -> None:
    emu = github_emulator
    svc = start(emu, redis_url, roles=ROLES)
    comment(svc, "alice", "/hold waiting", comment_id=51, at="2026-12-05T10:00:00Z")
    payload = emu.click(REPO, int((run_on(emu) or {})["id"]), "refresh", "mallory")
    payload["action"] = "rerequested"
    del payload["requested_action"]
    assert svc.deliver("check_run", payload).status_code == 202
    settle(svc)
    assert "@mallory asked for a refresh (from the Checks tab)" in (run_on(emu) or {})["summary"]
