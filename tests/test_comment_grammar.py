"""The PR comment grammar, row by row: what is a command, and what only looks like one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.comments import MAX_REASON, CommentCommand, parse_comment, split_duration

HOLD = CommentCommand("hold")
LIFT = CommentCommand("lift")
ALL = CommentCommand("lift", target="all")


def hold(reason: str = "", duration: timedelta | None = None) -> CommentCommand:
    return CommentCommand("hold", reason=reason, duration=duration)


def lift(target: str | None = None, reason: str = "") -> CommentCommand:
    return CommentCommand("lift", reason=reason, target=target)


ROWS: list[tuple[str, str, list[CommentCommand]]] = [
    # --- plain commands
    ("bare hold", "/hold", [HOLD]),
    ("hold with reason", "/hold waiting for DB migration", [hold("waiting for DB migration")]),
    ("timed hold", "/hold for 2h waiting on infra", [hold("waiting on infra", timedelta(hours=2))]),
    ("timed hold without reason", "/hold for 30m", [hold("", timedelta(minutes=30))]),
    ("compound duration", "/hold for 1d12h release", [hold("release", timedelta(hours=36))]),
    ("duration written in words", "/hold for 1d 12h release", [hold("release", timedelta(hours=36))]),
    ("for without a duration is reason", "/hold for the release", [hold("for the release")]),
    ("for with an invalid duration", "/hold for 2x reasons", [hold("for 2x reasons")]),
    ("over 90 days is not a duration", "/hold for 100d ages", [hold("for 100d ages")]),
    ("zero is not a duration", "/hold for 0h now", [hold("for 0h now")]),
    ("bare for", "/hold for", [hold("for")]),
    ("for in the middle of the reason", "/hold waiting for 2h", [hold("waiting for 2h")]),
    ("cancel", "/hold cancel", [LIFT]),
    ("cancel upper case", "/HOLD CANCEL", [LIFT]),
    ("unhold", "/unhold", [LIFT]),
    ("remove-hold", "/remove-hold", [LIFT]),
    ("unhold a user", "/unhold @alice", [lift("alice")]),
    ("unhold a user keeps case", "/unhold @Alice-Smith", [lift("Alice-Smith")]),
    ("remove-hold a user", "/remove-hold @bob", [lift("bob")]),
    ("unhold all", "/unhold all", [ALL]),
    ("unhold ALL", "/Unhold ALL", [ALL]),
    ("unhold @all reads as all", "/unhold @all", [ALL]),
    # --- case, spacing, line ends
    ("command word case-insensitive", "/Hold Deploy first", [hold("Deploy first")]),
    ("leading spaces allowed (not in Prow: fails closed)", "   /hold", [HOLD]),
    ("one leading space", " /hold", [HOLD]),
    ("leading spaces before a lift", "  /unhold done", [lift(reason="done")]),
    ("trailing spaces", "/hold   \t", [HOLD]),
    ("tab before the reason", "/hold\twait", [hold("wait")]),
    ("CRLF body", "LGTM\r\n/hold\r\nthanks\r\n", [HOLD]),
    ("CR-only body", "LGTM\r/hold cancel\r", [LIFT]),
    ("whitespace collapsed", "/hold   a    b  ", [hold("a b")]),
    ("in the middle of prose", "Looks good.\n/hold until QA signs off\nThanks!", [hold("until QA signs off")]),
    # --- look-alikes
    ("holdx is not a command", "/holdx", []),
    ("hold-foo is not a command", "/hold-foo", []),
    ("unholdx", "/unholdx", []),
    ("not at line start", "please /hold this", []),
    ("list item", "- /hold", []),
    ("cancellation is a reason", "/hold cancellation of the release", [hold("cancellation of the release")]),
    # --- lifts with a reason (Prow since May 2025): the first word after the command decides
    ("cancel with a reason (Prow)", "/hold cancel further review has happened",
     [lift(reason="further review has happened")]),
    ("cancel with Prow's whitespace", "/hold   cancel  further review has happened and I have whitespace",
     [lift(reason="further review has happened and I have whitespace")]),
    ("unhold with a reason (Prow)", "/unhold looks good now", [lift(reason="looks good now")]),
    ("remove-hold with a reason (Prow)", "/remove-hold ready", [lift(reason="ready")]),
    ("unhold with a tab before the reason", "/unhold\tthanks", [lift(reason="thanks")]),
    ("unhold a user with a reason", "/unhold @alice she is on leave", [lift("alice", "she is on leave")]),
    ("unhold a user, colon, reason", "/unhold @alice: done", [lift("alice", "done")]),
    ("unhold all with a reason", "/unhold all release is out", [lift("all", "release is out")]),
    ("remove-hold all with a reason", "/remove-hold ALL shipped", [lift("all", "shipped")]),
    ("cancel names a user too", "/hold cancel @bob reviewed", [lift("bob", "reviewed")]),
    ("cancel all", "/hold cancel all", [ALL]),
    ("a reason that mentions all later", "/unhold thanks all", [lift(reason="thanks all")]),
    ("a reason that mentions a user later", "/unhold thanks @alice", [lift(reason="thanks @alice")]),
    ("without @ a name is a reason", "/unhold alice", [lift(reason="alice")]),
    ("a reason with a duration's words", "/unhold for 2h", [lift(reason="for 2h")]),
    ("lift with reason beats a hold", "/hold wait\n/unhold done", [lift(reason="done")]),
    ("first own lift's reason counts", "/unhold one\n/hold cancel two", [lift(reason="one")]),
    ("unhold a bad login lifts nothing", "/unhold @-alice", []),
    ("unhold a bare @ lifts nothing", "/unhold @", []),
    ("cancel a bad login is not a hold", "/hold cancel @-x why", []),
    ("cancel glued to words is a hold", "/hold cancel-ish", [hold("cancel-ish")]),
    ("no slash", "hold", []),
    ("empty", "", []),
    ("double slash", "//hold", []),
    ("backslash", "\\/hold", []),
    # --- quotes, code and comments
    ("quoted", "> /hold", []),
    ("quoted with spaces", "  > /hold", []),
    ("nested quote", "> > /unhold", []),
    ("quoted then own command", "> /hold\n/unhold", [LIFT]),
    ("fenced code", "```\n/hold\n```", []),
    ("fenced code with language", "```bash\n/hold\n```\n", []),
    ("tilde fence", "~~~\n/hold\n~~~", []),
    ("tilde fence with language", "~~~ yaml\n/hold cancel\n~~~", []),
    ("longer closing fence", "````\n/hold\n``````\n/unhold", [LIFT]),
    ("shorter fence does not close", "````\n```\n/hold\n````", []),
    ("other fence char does not close", "```\n~~~\n/hold\n```", []),
    ("unclosed fence hides the rest", "```\n/hold", []),
    ("after a closed fence", "```\ncode\n```\n/hold after", [hold("after")]),
    ("indented fence", "  ```\n/hold\n  ```", []),
    ("indented code block", "    /hold", []),
    ("indented code after text and blank", "text\n\n    /hold", []),
    ("tab-indented code", "\t/hold", []),
    ("indented line continues a paragraph", "text\n    /hold lazily", [hold("lazily")]),
    ("inline code", "`/hold`", []),
    ("code span across lines", "run `\n/hold\n` to hold", []),
    ("double-backtick span across lines", "see ``\n/hold `x`\n`` here", []),
    ("unmatched backtick is literal", "a ` b\n/hold", [HOLD]),
    ("html comment", "<!-- /hold -->", []),
    ("multi-line html comment", "<!--\n/hold\n-->", []),
    ("html comment hides its lines only", "<!--\n/hold\n-->\n/hold now", [hold("now")]),
    ("unclosed html comment hides the rest", "<!-- template\n/hold", []),
    ("inline html comment in a reason", "/hold <!-- note --> because", [hold("because")]),
    ("html comment after a command", "/unhold @alice <!-- bot -->", [lift("alice")]),
    ("text after a comment does not start a line", "<!-- x -->/hold", []),
    ("text after a multi-line comment neither", "intro <!--\nx\n--> /hold", []),
    # --- precedence and multiple commands
    ("lift beats hold", "/hold\n/hold cancel", [LIFT]),
    ("lift beats hold in either order", "/unhold\n/hold because", [LIFT]),
    ("first hold wins", "/hold first\n/hold second", [hold("first")]),
    ("hold and lift another", "/hold mine\n/unhold @alice", [hold("mine"), lift("alice")]),
    ("same target once", "/unhold @alice\n/unhold @ALICE", [lift("alice")]),
    ("lift all beats own hold", "/hold\n/unhold all", [ALL]),
    ("lift own and lift all", "/unhold\n/unhold all", [LIFT, ALL]),
]


@pytest.mark.parametrize(("body", "expected"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_grammar(body: str, expected: list[CommentCommand]) -> None:
    assert parse_comment(body) == expected


def test_table_is_adversarial_enough() -> None:
    assert len(ROWS) >= 40
    assert sum(1 for _, _, expected in ROWS if not expected) >= 20


def test_reason_is_capped() -> None:
    [command] = parse_comment("/hold " + "word " * 100)
    assert len(command.reason) == MAX_REASON
    assert command.reason.endswith("…")
    [exact] = parse_comment("/hold " + "x" * MAX_REASON)
    assert exact.reason == "x" * MAX_REASON


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("for 2h x y", (timedelta(hours=2), "x y")),
        ("for 2h", (timedelta(hours=2), "")),
        ("FOR 1w x", (timedelta(weeks=1), "x")),
        ("for 1d 2h 3m 4s x", (timedelta(days=1, hours=2, minutes=3, seconds=4), "x")),
        ("for x", (None, "for x")),
        ("fortnight", (None, "fortnight")),
        ("  spaced  ", (None, "spaced")),
    ],
)
def test_split_duration(text: str, expected: tuple[timedelta | None, str]) -> None:
    assert split_duration(text) == expected
