"""Our messages speak only for us (issue 24 item 3): outside text escaped for Slack and Mattermost on the
final text of every message, and PR comments that start no line with a command or a mention we did not
write. The escaping rules as a table of adversarial rows, then end to end: a hold placed over the API
with a hostile reason reaching Slack's ``chat.postMessage`` (a stand-in for Slack's Web API), a
Mattermost incoming webhook and a ``response_url``; and the PR comments built from hook records,
reasons and status descriptions."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from core.comment_rules import Outcome
from core.escaping import ZWSP, for_github_comment, for_mattermost, for_slack
from core.feedback import decide
from core.incidents import comment
from core.tamper import held_pr_answer
from merge_hold.tokens import create as create_token
from state import room_holds
from tests.chat_support import (
    MATTERMOST_TOKEN,
    drain,
    dry_runtime,
    manage,
    response_catcher,
    slack_body,
    slack_headers,
)
from tests.e2e_support import Service
from tests.slack_standin import SlackStandIn
from tests.test_chat_slack import slack_app
from tests.test_freeze_e2e import REPO
from tests.test_notify import chat, fast, standin, svc  # noqa: F401  (fixtures)

EVIL = ("<!channel> merges are blocked until you re-authenticate: <https://evil.example/sso|https://github.com/login>"
        " & <@U0ADMIN> <!here> <!subteam^S1>")
"""The reproduction of the issue: a channel-wide mention and a disguised link, as a hold's reason."""
MM_EVIL = "@channel @all @here, @dana: [https://github.com/login](https://evil.example/sso) ![x](https://e.x/p.png)"


@pytest.mark.parametrize(("text", "slack"), [
    (EVIL, "&lt;!channel&gt; merges are blocked until you re-authenticate: "
           "&lt;https://evil.example/sso|https://github.com/login&gt; &amp; &lt;@U0ADMIN&gt; &lt;!here&gt; "
           "&lt;!subteam^S1&gt;"),
    ("a &lt; b", "a &amp;lt; b"),  # an entity typed by someone shows as typed, never turns into a control
    ("plain :no_entry: `code` *bold*", "plain :no_entry: `code` *bold*"),
])
def test_slack_text(text: str, slack: str) -> None:
    assert for_slack(text) == slack
    assert not re.search(r"<[!@#]|<https?:", for_slack(text))


@pytest.mark.parametrize(("text", "mattermost"), [
    (MM_EVIL, f"@{ZWSP}channel @{ZWSP}all @{ZWSP}here, @{ZWSP}dana: [https://github.com/login]{ZWSP}"
              f"(https://evil.example/sso) ![x]{ZWSP}(https://e.x/p.png)"),
    ("[label][ref]\n[ref]: https://evil.example", f"[label]{ZWSP}[ref]\n[ref]{ZWSP}: https://evil.example"),
    ("x/@channel (@all)", f"x/@{ZWSP}channel (@{ZWSP}all)"),
    ("acme/widgets@release/* ops@example.com", "acme/widgets@release/* ops@example.com"),  # no mentions
])
def test_mattermost_text(text: str, mattermost: str) -> None:
    assert for_mattermost(text) == mattermost


@pytest.mark.parametrize(("text", "mentions", "expected"), [
    ("ok\n/approve\n  /lgtm\n\t/hold cancel", (), "ok\n\\/approve\n  \\/lgtm\n\t\\/hold cancel"),
    ("a\r/approve\u2028/lgtm", (), "a\n\\/approve\n\\/lgtm"),  # every line break a bot may split on
    ("@alice @acme/core-team ping @Bob x@y.z", ("alice", "bob"),
     f"@alice @{ZWSP}acme/core-team ping @Bob x@y.z"),
    ("@acme/owners: please merge", (), f"@{ZWSP}acme/owners: please merge"),
    ("@dependabot[bot] merged it; @all", ("dependabot[bot]",), f"@dependabot[bot] merged it; @{ZWSP}all"),
])
def test_github_comment_text(text: str, mentions: tuple[str, ...], expected: str) -> None:
    assert for_github_comment(text, mentions) == expected


# --- end to end: chat ------------------------------------------------------------------------------


def test_a_hostile_reason_reaches_slack_escaped(svc: Service, standin: SlackStandIn, tmp_path: Path) -> None:  # noqa: F811
    """Row 4: a hold placed over the API with the issue's reason is posted to a subscribed Slack channel
    with every control character escaped: no channel-wide mention, no disguised link."""
    chat(svc, "subscribe acme/widgets")
    token = create_token(tmp_path / "tokens", "pipeline", "hold")
    placed = svc.client.post("/api/v1/holds", json={"target": REPO, "reason": EVIL},
                             headers={"Authorization": f"Bearer {token}"})
    assert placed.status_code == 201
    drain(svc.rt)
    (call,) = standin.wait(1)
    assert call["text"] == f":no_entry: token:pipeline held {REPO}: {for_slack(EVIL)}"
    assert "<" not in call["text"] and ">" not in call["text"]


