"""Incidents end to end (issue 15 item 5): a PR merged while merge-hold held it — by an admin past the
failing check, after its status was forged, or without any status of ours — is recorded once (however
often GitHub delivers the `closed` event), told to the subscribed channel, answered with one comment on
the PR naming the holders, and shown at `/incidents`, `/api/v1/incidents`, in `merge-hold doctor` and in
`/metrics`. Merges merge-hold did not hold are not incidents. Signed webhooks in, a real rq worker, real
Redis, the GitHub emulator."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from merge_hold import doctor
from merge_hold.tokens import create as create_token
from tests.emulator import GitHubEmulator
from tests.watch_support import (  # fast_chat: a fixture
    ADMIN,
    HEAD5,
    HEAD6,
    INSTALLATION,
    METRICS_TOKEN,
    REPO,
    Watched,
    closed,
    comment,
    fast_chat,  # noqa: F401
    watched,
)

pytestmark = pytest.mark.usefixtures("fast_chat")

HEAD8 = "8" * 40
COMMENT = "this pull request was merged while it should not have been"


def _merge(number: int, head: str, by: str) -> Callable[[Watched], dict[str, Any]]:
    def act(w: Watched) -> dict[str, Any]:
        return closed(number, head, by=by, at=w.emu.merge_pull(REPO, number, by=by))

    return act


def _forged_then_merged(w: Watched) -> dict[str, Any]:
    w.emu.add_status(REPO, HEAD5, state="success", context="merge-hold", description="looks fine", creator="eve")
    w.deliver("status", {"sha": HEAD5, "context": "merge-hold", "state": "success", "description": "looks fine",
                         "repository": {"full_name": REPO}, "installation": {"id": INSTALLATION},
                         "sender": {"login": "eve"}, "id": 1, "name": REPO, "target_url": None})
    return _merge(5, HEAD5, "eve")(w)


def _lifted_then_merged(w: Watched) -> dict[str, Any]:
    w.deliver("issue_comment", comment(5, "/hold cancel", user="alice", comment_id=56, at="2026-01-05T11:00:00Z"))
    assert (w.emu.latest_status(REPO, HEAD5) or {}).get("state") == "success"
    return _merge(5, HEAD5, "alice")(w)


def _unseen(state: str | None, creator: str) -> Callable[[Watched], dict[str, Any]]:
    """#8, a PR merge-hold never heard of (opened while it was away), with this status on its head."""
    def act(w: Watched) -> dict[str, Any]:
        w.emu.add_pull(REPO, 8, head_sha=HEAD8, head_ref="while-away")
        if state is not None:
            w.emu.add_status(REPO, HEAD8, state=state, context="merge-hold", description="x",
                             creator=creator.format(bot=w.emu.bot_login))
        return closed(8, HEAD8, by="bob", head_ref="while-away", at=w.emu.merge_pull(REPO, 8, by="bob"))

    return act


