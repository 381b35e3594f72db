"""What the check run shows (`core.check_run`) and when it is written (`workers.publishing.check_runs.rank`):
pure rows, adversarial ones included (outside text in Markdown, a freeze-only PR, a free PR never held)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.check_run import actions_for, body, conclusion, digest, freeze_only, summary, title, view, when
from workers.publishing.check_runs import ANSWER, FREEZE_ONLY, OWN, act_sentence, rank

SHA = "a" * 40
NOW = datetime(2026, 12, 5, 10, 30, tzinfo=UTC)


def hold(source: str, holder: str, scope: str = "acme/widgets#5", **fields: Any) -> dict[str, Any]:
    return {"id": f"{source}:{holder}", "source": source, "scope": scope, "holder": holder, "reason": "r",
            "created_at": "2026-12-05T09:00:00Z", "expires_at": None, "origin": "", **fields}


def shown(*holds: dict[str, Any], error: str | None = None) -> dict[str, Any]:
    return view({"held": bool(holds), "holds": list(holds), "error": error}, pr_url="u", rooms_url="r")


@pytest.mark.parametrize(("holds", "error", "want_title", "want_conclusion", "buttons"), [
    ((), None, "No holds", "success", ["refresh"]),
    ((hold("comment", "alice"),), None, "Held by @alice", "action_required", ["lift", "refresh"]),
    ((hold("comment", "alice"), hold("review", "bob")), None, "Held by @alice (+1 more)", "action_required",
     ["lift", "refresh"]),
    ((hold("review", "bob"),), None, "Changes requested by @bob", "action_required", ["lift", "refresh"]),
    ((hold("label", "", origin="label:do-not-merge/hold"),), None, "Held by label do-not-merge/hold",
     "action_required", ["lift", "refresh"]),
    ((hold("room", "dana", scope="acme"),), None, "Held by @dana", "action_required", ["lift", "exempt", "refresh"]),
    ((hold("freeze", "friday", scope="acme/widgets@main"),), None, "Frozen by friday", "action_required",
     ["lift", "exempt", "refresh"]),
    ((hold("room", "token:ci", scope="acme/widgets"),), None, "Held by token:ci", "action_required",
     ["lift", "exempt", "refresh"]),  # a token is never @ci
    ((), "invalid repo config", "Cannot establish holds", "action_required", ["refresh"]),  # never success on doubt
])
def test_title_conclusion_and_buttons(holds: tuple[dict[str, Any], ...], error: str | None, want_title: str,
                                      want_conclusion: str, buttons: list[str]) -> None:
    seen = shown(*holds, error=error)
    assert (title(seen), conclusion(seen)) == (want_title, want_conclusion)
    assert [a["identifier"] for a in actions_for(seen)] == buttons


def test_outside_text_cannot_write_markdown() -> None:
    evil = hold("comment", "alice", reason="[click](https://evil) **x** <img src=x> `y` | z")
    text = summary(shown(evil), NOW)
    assert "[click](https://evil)" not in text and " <img" not in text  # no link, no HTML: text
    assert "\\[click\\](https://evil)" in text and "\\<img src=x\\>" in text and "\\*\\*x\\*\\*" in text


def test_relative_times_never_make_a_write() -> None:
    seen = shown(hold("comment", "alice", expires_at="2026-12-05T18:00:00Z"))
    later = datetime(2026, 12, 5, 11, 30, tzinfo=UTC)
    assert summary(seen, NOW) != summary(seen, later)  # "in 7 h 30 min" then "in 6 h 30 min"
    assert digest(seen) == digest(shown(hold("comment", "alice", expires_at="2026-12-05T18:00:00Z")))
    assert body(seen, SHA, NOW)["output"]["title"] == "Held by @alice"


@pytest.mark.parametrize(("moment", "text"), [
    ("2026-12-05T18:00:00Z", "2026-12-05 18:00 UTC (in 7 h 30 min)"),
    ("2026-12-05T09:00:00Z", "2026-12-05 09:00 UTC (1 h 30 min ago)"),
    ("2026-12-08T10:30:00Z", "2026-12-08 10:30 UTC (in 3 d)"),
    ("2026-12-05T10:30:20Z", "2026-12-05 10:30 UTC (now)"),
    (None, "no end set"),
])
def test_when_is_exact_and_relative(moment: str | None, text: str) -> None:
    assert when(moment, NOW) == text


HELD = shown(hold("comment", "alice"))
FROZEN = shown(hold("room", "dana", scope="acme"))
FREE = shown()


@pytest.mark.parametrize(("want", "last", "answer", "expected"), [
    (HELD, None, False, OWN),  # first hold: a run
    (HELD, {"sha": SHA, "digest": digest(HELD), "blocking": True}, False, None),  # shown already: no write
    (HELD, {"sha": SHA, "digest": "old", "blocking": True}, False, OWN),  # changed: one update
    (HELD, {"sha": SHA, "digest": "old", "blocking": True}, True, ANSWER),  # a click's answer goes first
    (FROZEN, None, False, FREEZE_ONLY),  # a freeze-only PR: last
    (FREE, None, False, None),  # never held: no run at all
    (FREE, {"sha": SHA, "digest": "old", "blocking": True}, False, OWN),  # freed: success, once
    (FREE, {"sha": SHA, "digest": digest(FREE), "blocking": False}, False, None),  # then left alone
    (FREE, {"sha": SHA, "digest": "other", "blocking": False}, False, None),  # even if acts change
    (FREE, {"sha": "b" * 40, "digest": "old", "blocking": True}, False, None),  # a new free head: nothing
    (HELD, {"sha": "b" * 40, "digest": digest(HELD), "blocking": True}, False, OWN),  # a new held head: a run
])
def test_rank(want: dict[str, Any], last: dict[str, Any] | None, answer: bool, expected: int | None) -> None:
    assert rank((SHA, want), last, answer=answer) == expected
    assert freeze_only(FROZEN) and not freeze_only(HELD) and not freeze_only(FREE)


@pytest.mark.parametrize(("event", "data", "sentence"), [
    ("hold.lifted", {"message": "@alice lifted the hold", "origin": "check_run"},
     "@alice lifted the hold (from the Checks tab)"),
    ("hold.held", {"message": "@alice held this PR"}, "@alice held this PR"),
    ("room.exempted", {"by": "dana", "reason": "hotfix"}, "@dana exempted this PR: hotfix"),
    ("exemption.requested", {"actor": "erin", "origin": "check_run"},
     "@erin asked for an exemption (from the Checks tab)"),
    ("status.posted", {"state": "failure"}, None),  # not an act
    ("verdict.held", {}, None),
])
def test_acts_as_sentences(event: str, data: dict[str, Any], sentence: str | None) -> None:
    assert act_sentence(event, data) == sentence
