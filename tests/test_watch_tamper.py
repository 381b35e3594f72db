"""The tamper watch end to end (issue 15 item 5): a branch that stops requiring `merge-hold` from this App
is recorded, told to the subscribed channel, answered once on each held PR, and shown — as a red banner
on the repo's dashboard pages, in `/api/v1/incidents` and in `merge-hold doctor` — and the requirement
coming back clears it. Signed webhooks in (GitHub's payloads), a real rq worker, real Redis, the GitHub
emulator changed the way people change protection and rulesets; the watch re-reads GitHub, so a payload
that says more (or less) than GitHub does changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from core import keys
from merge_hold import doctor
from tests.e2e_support import fixture
from tests.emulator import APP_ID, GitHubEmulator
from tests.watch_support import (  # fast_chat: a fixture
    FULL,
    HEAD5,
    INSTALLATION,
    METRICS_TOKEN,
    REPO,
    Watched,
    closed,
    comment,
    fast_chat,  # noqa: F401
    gate_event,
    installation_event,
    watched,
)

pytestmark = pytest.mark.usefixtures("fast_chat")

ANSWER = "main no longer requires merge-hold (changed by @mallory): this hold is not enforced"
BANNER = f"{REPO}@main no longer requires merge-hold (changed by @mallory): holds there are not enforced"


@dataclass
class Gate:
    """How ``main`` requires merge-hold before, how it is weakened, and the event GitHub then sends."""

    name: str
    weaken: Callable[[GitHubEmulator, dict[str, int]], object]
    event: tuple[str, str]
    restore: Callable[[GitHubEmulator, dict[str, int]], None] | None = None
    protect: bool = True
    rules: bool = False
    """main's requirement lives in a ruleset (not branch protection)."""
    org_wide: bool = False
    detail: str = ""
    ids: dict[str, int] = field(default_factory=dict)


def _reprotect(emu: GitHubEmulator, _ids: dict[str, int]) -> None:
    emu.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID), ("ci/build", None)])


def _enable(emu: GitHubEmulator, ids: dict[str, int]) -> None:
    emu.enable_ruleset(ids["ruleset"])


def _rerule(emu: GitHubEmulator, ids: dict[str, int]) -> None:
    ids["ruleset"] = emu.require_check_in_ruleset(REPO, "main", integration_id=APP_ID)


LOST: list[Gate] = [
    Gate("protection removed", lambda emu, _: emu.unprotect_branch(REPO, "main"),
         ("branch_protection_rule", "deleted"), _reprotect, detail="nothing on main requires merge-hold"),
    Gate("required check removed", lambda emu, _: emu.drop_required_check(REPO, "main"),
         ("branch_protection_rule", "edited"), _reprotect, detail="nothing on main requires merge-hold"),
    Gate("App pin dropped", lambda emu, _: emu.unpin_required_check(REPO, "main"),
         ("branch_protection_rule", "edited"), _reprotect, detail="branch protection: any source"),
    Gate("pinned to another App instead",
         lambda emu, _: emu.protect_branch(REPO, "main", checks=[("merge-hold", 15368)]),
         ("branch_protection_rule", "edited"), _reprotect, detail="branch protection: App 15368"),
    Gate("every protection switched off", lambda emu, _: emu.unprotect_branch(REPO, "main"),
         ("branch_protection_configuration", "disabled"), _reprotect, detail="nothing on main requires merge-hold"),
    Gate("ruleset disabled", lambda emu, ids: emu.disable_ruleset(REPO, ids["ruleset"]),
         ("repository_ruleset", "edited"), _enable, protect=False, rules=True,
         detail="nothing on main requires merge-hold"),
    Gate("ruleset deleted", lambda emu, ids: emu.delete_ruleset(REPO, ids["ruleset"]),
         ("repository_ruleset", "deleted"), _rerule, protect=False, rules=True,
         detail="nothing on main requires merge-hold"),
    Gate("ruleset's pin dropped", lambda emu, ids: emu.unpin_ruleset_check(REPO, ids["ruleset"]),
         ("repository_ruleset", "edited"), _rerule, protect=False, rules=True, detail="any source"),
    Gate("org ruleset disabled", lambda emu, ids: emu.disable_ruleset(REPO, ids["ruleset"]),
         ("repository_ruleset", "edited"), _enable, protect=False, rules=True, org_wide=True,
         detail="nothing on main requires merge-hold"),
]


