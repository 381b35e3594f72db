"""Prow's own hold-plugin test table, replayed against merge-hold end to end (issue 16 item 1).

kubernetes-sigs/prow `pkg/plugins/hold/hold_test.go` (`TestHandle`, as of commit 3d77d2c of May 2025,
"Allow reason with /unhold too") describes the plugin by its label: `hasLabel` (held before the
comment), `shouldLabel` (becomes held), `shouldUnlabel` (becomes free), `isPR`. Each of its 17 rows is
replayed here, by name and body, through signed webhooks, real Redis and rq and the GitHub emulator,
on a repo with `shared_holds: true` (Prow's one shared hold): "held before" is @carol's earlier `/hold`,
the comment is @bob's (write access). Then 14 rows of our own in the same terms: the lift-with-a-reason
forms the issue names, the first-word rule of `@login` and `all`, and the deliberate differences from
Prow (each marked, each erring toward held or toward doing nothing). Prow's table stores no reasons;
where a row has one, the audit record and the PR page's history line must carry it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from core import keys
from merge_hold import samples
from merge_hold.tokens import create as create_token
from tests.e2e_support import Service, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.webapp_support import post_form

REPO = "acme/widgets"
T0 = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
SECRET_KEY = "prow-table-key"


@dataclass(frozen=True)
class Row:
    name: str
    body: str
    held_before: bool  # Prow's hasLabel
    becomes_held: bool  # shouldLabel
    becomes_free: bool  # shouldUnlabel
    is_pr: bool = True
    reason: str = ""
    """The lift's reason the audit record and the history line keep."""
    differs: str = ""
    """Why merge-hold deliberately does not do what Prow does (empty: it agrees)."""


PROW = [  # hold_test.go's TestHandle, in its order, with its names
    Row("nothing to do", "noise", False, False, False),
    Row("quoted hold in a reply", "> /hold", False, False, False),
    Row("requested hold", "/hold", False, True, False),
    Row("requested hold with reason", "/hold for further review", False, True, False),
    Row("requested hold, Label already exists", "/hold", True, False, False),
    Row("requested hold with reason, Label already exists", "/hold for further review", True, False, False),
    Row("requested hold cancel", "/hold cancel", True, False, True),
    Row("requested hold cancel with a reason", "/hold   cancel  further review has happened and I have whitespace",
        True, False, True, reason="further review has happened and I have whitespace"),
    Row("requested hold cancel, Label already gone", "/hold cancel", False, False, False),
    Row("requested unhold", "/unhold", True, False, True),
    Row("requested unhold with a reason", "/unhold   further review has happened and I have whitespace",
        True, False, True, reason="further review has happened and I have whitespace"),
    Row("requested unhold, Label already gone", "/unhold", False, False, False),
    Row("requested hold for issues", "/hold", False, False, False, is_pr=False),
    Row("requested unhold for issues", "/unhold", True, False, False, is_pr=False),
    Row("requested remove hold label", "/remove-hold", True, False, True),
    Row("requested remove hold label with whitespaces in between", "/remove -    hold", False, False, False),
    Row("requested remove hold label with no separating hyphen", "/removehold", False, False, False),
]

OURS = [  # the same terms, merge-hold's own rows
    Row("hold cancel with the issue's reason", "/hold cancel further review has happened", True, False, True,
        reason="further review has happened"),
    Row("unhold with a reason", "/unhold looks good now", True, False, True, reason="looks good now"),
    Row("remove-hold with a reason", "/remove-hold ready", True, False, True, reason="ready"),
    Row("remove-hold with a reason, nothing held", "/remove-hold ready", False, False, False, reason="ready"),
    Row("unhold @login with a reason", "/unhold @carol she is on leave", True, False, True, reason="she is on leave"),
    Row("unhold all with a reason", "/unhold all release is out", True, False, True, reason="release is out"),
    Row("lift beats hold in one comment", "/hold\n/hold cancel done", True, False, True, reason="done"),
    Row("upper case cancel", "/HOLD CANCEL", True, False, True),
    Row("quoted unhold", "> /unhold", True, False, False),
    Row("hold on the second line", "LGTM\n/hold until QA signs off", False, True, False),
    Row("a hold's reason starting with cancel-", "/hold cancel-ish", False, True, False),
    Row("leading space before /hold", " /hold", False, True, False,
        differs="Prow reads only column 0; a space-indented command still holds (fails closed)"),
    Row("hold in a fenced code block", "```\n/hold\n```", False, False, False,
        differs="Prow's regex sees the line; GitHub renders it as code, which documents, never commands"),
    Row("unhold inside an HTML comment", "<!--\n/unhold\n-->", True, False, False,
        differs="Prow's regex sees the line; an HTML comment is invisible on the PR, so it lifts nothing"),
]

