"""The pure rules of the judged-afterwards layer, table by table: reading a branch's gate from GitHub's two
answers (`core.gate`, shared by doctor and the tamper watch), what a new reading means
(`core.tamper`), which merges are incidents and what merge-hold says about them (`core.incidents`), and
the chat lines (`core.notices`). Adversarial rows: lookalike contexts, refusals, payloads that lie."""

from __future__ import annotations

from typing import Any

import pytest

from core.gate import REQUIRED, UNDETERMINED, UNENFORCED, read_gate
from core.incidents import (
    about_pr,
    comment,
    last_status_from_github,
    last_status_from_posted,
    mentions,
    merge_of,
    reasons,
)
from core.notices import notice
from core.tamper import BLIND, LOST, RESTORED, change, held_pr_answer

APP = 424242


def branch(*checks: tuple[str, int | None], contexts: tuple[str, ...] = ()) -> tuple[int, Any]:
    return 200, {"name": "main", "protected": bool(checks or contexts), "protection": {
        "enabled": bool(checks or contexts), "required_status_checks": {
            "enforcement_level": "non_admins", "contexts": list(contexts),
            "checks": [{"context": c, "app_id": a} for c, a in checks]}}}


def rules(*checks: dict[str, Any], kind: str = "required_status_checks") -> tuple[int, Any]:
    return 200, [{"type": kind, "ruleset_id": 7, "ruleset_source": "acme/widgets",
                  "parameters": {"required_status_checks": list(checks)}}]


NO_RULES: tuple[int, Any] = (200, [])
REFUSED: tuple[int, Any] = (403, {"message": "Resource not accessible by integration"})

GATES: list[tuple[str, tuple[int, Any], tuple[int, Any], str, str]] = [
    ("protection pinned", branch(("merge-hold", APP)), NO_RULES, REQUIRED, "from this App (branch protection)"),
    ("ruleset pinned", branch(), rules({"context": "merge-hold", "integration_id": APP}), REQUIRED, "ruleset 7"),
    ("pinned beside an unpinned one", branch(("merge-hold", None)),
     rules({"context": "merge-hold", "integration_id": APP}), REQUIRED, "ruleset 7"),
    ("pinned protection, rules refused", branch(("merge-hold", APP)), REFUSED, REQUIRED, "Metadata: read"),
    ("nothing", branch(), NO_RULES, UNENFORCED, "nothing on main requires merge-hold"),
    ("any source", branch(("merge-hold", None)), NO_RULES, UNENFORCED, "any source"),
    ("legacy contexts list", branch(contexts=("merge-hold",)), NO_RULES, UNENFORCED, "any source"),
    ("another App", branch(("merge-hold", 15368)), NO_RULES, UNENFORCED, "App 15368"),
    ("app_id -1 means any", branch(("merge-hold", -1)), NO_RULES, UNENFORCED, "any source"),
    ("a lookalike context", branch(("merge-hold/freeze", APP), ("Merge-Hold", APP)), NO_RULES, UNENFORCED,
     "nothing on main"),
    ("the freeze's ruleset only", branch(), rules({"context": "merge-hold/freeze", "integration_id": APP}),
     UNENFORCED, "nothing on main"),
    ("a merge queue rule is no requirement", branch(), rules(kind="merge_queue"), UNENFORCED, "nothing on main"),
    ("ruleset without a source", branch(), rules({"context": "merge-hold"}), UNENFORCED, "any source"),
    ("branch refused, no rules", REFUSED, NO_RULES, UNDETERMINED, "Contents: read"),
    ("rules refused, no protection", branch(), REFUSED, UNDETERMINED, "Metadata: read"),
    ("GitHub down", (502, {"message": "Bad Gateway"}), NO_RULES, UNDETERMINED, "could not be read (502 Bad Gateway)"),
    ("no answer", (0, None), (0, None), UNDETERMINED, "no answer"),
    ("a body that is not JSON", (200, "<html>"), (200, {"not": "a list"}), UNDETERMINED, "could not be read"),
]


@pytest.mark.parametrize(("name", "found", "ruled", "state", "says"), GATES, ids=[g[0] for g in GATES])
def test_reading_a_gate(name: str, found: tuple[int, Any], ruled: tuple[int, Any], state: str, says: str) -> None:
    reading = read_gate("main", found, ruled, APP)
    assert reading.state == state
    assert says in reading.detail
    assert reading.finding.ok is (state == REQUIRED)
    assert reading.as_dict()["state"] == state