def _start(gate: Gate, emu: GitHubEmulator, redis_url: str, tmp_path: Path) -> Any:
    def arrange(found: GitHubEmulator) -> None:
        if gate.rules:
            gate.ids["ruleset"] = found.require_check_in_ruleset(REPO, "main", integration_id=APP_ID)

    return watched(emu, redis_url, tmp_path, protect=gate.protect, arrange=arrange)


def audited(w: Watched, event: str) -> list[dict[str, Any]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = w.svc.redis.xrange(keys.history(REPO))  # type: ignore[assignment]
    return [json.loads(fields[b"data"]) for _id, fields in entries if fields[b"event"] == event.encode()]


def shown(w: Watched, text: str) -> dict[str, bool]:
    """Where ``text`` appears: the dashboard's index, the held PR's page, /incidents, the API, doctor."""
    client = w.dashboard()
    pages = {path: text in client.get(path).get_data(as_text=True)
             for path in ("/", f"/{REPO}/pull/5", "/incidents")}
    api = client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {w.token}"}).get_json()
    pages["api"] = any(text in str(found.get("banner")) for found in api["tampered"])
    checks = {c.name: c for c in doctor.run(w.svc.settings)}
    watch = checks.get(f"{REPO}: tamper watch")
    pages["doctor"] = watch is not None and not watch.ok and text in watch.detail
    return pages


def metric(w: Watched, line: str) -> bool:
    body = w.svc.client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).get_data(as_text=True)
    return line in body.splitlines()


@pytest.mark.parametrize("gate", LOST, ids=[g.name for g in LOST])
def test_a_gate_that_stops_binding_is_recorded_told_answered_once_and_shown(
        gate: Gate, github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    emu = github_emulator
    with _start(gate, emu, redis_url, tmp_path) as w:
        assert not any(shown(w, "no longer requires merge-hold").values())
        gate.weaken(emu, gate.ids)
        event, action = gate.event
        payload = gate_event(event, action, by="mallory", org_wide=gate.org_wide)
        w.deliver(event, payload)
        w.deliver(event, payload)  # GitHub redelivers it (a new GUID): nothing new
        w.deliver(event, gate_event(event, action, by="mallory", org_wide=gate.org_wide))  # and once more

        recorded = audited(w, "gate.unenforced")
        assert [(r["branch"], r["actor"]) for r in recorded] == [("main", "mallory")]
        assert gate.detail in recorded[0]["detail"]
        assert w.slack.wait(2) and f":rotating_light: {BANNER}" in w.chat()
        assert [body for body in w.bot_comments(5) if ANSWER in body] == [w.bot_comments(5)[0]]
        assert len(w.bot_comments(5)) == 1
        assert w.bot_comments(6) == []  # free: nothing to tell
        assert shown(w, BANNER) == {"/": True, f"/{REPO}/pull/5": True, "/incidents": True, "api": True,
                                    "doctor": True}
        assert metric(w, 'merge_hold_tamper_episodes_total{kind="lost"} 1.0')
        assert metric(w, "merge_hold_gates_unenforced 1.0")

        assert gate.restore is not None
        gate.restore(emu, gate.ids)
        w.deliver(event, gate_event(event, "edited" if event != "branch_protection_configuration" else "enabled",
                                    by="maria", org_wide=gate.org_wide))
        assert [r["branch"] for r in audited(w, "gate.restored")] == ["main"]
        assert not any(shown(w, "no longer requires merge-hold").values())
        assert f":white_check_mark: {REPO}@main requires merge-hold again" in "\n".join(
            t for t in (c["text"] for c in w.slack.wait(3)))
        assert metric(w, "merge_hold_gates_unenforced 0.0")
        assert len(w.bot_comments(5)) == 1  # the return is not a new answer on the PR


@dataclass
class Harmless:
    name: str
    act: Callable[[GitHubEmulator], None]
    event: tuple[str, str]
    sender: str = "mallory"


def _freeze_ruleset_off(emu: GitHubEmulator) -> None:
    rid = emu.require_check_in_ruleset(REPO, "main", context="merge-hold/freeze")
    emu.disable_ruleset(REPO, rid)


HARMLESS: list[Harmless] = [
    Harmless("payload says deleted, GitHub still requires it", lambda emu: None, ("branch_protection_rule", "deleted")),
    Harmless("another check's rule edited", lambda emu: emu.drop_required_check(REPO, "main", "ci/build"),
             ("branch_protection_rule", "edited")),
    Harmless("the freeze's ruleset (merge-hold/freeze) disabled", _freeze_ruleset_off,
             ("repository_ruleset", "edited")),
    Harmless("ruleset event, protection still pins it", lambda emu: None, ("repository_ruleset", "deleted")),
    Harmless("our own App's change (no loops)", lambda emu: emu.unprotect_branch(REPO, "main"),
             ("repository_ruleset", "edited"), sender="{bot}"),
]


@pytest.mark.parametrize("row", HARMLESS, ids=[r.name for r in HARMLESS])
def test_what_does_not_weaken_the_gate_changes_nothing(
        row: Harmless, github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        told = len(w.slack.posted)
        row.act(emu)
        event, action = row.event
        w.deliver(event, gate_event(event, action, by=row.sender.format(bot=emu.bot_login)))
        assert audited(w, "gate.unenforced") == [] and audited(w, "gate.undetermined") == []
        assert w.bot_comments(5) == []
        assert not any(shown(w, "requires merge-hold").values())
        assert len(w.slack.posted) == told


def test_undetermined_when_github_refuses_the_reads(github_emulator: GitHubEmulator, redis_client: Any,
                                                    redis_url: str, tmp_path: Path) -> None:
    """Protection gone and the rules unreadable (Metadata: read withdrawn): merge-hold cannot tell whether a
    ruleset still requires it — a banner saying so, never "fine", and no claim on the PR that it is not."""
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        emu.unprotect_branch(REPO, "main")
        emu.set_installation_permissions(INSTALLATION, {k: v for k, v in FULL.items() if k != "metadata"})
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "deleted", by="mallory"))
        assert [r["branch"] for r in audited(w, "gate.undetermined")] == ["main"]
        assert audited(w, "gate.unenforced") == []
        assert w.bot_comments(5) == []
        where = shown(w, f"merge-hold cannot confirm that {REPO}@main requires it (changed by @mallory)")
        assert where == {"/": True, f"/{REPO}/pull/5": True, "/incidents": True, "api": True, "doctor": True}