ROWS = PROW + OURS


def test_the_table_is_prows_and_complete() -> None:
    assert len(PROW) == 17 and len(ROWS) == 31
    assert len({r.name for r in ROWS}) == len(ROWS)
    assert sum(1 for r in ROWS if r.differs) == 3, "every deliberate difference is a documented row"


@pytest.fixture(scope="module")
def numbers() -> dict[str, int]:
    return {row.name: 100 + index for index, row in enumerate(ROWS)}


@pytest.fixture()
def svc(github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path) -> Iterator[Service]:
    emu = github_emulator
    emu.add_installation(3, "acme")
    emu.add_repo(REPO, installation_id=3)
    emu.set_file(REPO, ".github/merge-hold.yml", "shared_holds: true\nfeedback: comments\n")
    for login in ("bob", "carol"):
        emu.set_permission(REPO, login, "write")
    service = Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug,
                                             secret_key=SECRET_KEY, api_tokens_file=str(tmp_path / "tokens")))
    yield service


def comment(svc: Service, number: int, body: str, *, by: str, at: datetime, is_pr: bool = True) -> None:
    payload = samples.issue_comment_event(REPO, number, body=body, commenter=by, at=at, installation_id=3,
                                          comment_id=int(at.timestamp()) * 1000 + number)
    if not is_pr:
        del payload["issue"]["pull_request"]
    assert svc.deliver("issue_comment", payload).status_code == 202


def held(svc: Service, number: int) -> bool | None:
    verdict = svc.verdict(REPO, number)
    return None if verdict is None else bool(verdict.get("held"))


def test_prow_rows_replayed_with_shared_holds(svc: Service, github_emulator: GitHubEmulator,
                                              numbers: dict[str, int]) -> None:
    emu = github_emulator
    for row in ROWS:
        number = numbers[row.name]
        if row.is_pr:
            emu.add_pull(REPO, number, head_sha=samples.head_sha(REPO, number), head_ref=f"f{number}")
            svc.deliver("pull_request", samples.pull_request_event(REPO, number, at=T0, installation_id=3))
        if row.held_before and row.is_pr:
            comment(svc, number, "/hold", by="carol", at=T0 + timedelta(seconds=1))
    svc.drain()
    before = {row.name: held(svc, numbers[row.name]) for row in ROWS}
    for row in ROWS:
        comment(svc, numbers[row.name], row.body, by="bob", at=T0 + timedelta(minutes=1), is_pr=row.is_pr)
    svc.drain()

    wrong = []
    for row in ROWS:
        number = numbers[row.name]
        after = held(svc, number)
        if not row.is_pr:
            expected = None  # a comment on an issue: nothing recorded, nothing posted
        else:
            expected = row.becomes_held or (row.held_before and not row.becomes_free)
            assert before[row.name] is row.held_before, row.name
        if after is not expected:
            wrong.append(f"{row.name}: held={after}, expected {expected}")
        status = emu.latest_status(REPO, samples.head_sha(REPO, number)) if row.is_pr else None
        if status is not None and status["state"] != ("failure" if expected else "success"):
            wrong.append(f"{row.name}: status {status['state']}")
    assert not wrong, "\n".join(wrong)


def test_lift_reasons_reach_the_audit_record_and_the_history_line(svc: Service, github_emulator: GitHubEmulator,
                                                                  numbers: dict[str, int]) -> None:
    emu = github_emulator
    reasoned = [row for row in ROWS if row.reason and row.held_before]
    for row in reasoned:
        number = numbers[row.name]
        emu.add_pull(REPO, number, head_sha=samples.head_sha(REPO, number), head_ref=f"f{number}")
        svc.deliver("pull_request", samples.pull_request_event(REPO, number, at=T0, installation_id=3))
        comment(svc, number, "/hold", by="carol", at=T0 + timedelta(seconds=1))
        comment(svc, number, row.body, by="bob", at=T0 + timedelta(minutes=1))
    svc.drain()
    entries = cast(list[tuple[bytes, dict[bytes, bytes]]], svc.redis.xrange(keys.history(REPO)))
    audit = [json.loads(fields[b"data"]) for _id, fields in entries if fields[b"event"].startswith(b"hold.lifted")]
    token = create_token(Path(str(svc.settings.api_tokens_file)), "prow-table", "admin")
    assert post_form(svc.client, "/login", {"token": token}).status_code == 302
    for row in reasoned:
        number = numbers[row.name]
        records = [a for a in audit if a.get("number") == number and a.get("actor") == "bob"]
        assert [r["reason"] for r in records] == [row.reason], row.name
        page = svc.client.get(f"/{REPO}/pull/{number}").get_data(as_text=True)
        assert f"@bob lifted the hold: {row.reason}" in page, row.name