def _hook_blocked_then_merged(w: Watched) -> dict[str, Any]:
    token = create_token(Path(str(w.svc.settings.api_tokens_file)), "laptop", "hook-events")
    record = {"repo": REPO, "pr": 5, "decision": "deny", "code": "held", "tool_name": "Bash",
              "reason": "acme/widgets#5 is held by @alice", "time": "2026-01-05T11:30:00Z"}
    answer = w.svc.client.post("/api/v1/hook-events", json={"events": [record]},
                               headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 202
    return _merge(5, HEAD5, ADMIN)(w)


@dataclass(frozen=True)
class Merged:
    name: str
    act: Callable[[Watched], dict[str, Any]]
    kinds: tuple[str, ...]
    """The incident's kinds; () when the merge is clean."""
    number: int = 5
    merged_by: str = ADMIN
    config: str | None = None


ROWS: list[Merged] = [
    Merged("held, merged by an admin past the failing check", _merge(5, HEAD5, ADMIN), ("held", "status")),
    Merged("held, status forged, then merged", _forged_then_merged, ("held", "status"), merged_by="eve"),
    Merged("held, the guard blocked an agent, then an admin merged", _hook_blocked_then_merged, ("held", "status")),
    Merged("unseen PR, a forged success on its head", _unseen("success", "eve"), ("forged",), number=8,
           merged_by="bob"),
    Merged("held, feedback off: recorded and told, not commented", _merge(5, HEAD5, ADMIN), ("held", "status"),
           config="feedback: off\n"),
    # Not incidents:
    Merged("free PR merged", _merge(6, HEAD6, "bob"), (), number=6, merged_by="bob"),
    Merged("hold lifted, then merged", _lifted_then_merged, (), merged_by="alice"),
    Merged("held PR closed without merging", lambda w: closed(5, HEAD5, by="alice", merged=False), ()),
    Merged("unseen PR carrying merge-hold's own success", _unseen("success", "{bot}"), (), number=8,
           merged_by="bob"),
    Merged("unseen PR, no merge-hold status at all", _unseen(None, ""), (), number=8, merged_by="bob"),
    Merged("unseen PR, a failure on its head (state lost since)", _unseen("failure", "{bot}"), ("status",), number=8,
           merged_by="bob"),
]


def metric(w: Watched, line: str) -> bool:
    body = w.svc.client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).get_data(as_text=True)
    return line in body.splitlines()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_a_merge_while_held_is_recorded_told_answered_once_and_shown(
        row: Merged, github_emulator: GitHubEmulator, redis_client: Any, redis_url: str, tmp_path: Path) -> None:
    with watched(github_emulator, redis_url, tmp_path, config=row.config) as w:
        payload = row.act(w)
        w.deliver("pull_request", payload)
        w.deliver("pull_request", payload)  # GitHub redelivers it under a new GUID
        w.deliver("pull_request", payload)

        client = w.dashboard()
        api = client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {w.token}"}).get_json()
        page = client.get("/incidents").get_data(as_text=True)
        checks = {c.name: c for c in doctor.run(w.svc.settings)}
        comments = [c for c in w.bot_comments(row.number) if COMMENT in c]
        ident = f"{REPO}#{row.number}"
        if not row.kinds:
            assert api["incidents"] == []
            assert comments == [] and ":rotating_light:" not in w.chat()
            assert ident not in page and checks["incidents"].detail == "none recorded"
            assert metric(w, 'merge_hold_incidents_total{kind="held"} 0.0')
            return

        (incident,) = api["incidents"]
        assert (incident["id"], incident["merged_by"], tuple(incident["kinds"])) == (ident, row.merged_by, row.kinds)
        assert incident["head_sha"] and incident["merged_at"]
        if "held" in row.kinds:
            assert [h["holder"] for h in incident["holds"]] == ["alice"]
            assert incident["last_status"]["state"] == "failure" and incident["last_status"]["ours"]
        # Told: the subscribed channel hears it once.
        w.slack.wait(2)
        told = [line for line in w.chat().splitlines() if line.startswith(f":rotating_light: {ident} was merged")]
        assert told == [f":rotating_light: {ident} was merged by @{row.merged_by} although {incident['reasons'][0]}"]
        # Answered once on the PR, naming the holders (not with feedback off).
        if row.config and "off" in row.config:
            assert comments == [] and incident["comment"] == "off"
        else:
            assert len(comments) == 1 and incident["comment"] == "posted"
            assert f"@{row.merged_by} merged it" in comments[0]
            assert ("@alice: your hold was not enforced" in comments[0]) is ("held" in row.kinds)
            assert not any(line.startswith("/") for line in comments[0].splitlines())
        # Shown: the dashboard, doctor, the metrics.
        assert f'id="{incident["anchor"]}"' in page and f"@{row.merged_by}" in page
        assert incident["anchor"] == f"incident-acme--widgets-{row.number}"
        assert checks["incidents"].ok and ident in checks["incidents"].detail
        for kind in row.kinds:
            assert metric(w, f'merge_hold_incidents_total{{kind="{kind}"}} 1.0')