def test_suspending_the_app_is_told_and_shown_until_it_is_unsuspended(
        github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        suspend = installation_event("suspend", by="octo-owner")
        w.deliver("installation", suspend)
        w.deliver("installation", suspend)  # redelivered: told once
        text = f"merge-hold was suspended on {REPO} (changed by @octo-owner): it can no longer post its status"
        assert [r["actor"] for r in audited(w, "app.suspended")] == ["octo-owner"]
        assert w.slack.wait(2) and w.chat().count(f":rotating_light: {text}") == 1
        where = shown(w, text)
        assert where["/incidents"] and where["api"] and where["doctor"] and where["/"]
        w.deliver("installation", installation_event("unsuspend", by="octo-owner"))
        assert not any(shown(w, "suspended").values())
        told = "\n".join(c["text"] for c in w.slack.wait(3))
        assert f":white_check_mark: merge-hold is active again on {REPO}" in told


def test_new_permissions_accepted_reads_the_gates_again(github_emulator: GitHubEmulator, redis_client: Any,
                                                        redis_url: str, tmp_path: Path) -> None:
    """Protection removed while no event reached merge-hold: the next installation change finds it."""
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        emu.unprotect_branch(REPO, "main")
        w.deliver("installation", installation_event("new_permissions_accepted", by="octo-owner"))
        assert [r["branch"] for r in audited(w, "gate.unenforced")] == ["main"]
        assert len(w.bot_comments(5)) == 1 and "main no longer requires merge-hold (changed by @octo-owner)" in (
            w.bot_comments(5)[0])


@pytest.mark.parametrize(("pinned", "banner"), [(True, False), (False, True)], ids=["pinned", "any source"])
def test_a_forged_status_reads_the_gate_again(pinned: bool, banner: bool, github_emulator: GitHubEmulator,
                                              redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    """A forgery opens only a gate that is not pinned to this App: put back, and the gate read again."""
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        if not pinned:
            emu.unpin_required_check(REPO, "main")
        emu.add_status(REPO, HEAD5, state="success", context="merge-hold", description="lgtm", creator="eve")
        status = {"sha": HEAD5, "context": "merge-hold", "state": "success", "description": "lgtm",
                  "repository": {"full_name": REPO}, "installation": {"id": INSTALLATION},
                  "sender": {"login": "eve"}, "id": 1, "name": REPO, "target_url": None}
        w.deliver("status", status)
        assert (emu.latest_status(REPO, HEAD5) or {}).get("creator") == emu.bot_login  # put back
        assert ":warning: @eve posted a merge-hold success on acme/widgets#5" in "\n".join(
            c["text"] for c in w.slack.wait(2))
        assert bool(audited(w, "gate.unenforced")) is banner
        assert shown(w, "requires merge-hold but not from this App")["/incidents"] is banner
        assert bool(w.bot_comments(5)) is banner


def test_only_held_prs_on_the_weakened_branch_are_answered(github_emulator: GitHubEmulator, redis_client: Any,
                                                           redis_url: str, tmp_path: Path) -> None:
    """release/1 (the base of held #7) loses its protection; main keeps it: #7 is answered, #5 is not."""
    emu = github_emulator

    def arrange(found: GitHubEmulator) -> None:
        found.protect_branch(REPO, "release/1", checks=[("merge-hold", APP_ID)])
        found.add_pull(REPO, 7, head_sha="7" * 40, head_ref="fix-release", base="release/1")

    with watched(emu, redis_url, tmp_path, arrange=arrange) as w:
        w.deliver("issue_comment", comment(7, "/hold not this week", user="alice", comment_id=77))
        emu.unprotect_branch(REPO, "release/1")
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "deleted", by="mallory"))
        assert [r["branch"] for r in audited(w, "gate.unenforced")] == ["release/1"]
        assert w.bot_comments(5) == []
        (told,) = w.bot_comments(7)
        assert "release/1 no longer requires merge-hold (changed by @mallory): this hold is not enforced" in told
        # #7 merged meanwhile: its branch is no longer managed, and its banner goes with it.
        at = emu.merge_pull(REPO, 7, by="mallory")
        w.deliver("pull_request", closed(7, "7" * 40, by="mallory", head_ref="fix-release", base="release/1", at=at))
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "edited", by="mallory"))
        assert not any(shown(w, "release/1 no longer requires").values())


