"""The pure side of chat notifications: which audit events become a line, for whom, and how a burst
folds into one message; and the ``/hold subscribe`` grammar. Adversarial rows included."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.chat_grammar import ChatCommand, ChatUsageError, parse_chat
from core.notices import freed, hook_notice, message, notice, remembered

FREEZE = {"id": "freeze:sunday", "source": "freeze", "scope": "acme/w@main", "expires_at": None}
TIMED = {"id": "room:slack:T:U:acme/w", "source": "room", "scope": "acme/w", "expires_at": "2026-01-01T10:00:00Z"}


@pytest.mark.parametrize(("event", "data", "text", "targets"), [
    ("room.held", {"repo": "acme/w", "scope": "acme/w", "holder": "dana", "reason": "release", "expires_at": None},
     ":no_entry: dana held acme/w: release", ("acme/w", "acme")),
    # An org-wide hold is audited with no repo: only the org's subscribers hear it.
    ("room.held", {"repo": None, "scope": "Acme", "holder": "dana", "reason": "r",
                   "expires_at": "2026-01-02T00:00:00Z"},
     ":no_entry: dana held Acme until 2026-01-02T00:00:00Z: r", ("acme",)),
    ("room.lifted", {"repo": "acme/w", "scope": "acme/w@main", "actor": "dana"},
     ":white_check_mark: dana lifted the hold on acme/w@main", ("acme/w", "acme")),
    ("hold.held", {"repo": "acme/w", "number": 3, "actor": "maria", "reason": "needs QA", "message": "x"},
     ":no_entry: maria held acme/w#3: needs QA", ("acme/w", "acme")),
    ("hold.lifted", {"repo": "acme/w", "number": 3, "actor": "maria", "reason": "", "message": "@maria lifted"},
     ":white_check_mark: maria lifted the hold on acme/w#3", ("acme/w", "acme")),
    ("hold.lifted_all", {"repo": "acme/w", "number": 3, "actor": "lead", "target": "all"},
     ":white_check_mark: lead lifted every hold on acme/w#3", ("acme/w", "acme")),
    # An approval clears its reviewer's register whether or not it held: not news (pr.approved is).
    ("hold.lifted", {"repo": "acme/w", "number": 3, "actor": "maria", "message": "@maria approved"}, None, ()),
    ("hold.lifted", {"repo": "acme/w", "number": 3, "actor": "m", "message": "review 9 by @m dismissed"}, None, ()),
    ("hold.refused", {"repo": "acme/w", "number": 3, "actor": "eve", "message": "no"}, None, ()),
    ("room.exempted", {"repo": "acme/w", "number": 3, "by": "dana", "reason": "hotfix", "expires_at": None},
     ":unlock: dana exempted acme/w#3 from room and freeze holds: hotfix", ("acme/w", "acme")),
    ("verdict.held", {"repo": "acme/w", "number": 3, "holds": [FREEZE]},
     ":snowflake: freeze sunday started: acme/w#3 is held", ("acme/w", "acme")),
    ("pr.approved", {"repo": "acme/w", "number": 3, "by": "maria"},
     ":eyes: held PR acme/w#3 was approved by maria; it stays held", ("acme/w", "acme")),
    ("pr.queued", {"repo": "acme/w", "number": 3},
     ":eyes: held PR acme/w#3 was added to the merge queue; its group stays held", ("acme/w", "acme")),
    ("tree.closed", {"repo": "acme/w", "scope": "acme/w@main", "reason": "main is red"},
     ":red_circle: acme/w@main is closed: main is red", ("acme/w", "acme")),
    # Bookkeeping is never news; a PR held by a comment is already told by the comment's own event.
    ("status.posted", {"repo": "acme/w", "number": 3, "state": "failure"}, None, ()),
    ("verdict.held", {"repo": "acme/w", "number": 3, "holds": [{"id": "c", "source": "comment"}]}, None, ()),
    ("verdict.held", {"repo": "acme/w", "number": 3, "holds": "not a list of dicts"}, None, ()),
    ("verdict.free", {"repo": "acme/w", "number": 3, "holds": []}, None, ()),
    ("fanout.done", {"repo": "acme/w"}, None, ()),
])
def test_notice(event: str, data: dict[str, Any], text: str | None, targets: tuple[str, ...]) -> None:
    found = notice(event, data)
    assert (found.text if found else None) == text
    assert (found.targets if found else ()) == targets


@pytest.mark.parametrize(("item", "text"), [
    ({"repo": "acme/w", "pr": 3, "decision": "deny", "tool_name": "Bash", "reason": "held"},
     ":robot_face: merge-hold stopped Bash merging acme/w#3: held"),
    ({"repo": "acme/w", "pr": None, "decision": "deny", "reason": ""},
     ":robot_face: merge-hold stopped an agent merging acme/w"),
    ({"repo": "acme/w", "pr": 3, "decision": "allow"}, None),
    ({"repo": "acme/w", "pr": 3, "decision": "ask"}, None),
    ({"repo": None, "pr": 3, "decision": "deny"}, None),
    ({"repo": "no-slash", "decision": "deny"}, None),
    ({"repo": ["acme/w"], "decision": "deny"}, None),
])
def test_hook_notice(item: dict[str, Any], text: str | None) -> None:
    found = hook_notice(item)
    assert (found.text if found else None) == text


def test_freed_tells_freeze_ends_and_expiries_not_lifts() -> None:
    kept = remembered([FREEZE, TIMED, {"id": "c", "source": "comment", "expires_at": None}, "junk"])
    assert [k["id"] for k in kept] == ["freeze:sunday", "room:slack:T:U:acme/w"]
    later = datetime(2026, 1, 1, 11, tzinfo=UTC)
    found = freed("acme/w", 3, kept, later)
    assert found is not None and found.text.splitlines() == [
        ":sunny: freeze sunday ended: acme/w#3 is free", ":hourglass: the hold on acme/w expired: acme/w#3 is free"]
    # Before its end the timed hold was lifted by someone (told then), not expired.
    assert freed("acme/w", 3, kept[1:], datetime(2026, 1, 1, 9, tzinfo=UTC)) is None


def test_message_folds_and_counts() -> None:
    lines = [f"line {n}" for n in range(30)] + ["line 0"]
    text = message(lines, limit=20)
    assert text.splitlines()[:2] == ["line 0", "line 1"] and text.endswith("…and 10 more")
    assert message(["a", "a", "b"]) == "a\nb"


@pytest.mark.parametrize(("command", "text", "expected"), [
    ("/hold", "subscribe acme/widgets", ChatCommand("subscribe", "acme/widgets")),
    ("/hold", "SUBSCRIBE acme", ChatCommand("subscribe", "acme")),
    ("/hold", "subscribe https://github.com/acme/widgets", ChatCommand("subscribe", "acme/widgets")),
    ("/hold", "subscribe acme https://chat.example/hooks/abc",
     ChatCommand("subscribe", "acme", webhook="https://chat.example/hooks/abc")),
    ("/hold", "subscribe acme <https://chat.example/hooks/abc>",
     ChatCommand("subscribe", "acme", webhook="https://chat.example/hooks/abc")),
    ("/hold", "unsubscribe acme/widgets", ChatCommand("unsubscribe", "acme/widgets")),
    ("/merge-hold", "hold subscribe acme", ChatCommand("subscribe", "acme")),
    ("/hold", "subscribe", "subscribe takes a repo or an org"),
    ("/hold", "subscribe acme/widgets#12", "a repo or an org, not"),
    ("/hold", "subscribe acme/widgets@main", "a repo or an org, not"),
    ("/hold", "subscribe acme x y", "subscribe takes"),
    ("/hold", "unsubscribe acme https://chat.example/hooks/abc", "unsubscribe takes"),
    # `/unhold subscribe` is not a command: "subscribe" is read as an org, as before.
    ("/unhold", "subscribe", ChatCommand("unhold", "subscribe")),
])
def test_subscribe_grammar(command: str, text: str, expected: ChatCommand | str) -> None:
    parsed = parse_chat(command, text)
    if isinstance(expected, str):
        assert isinstance(parsed, ChatUsageError) and expected in parsed.text
    else:
        assert parsed == expected
