"""The pure rules of issue 30 items 1 and 2, row by row: who may exempt through which door, what an
exemption and an exempt label cover, and how a path-scoped hold enters the verdict, the freeze ruleset
and a deploy's answer. Pure core, no I/O."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.deployments import covering_holds
from core.exempt_labels import LabelGrant, granted_labels
from core.exemptions import Door, refusal
from core.freeze_gate import is_freeze_hold, is_freeze_record_hold, wanted_include
from core.holds import Exemption, Hold, Source
from core.paths import ChangedFiles
from core.permissions import Permission
from core.prstate import Facts, PullState, record_facts
from core.repo_config import DEFAULT_CONFIG, FreezeWindow, RepoConfig
from core.verdict import compute_verdict, wants_files

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
A, B = "a" * 40, "b" * 40
REPO = "acme/widgets"
ROOM = Hold("room:slack:T1:U1:acme/widgets", Source.ROOM, REPO, "dana", "incident", NOW - timedelta(hours=1))
PATHS = Hold("room:slack:T1:U2:acme/widgets", Source.ROOM, REPO, "erin", "schema", NOW - timedelta(hours=1),
             paths=("db/migrations/**",))
STATE = record_facts(PullState(REPO, 7), Facts(at=NOW, head_sha=A, head_ref="f", head_repo=REPO, base="main",
                                               author="otto", labels=("hotfix",)))
CONFIG = replace(DEFAULT_CONFIG, exempt_labels=("hotfix",))


@pytest.mark.parametrize(("door", "role", "sticky", "allowed"), [
    (Door.CHAT, Permission.ADMIN, False, True),  # a chat admin
    (Door.CHAT, Permission.ADMIN, True, True),
    (Door.CHAT, Permission.NONE, False, False),
    (Door.API, Permission.MAINTAIN, False, True),  # a hold token
    (Door.API, Permission.MAINTAIN, True, False),
    (Door.API, Permission.ADMIN, True, True),  # an admin token
    (Door.PAGE, Permission.WRITE, False, False),
    (Door.PAGE, Permission.MAINTAIN, False, True),
    (Door.PAGE, Permission.MAINTAIN, True, False),
    (Door.PAGE, Permission.ADMIN, True, True),
    (Door.LABEL, Permission.TRIAGE, False, False),
    (Door.LABEL, Permission.MAINTAIN, False, True),
    (Door.LABEL, Permission.ADMIN, True, False),  # a label is never sticky
])
def test_who_may_exempt_through_which_door(door: Door, role: Permission, sticky: bool, allowed: bool) -> None:
    found = refusal(door, role, sticky=sticky)
    assert (found is None) is allowed
    assert found is None or "needs" in found or "counts only" in found or "never sticky" in found


NO_FILES = ChangedFiles(())


def held(state: PullState = STATE, *, exemption: Exemption | None = None, scoped: tuple[Hold, ...] = (ROOM,),
         files: ChangedFiles = NO_FILES, config: RepoConfig = DEFAULT_CONFIG) -> list[str]:
    verdict = compute_verdict(state, config=config, now=NOW, scoped_holds=scoped, exemption=exemption,
                              changed_files=files)
    return [h.id for h in verdict.holds]


def exemption(**fields: Any) -> Exemption:
    return Exemption(**{"pr_scope": f"{REPO}#7", "by": "dana", "reason": "fix", "created_at": NOW, "head_sha": A,
                        **fields})


@pytest.mark.parametrize(("found", "head", "exempt", "ended"), [
    (exemption(), A, True, False),  # the head it was granted on
    (exemption(), B, False, True),  # a push ended it
    (exemption(sticky=True), B, True, False),  # sticky: every head
    (exemption(head_sha=None), A, False, False),  # bound to no head: covers none, and nothing ends it
    (exemption(expires_at=NOW), B, False, False),  # expired: its own end, not a push's
    (Exemption.from_dict({"pr_scope": f"{REPO}#7", "by": "d", "reason": "r", "created_at": "2026-01-01T00:00:00Z"}),
     B, True, False),  # the old stored form: sticky
])
def test_what_an_exemption_covers(found: Exemption, head: str, exempt: bool, ended: bool) -> None:
    state = replace(STATE, facts=replace(STATE.facts, head_sha=head)) if STATE.facts else STATE
    assert held(state, exemption=found) == ([] if exempt else [ROOM.id])
    assert found.ended_by_push(head, NOW) is ended


@pytest.mark.parametrize(("grant", "exempt"), [
    (None, False),  # seen on the PR, never seen added: no exemption on doubt
    (LabelGrant(NOW, True, by="mia", trusted=True, head_sha=A), True),
    (LabelGrant(NOW, True, by="tom", trusted=False, head_sha=A), False),  # a triager's
    (LabelGrant(NOW, True, by="mia", trusted=True, head_sha=B), False),  # added for another head
    (LabelGrant(NOW, False, by="mia"), False),  # removed (the snapshot is older)
])
def test_what_an_exempt_label_covers(grant: LabelGrant | None, exempt: bool) -> None:
    state = replace(STATE, grants={"hotfix": grant} if grant else {})
    assert held(state, config=CONFIG) == ([] if exempt else [ROOM.id])
    assert granted_labels(state.grants, ("hotfix",), A) == (("hotfix",) if exempt else ())


@pytest.mark.parametrize(("files", "ids", "reason"), [
    (ChangedFiles(("db/migrations/1.sql", "app.py")), [ROOM.id, PATHS.id], "schema (db/migrations/1.sql)"),
    (ChangedFiles(("docs/a.md",)), [ROOM.id], None),
    (ChangedFiles.unknown("its changed files could not be read"), [ROOM.id, PATHS.id],
     "schema; its changed files could not be read"),
])
def test_a_path_scoped_hold_holds_by_the_changed_files(files: ChangedFiles, ids: list[str], reason: str | None) -> None:
    verdict = compute_verdict(STATE, config=DEFAULT_CONFIG, now=NOW, scoped_holds=(ROOM, PATHS), changed_files=files)
    assert sorted(h.id for h in verdict.holds) == sorted(ids)
    assert [h.reason for h in verdict.holds if h.paths] == ([reason] if reason else [])
    assert held(exemption=exemption(), scoped=(PATHS,), files=files) == []  # an exemption passes it too


def test_files_are_wanted_only_when_a_path_scoped_hold_reaches_the_pr() -> None:
    assert not wants_files(STATE, DEFAULT_CONFIG, (ROOM,), NOW)
    assert wants_files(STATE, DEFAULT_CONFIG, (ROOM, PATHS), NOW)
    elsewhere = replace(PATHS, scope=f"{REPO}@release/*")
    assert not wants_files(STATE, DEFAULT_CONFIG, (elsewhere,), NOW)
    assert not wants_files(STATE, DEFAULT_CONFIG, (replace(PATHS, expires_at=NOW),), NOW)
    window = FreezeWindow("db", ("mon",), "00:00", "24:00", paths=("db/**",))
    assert wants_files(STATE, replace(DEFAULT_CONFIG, freeze_windows=(window,)), (), NOW)  # a Monday
    assert not wants_files(STATE, None, (PATHS,), NOW)  # no config: the verdict is an error anyway


def test_a_path_scoped_freeze_is_never_the_rulesets_nor_a_deploys() -> None:
    assert is_freeze_hold(ROOM) and not is_freeze_hold(PATHS)
    assert is_freeze_record_hold(ROOM.to_dict()) and not is_freeze_record_hold(PATHS.to_dict())
    window = FreezeWindow("db", ("mon",), "00:00", "24:00", paths=("db/**",))
    config = replace(DEFAULT_CONFIG, freeze_windows=(window,))
    assert wanted_include(REPO, config, (PATHS,), NOW) == ()
    assert wanted_include(REPO, config, (ROOM, PATHS), NOW) == ("~ALL",)
    assert covering_holds(config, REPO, "main", (PATHS,), NOW) == []
    assert [h.id for h in covering_holds(DEFAULT_CONFIG, REPO, "main", (ROOM, PATHS), NOW)] == [ROOM.id]
