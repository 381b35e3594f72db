"""The chat grammar and its targets, row by row (Slack and Mattermost slash commands)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs

import pytest

from core.chat_grammar import ChatCommand, ChatUsageError, parse_chat
from core.scopes import scope_applies
from core.targets import TargetError, parse_target
from tests.conftest import FIXTURES

TARGETS: list[tuple[str, str]] = [
    ("acme/widgets#12", "acme/widgets#12"),
    ("Acme/Widgets#12", "acme/widgets#12"),
    ("acme/widgets", "acme/widgets"),
    ("acme/my.repo_v2-x", "acme/my.repo_v2-x"),
    ("acme/widgets@release/*", "acme/widgets@release/*"),
    ("acme/widgets@Release-2.x", "acme/widgets@Release-2.x"),
    ("acme/widgets@[a-z]*", "acme/widgets@[a-z]*"),
    ("acme", "acme"),
    ("alice_acme", "alice_acme"),
    ("a" * 39, "a" * 39),
    ("https://github.com/acme/widgets/pull/12", "acme/widgets#12"),
    ("http://github.com/acme/widgets/pull/12/", "acme/widgets#12"),
    ("https://github.com/acme/widgets/pull/12/files?w=1#diff", "acme/widgets#12"),
    ("https://github.com/acme/widgets/pull/12#issuecomment-1", "acme/widgets#12"),
    ("https://ghe.corp.example/acme/widgets/pull/7", "acme/widgets#7"),
    ("https://ghe.corp.example:8443/prefix/acme/widgets/pull/7", "acme/widgets#7"),
    ("https://github.com/acme/widgets", "acme/widgets"),
    ("https://github.com/acme/widgets.git", "acme/widgets"),
    ("https://github.com/acme", "acme"),
    ("https://github.com/orgs/acme", "acme"),
    ("<https://github.com/acme/widgets/pull/12|acme/widgets#12>", "acme/widgets#12"),
    ("<https://github.com/acme/widgets/pull/12>", "acme/widgets#12"),
]

BAD_TARGETS: list[str] = [
    "", "acme/", "/widgets", "acme/widgets#", "acme/widgets#0", "acme/widgets#012", "acme/widgets#x",
    "acme#12", "acme/wid gets", "acme/widgets/extra", "acme/..", "acme/.", "-acme", "a" * 40,
    "acme/widgets@", "acme/widgets@a..b", "acme/widgets@/x", "acme/widgets@x/", "acme/widgets@a:b",
    "acme/widgets@a b", "acme@main", "acme/" + "r" * 101, "ac!me", "ac\nme",
    "https://github.com/acme/widgets/issues/12", "https://github.com/acme/widgets/pull/x",
    "https://github.com/acme/widgets/tree/main/src", "https://", "<https://github.com/>",
]


@pytest.mark.parametrize(("text", "scope"), TARGETS)
def test_targets(text: str, scope: str) -> None:
    assert parse_target(text) == scope


@pytest.mark.parametrize("text", BAD_TARGETS)
def test_bad_targets(text: str) -> None:
    with pytest.raises(TargetError):
        parse_target(text)


def test_scopes_apply_as_core_scopes_read_them() -> None:
    assert scope_applies(parse_target("https://github.com/Acme/Widgets/pull/12"), "acme/widgets", 12, "main")
    assert scope_applies(parse_target("acme/widgets@release/*"), "Acme/Widgets", 3, "release/2.0")
    assert not scope_applies(parse_target("acme/widgets@release/*"), "acme/widgets", 3, "main")
    assert scope_applies(parse_target("ACME"), "acme/widgets", 3, "main")


H2 = timedelta(hours=2)
OK: list[tuple[str, str, ChatCommand]] = [
    ("/hold", "acme/widgets reason here", ChatCommand("hold", "acme/widgets", "reason here")),
    ("/hold", "acme/widgets for 2h db migration", ChatCommand("hold", "acme/widgets", "db migration", H2)),
    ("/hold", "acme/widgets for 1d 12h x", ChatCommand("hold", "acme/widgets", "x", timedelta(hours=36))),
    ("/hold", "acme/widgets for the release", ChatCommand("hold", "acme/widgets", "for the release")),
    ("/hold", "acme waiting for infra", ChatCommand("hold", "acme", "waiting for infra")),
    ("/hold", "acme/widgets@release/* code freeze", ChatCommand("hold", "acme/widgets@release/*", "code freeze")),
    ("/hold", "  acme/widgets#12   needs  QA  ", ChatCommand("hold", "acme/widgets#12", "needs QA")),
    ("/HOLD", "acme/widgets x", ChatCommand("hold", "acme/widgets", "x")),
    ("hold", "acme/widgets x", ChatCommand("hold", "acme/widgets", "x")),
    ("/hold", "<https://github.com/acme/widgets/pull/12|acme/widgets#12> see <https://status.example|status>",
     ChatCommand("hold", "acme/widgets#12", "see https://status.example")),
    ("/hold", "acme/widgets a &lt; b &amp;&amp; <@U123|bob> says so <!here>",
     ChatCommand("hold", "acme/widgets", "a < b && @bob says so here")),
    ("/hold", "acme/widgets " + "x" * 300, ChatCommand("hold", "acme/widgets", "x" * 199 + "…")),
    ("/hold", "exempt acme/widgets#12 hotfix", ChatCommand("exempt", "acme/widgets#12", "hotfix")),
    ("/hold", "EXEMPT acme/widgets#12 for 2h hotfix", ChatCommand("exempt", "acme/widgets#12", "hotfix", H2)),
    ("/hold", "https://github.com/exempt customers first", ChatCommand("hold", "exempt", "customers first")),
    ("/unhold", "acme/widgets", ChatCommand("unhold", "acme/widgets")),
    ("/unhold", "exempt acme/widgets#12", ChatCommand("unexempt", "acme/widgets#12")),
    ("/holds", "", ChatCommand("list")),
    ("/holds", "acme", ChatCommand("list", "acme")),
    ("/holds", "https://github.com/acme/widgets/pull/3", ChatCommand("list", "acme/widgets#3")),
    ("/merge-hold", "hold acme/widgets x", ChatCommand("hold", "acme/widgets", "x")),
    ("/merge-hold", "unhold  acme/widgets", ChatCommand("unhold", "acme/widgets")),
    ("/merge-hold", "holds", ChatCommand("list")),
    ("/hold", "link", ChatCommand("link")),
    ("/hold", "  LINK ", ChatCommand("link")),
    ("/hold", "unlink", ChatCommand("unlink")),
    ("/merge-hold", "hold link", ChatCommand("link")),
    ("/hold", "https://github.com/link release week", ChatCommand("hold", "link", "release week")),
    ("/unhold", "link", ChatCommand("unhold", "link")),  # only /hold has the keyword: this lifts org `link`
    ("/holds", "link", ChatCommand("list", "link")),
    # An exemption covers the PR's current head; --sticky (before or right after the target) every new one.
    ("/hold", "exempt --sticky acme/widgets#12 hotfix",
     ChatCommand("exempt", "acme/widgets#12", "hotfix", sticky=True)),
    ("/hold", "exempt acme/widgets#12 --STICKY for 2h hotfix",
     ChatCommand("exempt", "acme/widgets#12", "hotfix", H2, sticky=True)),
    ("/hold", "exempt acme/widgets#12 hotfix --sticky", ChatCommand("exempt", "acme/widgets#12", "hotfix --sticky")),
    # paths: scopes a hold to the PRs changing matching files, before or after the duration.
    ("/hold", "acme/widgets paths:db/migrations/** schema change in flight",
     ChatCommand("hold", "acme/widgets", "schema change in flight", paths=("db/migrations/**",))),
    ("/hold", "acme/widgets for 2h paths:db/**,!db/README.md release",
     ChatCommand("hold", "acme/widgets", "release", H2, paths=("db/**", "!db/README.md"))),
    ("/hold", "acme paths:db/** PATHS:*.sql for 2h x", ChatCommand("hold", "acme", "x", H2, paths=("db/**", "*.sql"))),
    ("/hold", "acme/widgets a note about paths:db/** in the reason",
     ChatCommand("hold", "acme/widgets", "a note about paths:db/** in the reason")),
]


@pytest.mark.parametrize(("command", "text", "expected"), OK)
def test_commands(command: str, text: str, expected: ChatCommand) -> None:
    assert parse_chat(command, text) == expected


ERRORS: list[tuple[str, str, str, str]] = [
    # (command, text, in the message, in the usage)
    ("/hold", "", "", "/hold TARGET [for DURATION] REASON"),
    ("/hold", "help", "", "/hold exempt [--sticky] owner/repo#12"),
    ("/hold", "", "", "/unhold TARGET: lift the hold; /unhold exempt owner/repo#12: end an exemption"),
    ("/hold", "exempt", "which PR", "/unhold exempt owner/repo#12"),
    ("/hold", "acme/widgets", "needs a reason", "a reason is required"),
    ("/hold", "acme/widgets for 2h", "needs a reason", "/hold TARGET"),
    ("/hold", "acme/widgets   ", "needs a reason", "/hold TARGET"),
    ("/hold", "acme/widgets for 100d long", "at most 90d", "DURATION"),
    ("/hold", "acme/widgets for 0h x", "at most 90d", "DURATION"),
    ("/hold", "acme/widgets#0 x", "not a pull request number", "TARGET:"),
    ("/hold", "acme/wid!gets x", "not a GitHub repository name", "TARGET:"),
    ("/hold", "-acme x", "not a GitHub user or organisation name", "TARGET:"),
    ("/hold", "exempt", "which PR", "/hold exempt"),
    ("/hold", "exempt acme/widgets hotfix", "exempt takes one PR", "/hold exempt"),
    ("/hold", "exempt acme/widgets#12", "an exemption needs a reason", "/hold exempt"),
    ("/hold", "exempt acme/widgets#12 for 2h", "an exemption needs a reason", "/hold exempt"),
    ("/hold", "exempt --sticky", "which PR", "/hold exempt [--sticky]"),
    ("/hold", "exempt --sticky acme/widgets hotfix", "exempt takes one PR", "/hold exempt"),
    ("/hold", "acme/widgets --sticky hotfix", "--sticky is for exemptions", "/hold exempt [--sticky]"),
    ("/unhold", "exempt --sticky acme/widgets#12", "unexpected '--sticky'", "/unhold exempt"),
    ("/hold", "exempt acme/widgets#12 paths:db/** x", "not an exemption", "paths:"),
    ("/hold", "acme/widgets paths:!docs/** x", "only `!` excludes match nothing", "paths:"),
    ("/hold", "acme/widgets paths:,, x", "at least one pattern", "paths:"),
    ("/hold", "acme/widgets paths:#x y", "would be a comment", "paths:"),
    ("/hold", "acme/widgets paths:db/**", "a hold needs a reason", "paths:"),
    ("/unhold", "", "", "/unhold TARGET"),
    ("/unhold", "exempt acme", "exempt takes one PR", "/unhold exempt"),
    ("/unhold", "acme widgets", "takes one target", "/unhold TARGET"),
    ("/unhold", "exempt acme/widgets#1 x", "takes one target", "/unhold exempt"),
    ("/unhold", "ac!me", "not a GitHub user", "/unhold TARGET"),
    ("/holds", "acme other", "at most one target", "/holds [TARGET]"),
    ("/holds", "acme/", "not a GitHub repository name", "/holds [TARGET]"),
    ("/hold", "link acme", "link takes nothing after it; unexpected 'acme'", "/hold link"),
    ("/hold", "unlink @dana", "unlink takes nothing after it", "/hold unlink"),
    ("/hold", "link release week", "link takes nothing after it", "/hold TARGET"),
    ("/mh", "", "", "/mh hold TARGET"),
    ("/mh", "help", "", "/mh hold link"),
    ("/mh", "hold", "", "/mh unhold exempt owner/repo#12: end an exemption; /mh holds [TARGET]"),
    ("/mh", "freeze acme x", "unknown command 'freeze'", "/mh unhold TARGET"),
    ("/mh", "hold acme", "needs a reason", "/mh hold TARGET"),
]


@pytest.mark.parametrize(("command", "text", "message", "usage"), ERRORS)
def test_usage_errors(command: str, text: str, message: str, usage: str) -> None:
    result = parse_chat(command, text)
    assert isinstance(result, ChatUsageError)
    assert message in result.message and (message or result.message == "")
    assert usage in result.usage and result.usage.startswith("Usage:")
    assert result.text.endswith(result.usage)


def test_fixture_bodies_parse_without_raising() -> None:
    """Real form bodies from the Slack and Mattermost docs: whatever their text, never an exception."""
    import json

    bodies = json.loads((FIXTURES / "chat" / "slack-slash-command-bodies.json").read_text())
    for body in bodies.values():
        form = body if isinstance(body, dict) else {k: v[0] for k, v in parse_qs(body).items()}
        result = parse_chat(str(form.get("command", "/hold")), str(form.get("text", "")))
        assert isinstance(result, ChatCommand | ChatUsageError)