def test_the_answer_in_the_channel_is_escaped(redis_client: Redis, redis_url: str, tmp_path: Path) -> None:
    """A `/holds` listing through the command's response_url shows a dashboard or API hold's reason, and
    the web tier's own answer quotes what was typed: both escaped for Slack."""
    app = slack_app(redis_client, redis_url, tmp_path)
    rt = dry_runtime(redis_client, redis_url, slack_teams=((("T0MERGE1", ("acme",)),)))
    manage(redis_client, REPO, {1: "main"})
    room_holds.place_hold(redis_client, REPO, holder="token:pipeline", holder_id="api:pipeline", reason=EVIL,
                          origin="api:pipeline", now=datetime.now(UTC))
    with response_catcher() as catcher:
        body = slack_body("/holds", REPO, response_url=catcher.url)
        client = app.test_client()
        client.post("/chat/slack", data=body, headers=slack_headers(body))
        drain(rt)
        (said,) = catcher.wait(1)
        assert for_slack(EVIL) in said["text"] and "<!channel>" not in said["text"]
        typed = slack_body("/hold", f"{REPO}#1 <!here> look", response_url=catcher.url)
        answer = client.post("/chat/slack", data=typed, headers=slack_headers(typed)).get_json()
        assert answer is not None and "&lt;!here&gt; look" in answer["text"] and "<!here>" not in answer["text"]


def test_a_hostile_reason_reaches_mattermost_escaped(redis_client: Redis, redis_url: str, tmp_path: Path,
                                                     fast: None) -> None:  # noqa: F811
    from tests.test_chat_mattermost import FORM, MM_TEAM, mm_app, mm_body

    headers = {"Content-Type": FORM, "Authorization": f"Token {MATTERMOST_TOKEN}"}
    with response_catcher() as hook:
        server = hook.url.split("/hooks/", 1)[0]
        client = mm_app(redis_client, redis_url, tmp_path, mattermost_url=server).test_client()
        reply = client.post("/chat/mattermost", data=mm_body(f"subscribe acme/widgets {hook.url}"), headers=headers)
        assert "now hears about acme/widgets" in reply.get_json()["text"]
        rt = dry_runtime(redis_client, redis_url, mattermost_url=server)
        room_holds.place_hold(redis_client, "acme/widgets", holder="dana", holder_id=f"mattermost:{MM_TEAM}:u",
                              reason=MM_EVIL, origin="chat", now=datetime.now(UTC))
        drain(rt)
        assert hook.wait(1) == [{"text": f":no_entry: dana held acme/widgets: {for_mattermost(MM_EVIL)}"}]


# --- PR comments -----------------------------------------------------------------------------------

COMMANDS = re.compile(r"^\s*[/@]", re.MULTILINE)


def _starts(text: str) -> list[str]:
    return [line for line in text.splitlines() if COMMANDS.match(line)]


def test_the_incident_comment_is_checked_on_its_final_text() -> None:
    """Row 6: hook records with newlines put other bots' commands and a team mention at the start of lines
    of our comment; checked on the joined text, none starts a line and the team is not mentioned."""
    records = [{"decision": "deny", "reason": "held\n/approve\n/lgtm"},
               {"decision": "deny\n/hold cancel", "code": "x"},
               {"decision": "allow", "reason": "ok\r\n@acme/core-team please merge"}]
    text = comment({"id": "acme/widgets#5", "repo": "acme/widgets", "number": 5, "merged_by": "ada",
                    "reasons": ["it was held by @alice (wait\n/approve)"], "last_status": {"creator": "mallory"},
                    "holds": [{"holder": "alice", "source": "comment", "reason": "wait"}],
                    "hook_records": records}, "https://mh.example/")
    assert _starts(text) == ["@alice: your hold was not enforced."]
    assert "@acme/core-team" not in text and f"@{ZWSP}acme/core-team" in text
    assert "@ada merged it" in text  # the people it means to tell are still told


def test_replies_and_answers_mention_only_whom_they_mean() -> None:
    outcome = Outcome("held", "bob", "bob", "x", "@bob held this PR: ping @acme/everyone")
    answer = decide("/hold ping @acme/everyone", [outcome], mode="comments", before=None, at=datetime.now(UTC))
    assert answer.reply is not None and f"@{ZWSP}acme/everyone" in answer.reply and "@bob held" in answer.reply
    text = held_pr_answer("main\n/approve", "mallory", "protection removed\n@acme/admins", "")
    assert _starts(text) == [] and "(changed by @mallory)" in text and f"@{ZWSP}acme/admins" in text