def test_the_evidence_is_recorded_with_the_incident(github_emulator: GitHubEmulator, redis_client: Any,
                                                    redis_url: str, tmp_path: Path) -> None:
    """The forged status and the guard's blocked attempt are kept with the incident and shown."""
    with watched(github_emulator, redis_url, tmp_path) as w:
        token = create_token(Path(str(w.svc.settings.api_tokens_file)), "laptop", "hook-events")
        record = {"repo": REPO, "pr": 5, "decision": "deny", "code": "held", "tool_name": "Bash",
                  "reason": "acme/widgets#5 is held by @alice"}
        other = {**record, "pr": 6}
        assert w.svc.client.post("/api/v1/hook-events", json={"events": [record, other]},
                                 headers={"Authorization": f"Bearer {token}"}).status_code == 202
        w.deliver("pull_request", _forged_then_merged(w))
        client = w.dashboard()
        (incident,) = client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {w.token}"}).get_json()[
            "incidents"]
        assert [(f["sender"], f["state"]) for f in incident["forgeries"]] == [("eve", "success")]
        assert [(h["decision"], h["tool_name"]) for h in incident["hook_records"]] == [("deny", "Bash")]
        page = client.get("/incidents").get_data(as_text=True)
        assert "@eve posted success: looks fine" in page and "deny (Bash): acme/widgets#5 is held by @alice" in page
        (said,) = [c for c in w.bot_comments(5) if COMMENT in c]
        assert "the agent guard judged a merge of it: deny" in said


@pytest.mark.parametrize(("query", "status", "ids"), [
    ("", 200, ["acme/widgets#5"]),
    ("?repo=acme/widgets", 200, ["acme/widgets#5"]),
    ("?repo=acme/other", 200, []),
    ("?repo=not-a-repo", 400, None),
    ("?limit=0", 400, None),
    ("?limit=x", 400, None),
])
def test_the_api_filters_and_refuses_bad_input(query: str, status: int, ids: list[str] | None,
                                               github_emulator: GitHubEmulator, redis_client: Any, redis_url: str,
                                               tmp_path: Path) -> None:
    with watched(github_emulator, redis_url, tmp_path) as w:
        w.deliver("pull_request", _merge(5, HEAD5, ADMIN)(w))
        answer = w.svc.client.get(f"/api/v1/incidents{query}", headers={"Authorization": f"Bearer {w.token}"})
        assert answer.status_code == status
        if ids is not None:
            assert [i["id"] for i in answer.get_json()["incidents"]] == ids


def test_a_token_or_a_user_sees_only_their_repos(github_emulator: GitHubEmulator, redis_client: Any,
                                                 redis_url: str, tmp_path: Path) -> None:
    with watched(github_emulator, redis_url, tmp_path) as w:
        w.deliver("pull_request", _merge(5, HEAD5, ADMIN)(w))
        tokens = Path(str(w.svc.settings.api_tokens_file))
        outside = create_token(tokens, "other-org", "read", orgs=("initech",))
        inside = create_token(tokens, "acme-only", "read", orgs=("acme",))
        headers = {"Authorization": f"Bearer {outside}"}
        assert w.svc.client.get("/api/v1/incidents", headers=headers).get_json()["incidents"] == []
        assert w.svc.client.get(f"/api/v1/incidents?repo={REPO}", headers=headers).status_code == 403
        got = w.svc.client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {inside}"}).get_json()
        assert [i["id"] for i in got["incidents"]] == [f"{REPO}#5"]
        assert w.svc.client.get("/api/v1/incidents").status_code == 401
        assert w.svc.app.test_client().get("/incidents").status_code == 302  # the dashboard needs a sign-in