def test_the_banner_goes_when_the_app_leaves_the_repo(github_emulator: GitHubEmulator, redis_client: Any,
                                                      redis_url: str, tmp_path: Path) -> None:
    """Deselected from the installation, merge-hold manages nothing there: no banner for a gate it no
    longer holds (a suspension, by contrast, stays told until the App is unsuspended)."""
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        emu.unprotect_branch(REPO, "main")
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "deleted", by="mallory"))
        assert shown(w, BANNER)["/incidents"]
        removed = fixture("installation_repositories", "removed.payload.json")
        removed["installation"]["id"] = INSTALLATION
        removed["repositories_removed"] = [{"full_name": REPO, "private": False}]
        w.deliver("installation_repositories", removed)
        assert not any(shown(w, "no longer requires merge-hold").values())


def test_an_episode_is_answered_once_though_its_reading_wavers(github_emulator: GitHubEmulator, redis_client: Any,
                                                                redis_url: str, tmp_path: Path) -> None:
    """Unenforced, then unreadable for a while, then unenforced again: one episode, one answer, one line."""
    emu = github_emulator
    with watched(emu, redis_url, tmp_path) as w:
        emu.unprotect_branch(REPO, "main")
        event = gate_event("branch_protection_rule", "deleted", by="mallory")
        w.deliver("branch_protection_rule", event)
        emu.set_installation_permissions(INSTALLATION, {k: v for k, v in FULL.items() if k != "metadata"})
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "edited", by="trent"))
        emu.set_installation_permissions(INSTALLATION, FULL)
        w.deliver("branch_protection_rule", gate_event("branch_protection_rule", "edited", by="trent"))
        assert len(audited(w, "gate.unenforced")) == 1 and audited(w, "gate.undetermined") == []
        assert len(w.bot_comments(5)) == 1
        assert shown(w, BANNER)["/incidents"]  # still the episode @mallory began


def test_the_reconcile_catches_a_gate_lost_without_a_webhook(github_emulator: GitHubEmulator, redis_client: Any,
                                                             redis_url: str, tmp_path: Path) -> None:
    """GitHub's event never arrived (a webhook outage, or the watch started after the change): the
    scheduled reconcile reads the gates too, and tells it like the event would have."""
    from workers.ops.reconcile import reconcile_repo

    gate = LOST[0]
    with _start(gate, github_emulator, redis_url, tmp_path) as w:
        reconcile_repo(w.svc.rt, REPO, rebuild=False)
        assert audited(w, "gate.unenforced") == []  # the baseline: main requires merge-hold
        gate.weaken(github_emulator, gate.ids)
        reconcile_repo(w.svc.rt, REPO, rebuild=False)
        w.svc.drain()
        recorded = audited(w, "gate.unenforced")
        assert [(r["branch"], r["cause"]) for r in recorded] == [("main", "reconcile")]
        assert len(w.bot_comments(5)) == 1 and "main no longer requires merge-hold" in w.bot_comments(5)[0]
        reconcile_repo(w.svc.rt, REPO, rebuild=False)
        assert len(audited(w, "gate.unenforced")) == 1  # the same episode: told once