CHANGES: list[tuple[str | None, str, str | None]] = [
    (None, REQUIRED, None),  # a first reading that is fine is no news
    (None, UNENFORCED, LOST),  # a first reading after an event: the gate does not bind
    (None, UNDETERMINED, BLIND),
    (REQUIRED, UNENFORCED, LOST),
    (REQUIRED, UNDETERMINED, BLIND),
    (REQUIRED, REQUIRED, None),
    (UNENFORCED, UNENFORCED, None),  # a redelivery, or another event: told once
    (UNENFORCED, UNDETERMINED, None),
    (UNDETERMINED, UNENFORCED, None),
    (UNENFORCED, REQUIRED, RESTORED),
    (UNDETERMINED, REQUIRED, RESTORED),
]


@pytest.mark.parametrize(("before", "now", "expected"), CHANGES)
def test_what_a_new_reading_means(before: str | None, now: str, expected: str | None) -> None:
    assert change({"state": before} if before else None, now) == expected


def test_the_answer_on_a_held_pr() -> None:
    text = held_pr_answer("main", "mallory", "nothing on main requires merge-hold", "add a ruleset")
    first = "**main no longer requires merge-hold (changed by @mallory): this hold is not enforced.**"
    assert text.splitlines()[0] == first
    assert not any(line.startswith("/") for line in text.splitlines())


def _closed(**pull: Any) -> dict[str, Any]:
    base = {"number": 5, "merged": True, "merged_at": "2026-01-05T12:00:00Z", "merged_by": {"login": "ada"},
            "head": {"sha": "5" * 40}, "base": {"ref": "main"}, "title": "t", "html_url": "u"}
    return {"action": "closed", "pull_request": {**base, **pull}, "sender": {"login": "ada"}}


MERGES: list[tuple[str, dict[str, Any], bool]] = [
    ("merged", _closed(), True),
    ("closed unmerged", _closed(merged=False, merged_at=None), False),
    ("merged_at without the merged flag (issue shape)", _closed(merged=None), True),
    ("merged false but a merged_at (contradiction: believe the flag)", _closed(merged=False), False),
    ("another action", {**_closed(), "action": "edited"}, False),
    ("no number", _closed(number=None), False),
    ("not an object", {"action": "closed", "pull_request": "5"}, False),
]


@pytest.mark.parametrize(("name", "payload", "merged"), MERGES, ids=[m[0] for m in MERGES])
def test_which_deliveries_report_a_merge(name: str, payload: dict[str, Any], merged: bool) -> None:
    assert (merge_of("acme/widgets", payload) is not None) is merged


HELD: dict[str, Any] = {"held": True, "error": None,
                        "holds": [{"holder": "alice", "source": "comment", "reason": "db"}]}
FREE: dict[str, Any] = {"held": False, "error": None, "holds": []}
OURS_OK = {"state": "success", "ours": True}
OURS_FAIL = {"state": "failure", "description": "Held by @alice: db", "ours": True}

JUDGED: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None, str | None, list[str]]] = [
    ("free, our success", FREE, OURS_OK, None, []),
    ("held, our failure", HELD, OURS_FAIL, None, ["held", "status"]),
    ("held, yet our last post success (lift raced)", HELD, OURS_OK, None, ["held"]),
    ("free, our last post still failure", FREE, OURS_FAIL, None, ["status"]),
    ("verdict not established", {"held": False, "error": "invalid config"}, {"state": "error", "ours": True}, None,
     ["error", "status"]),
    ("a success someone else posted", None, {"state": "success", "creator": "eve", "ours": False}, None, ["forged"]),
    ("no status at all, no verdict", None, None, None, []),
    ("held, no status on the head yet (a push just before)", HELD, None, None, ["held"]),
    ("status unreadable", None, None, "GitHub answered 403", ["undetermined"]),
    ("pending (held_state: pending)", HELD, {"state": "pending", "ours": True}, None, ["held", "status"]),
]


@pytest.mark.parametrize(("name", "verdict", "last", "unreadable", "kinds"), JUDGED, ids=[j[0] for j in JUDGED])
def test_which_merges_are_incidents(name: str, verdict: dict[str, Any] | None, last: dict[str, Any] | None,
                                    unreadable: str | None, kinds: list[str]) -> None:
    assert [kind for kind, _text in reasons(verdict, last, status_unreadable=unreadable)] == kinds


def test_the_last_status_is_ours_only_on_the_merged_head() -> None:
    posted = {"sha": "a" * 40, "state": "failure", "description": "d"}
    assert last_status_from_posted(posted, "a" * 40, "mh[bot]") == {
        "sha": "a" * 40, "state": "failure", "description": "d", "creator": "mh[bot]", "ours": True}
    assert last_status_from_posted(posted, "b" * 40, "mh[bot]") is None  # pushed since: ask GitHub
    listed = [{"context": "ci", "state": "success", "creator": {"login": "ci"}},
              {"context": "merge-hold", "state": "success", "creator": {"login": "eve"}},
              {"context": "merge-hold", "state": "failure", "creator": {"login": "mh[bot]"}}]
    found = last_status_from_github(listed, "b" * 40, "merge-hold", "mh[bot]")
    assert found is not None and (found["creator"], found["ours"]) == ("eve", False)  # the newest, not ours
    assert last_status_from_github(listed[:1], "b" * 40, "merge-hold", "mh[bot]") is None


@pytest.mark.parametrize(("record", "about"), [
    ({"repo": "Acme/Widgets", "pr": 5}, True),
    ({"repo": "acme/widgets", "pr": "5"}, True),
    ({"repo": "acme/widgets", "pr": 6}, False),
    ({"repo": "acme/widgets-2", "pr": 5}, False),
    ({"repo": "x/y", "merges": [{"repo": "acme/widgets", "pr": 5}]}, True),
    ({"repo": "acme/widgets", "merges": "5"}, False),
    ({}, False),
])
def test_hook_records_about_the_pr(record: dict[str, Any], about: bool) -> None:
    assert about_pr(record, "acme/widgets", 5) is about


def test_who_the_comment_mentions() -> None:
    holds = [{"holder": "alice", "source": "comment"}, {"holder": "bob", "source": "review"},
             {"holder": "U0DANA", "source": "room"}, {"holder": "do-not-merge/hold", "source": "label"},
             {"holder": "alice", "source": "comment"}, {"holder": "evil @everyone", "source": "comment"}]
    assert mentions(holds) == ["alice", "bob"]


def test_the_incident_comment_starts_no_line_with_a_command() -> None:
    text = comment({"id": "acme/widgets#5", "repo": "acme/widgets", "number": 5, "merged_by": "ada",
                    "reasons": ["/hold in a reason"], "holds": [], "hook_records": []}, "https://mh.example/")
    assert not any(line.startswith("/") for line in text.splitlines())
    assert text.endswith("https://mh.example/incidents#incident-acme--widgets-5")


@pytest.mark.parametrize(("event", "data", "line"), [
    ("incident.recorded", {"number": 5, "merged_by": "ada", "reason": "it was held by @alice"},
     ":rotating_light: acme/widgets#5 was merged by @ada although it was held by @alice"),
    ("gate.unenforced", {"branch": "main", "actor": "mallory"},
     ":rotating_light: acme/widgets@main no longer requires merge-hold (changed by @mallory): holds there are not "
     "enforced"),
    ("gate.restored", {"branch": "main"}, ":white_check_mark: acme/widgets@main requires merge-hold again"),
    ("app.suspended", {"actor": "owner"},
     ":rotating_light: merge-hold was suspended on acme/widgets (changed by @owner): it can no longer post its "
     "status, so holds placed, lifted or expiring there do not reach GitHub"),
    ("status.forged", {"number": 5, "sender": "eve", "state": "success", "overwritten": True},
     ":warning: @eve posted a merge-hold success on acme/widgets#5 that merge-hold did not post; the real verdict "
     "was put back"),
    ("status.forged", {"number": 5, "sender": "eve", "state": "success", "overwritten": False}, None),
])
def test_chat_lines(event: str, data: dict[str, Any], line: str | None) -> None:
    found = notice(event, {"repo": "acme/widgets", **data})
    assert (found.text if found else None) == line
