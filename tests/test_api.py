"""The JSON API: bearer tokens, verdicts, holds, audit events and hook records, over the real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from core import keys
from merge_hold.tokens import create as create_token
from merge_hold.tokens import revoke
from tests.webapp_support import closed_port_url, hold, make_app, store_verdict

REPO = "Octo/Widgets"


@pytest.fixture()
def api(redis_client: redis.Redis, tmp_path: Path) -> tuple[Flask, FlaskClient, dict[str, str]]:
    app, token = make_app(redis_client, tmp_path)
    return app, app.test_client(), {"Authorization": f"Bearer {token}"}


# -- authentication ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (None, 401),
        ("", 401),
        ("Bearer", 401),
        ("Bearer ", 401),
        ("Bearer wrong", 401),
        ("Basic {token}", 401),
        ("Token {token}", 401),
        ("Bearer {token}x", 401),
        ("Bearer {hash}", 401),  # the stored hash is not a credential
        ("Bearer {token}", 200),
        ("bearer {token}", 200),
        ("Bearer  {token} ", 200),
    ],
)
def test_bearer_token_rows(redis_client: redis.Redis, tmp_path: Path, header: str | None, status: int) -> None:
    app, token = make_app(redis_client, tmp_path)
    stored_hash = (tmp_path / "tokens").read_text().split(":")[1].strip()
    headers = {} if header is None else {"Authorization": header.format(token=token, hash=stored_hash)}
    response = app.test_client().get(f"/api/v1/repos/{REPO}/held", headers=headers)
    assert response.status_code == status
    if status == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.get_json() == {"error": "a valid bearer token is required"}


def test_tokens_file_is_reloaded_when_it_changes(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, first = make_app(redis_client, tmp_path)
    client = app.test_client()
    tokens = tmp_path / "tokens"

    def status(token: str) -> int:
        return client.get(f"/api/v1/repos/{REPO}/held", headers={"Authorization": f"Bearer {token}"}).status_code

    second = create_token(tokens, "later")
    assert (status(first), status(second)) == (200, 200)
    assert revoke(tokens, "tester")
    assert (status(first), status(second)) == (401, 200)
    tokens.unlink()
    assert status(second) == 401


@pytest.mark.parametrize("tokens_file", [None, "missing/tokens"])
def test_no_tokens_file_refuses_everyone(redis_client: redis.Redis, tmp_path: Path, tokens_file: str | None) -> None:
    app, token = make_app(redis_client, tmp_path)
    app2, _ = make_app(redis_client, tmp_path / "other",
                       api_tokens_file=None if tokens_file is None else str(tmp_path / tokens_file))
    for path in ("/api/v1/holds", f"/api/v1/repos/{REPO}/held", "/api/v1/events"):
        assert app2.test_client().get(path, headers={"Authorization": f"Bearer {token}"}).status_code == 401
        assert app.test_client().get(path, headers={"Authorization": f"Bearer {token}"}).status_code == 200


# -- verdicts ----------------------------------------------------------------------------------------------


def test_verdict_is_the_stored_record(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    record = store_verdict(redis_client, REPO, 12, (hold("alice", "waiting for DB migration"),))
    response = client.get(f"/api/v1/verdicts/{REPO}/12", headers=auth)
    assert response.status_code == 200
    assert response.get_json() == record
    assert record["held"] is True and record["holds"][0]["holder"] == "alice"
    # Repo names are case-insensitive on GitHub, and so are the keys.
    assert client.get("/api/v1/verdicts/octo/widgets/12", headers=auth).get_json() == record


@pytest.mark.parametrize(("managed", "path"), [
    (False, f"/api/v1/verdicts/{REPO}/12"),
    (True, f"/api/v1/verdicts/{REPO}/13"),
    (False, f"/api/v1/verdicts/{REPO}/branches/feature/x"),
    (True, f"/api/v1/verdicts/{REPO}/branches/nope"),
])
def test_missing_verdict_says_whether_the_repo_is_managed(
    api: Any, redis_client: redis.Redis, managed: bool, path: str
) -> None:
    _, client, auth = api
    if managed:
        redis_client.set(keys.managed(REPO), "1")
    response = client.get(path, headers=auth)
    assert response.status_code == 404
    assert response.get_json() == {"error": "no verdict", "managed": managed}


@pytest.mark.parametrize("branch", ["feature/x", "release/2.0/hotfix", "octocat:patch-1", "naïve"])
def test_verdict_by_head_branch(api: Any, redis_client: redis.Redis, branch: str) -> None:
    _, client, auth = api
    record = store_verdict(redis_client, REPO, 7, head_ref=branch)
    redis_client.set(keys.head_index(REPO, branch), 7)
    response = client.get(f"/api/v1/verdicts/{REPO}/branches/{branch}", headers=auth)
    assert response.status_code == 200
    assert response.get_json() == record


@pytest.mark.parametrize("path", [
    "/api/v1/verdicts/a/b/-1", "/api/v1/verdicts/a/b/x", "/api/v1/verdicts/a/b/1/2",
])
def test_verdict_paths_that_are_not_prs(api: Any, path: str) -> None:
    _, client, auth = api
    assert client.get(path, headers=auth).status_code == 404


def test_held_numbers(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    assert client.get(f"/api/v1/repos/{REPO}/held", headers=auth).get_json() == {
        "managed": False, "held": [], "heads": {}}
    for number in (30, 4, 100):
        store_verdict(redis_client, REPO, number, (hold("bob", "wait"),))
    store_verdict(redis_client, REPO, 5)  # free: not in the held set
    head = {"base": "main", "head_sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821", "description": "Held by @bob: wait"}
    assert client.get(f"/api/v1/repos/{REPO}/held", headers=auth).get_json() == {
        "managed": True, "held": [4, 30, 100], "heads": {"4": head, "30": head, "100": head}}


# -- holds -------------------------------------------------------------------------------------------------


def test_active_holds_across_repos(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    store_verdict(redis_client, REPO, 1, (
        hold("alice", "migration"),
        hold("bob", "expired long ago", expires="2020-01-01T00:00:00Z"),
        hold("carol", "until 2099", expires="2099-01-01T00:00:00Z", source="room", scope="octo/widgets"),
    ))
    store_verdict(redis_client, "octo/other", 9, (hold("", "label do-not-merge/hold", source="label"),))
    store_verdict(redis_client, "octo/other", 10, error="invalid .github/merge-hold.yml line 3")
    store_verdict(redis_client, "octo/free", 2)

    rows = client.get("/api/v1/holds", headers=auth).get_json()["holds"]
    assert [(r["repo"], r["number"], r["holder"], r["source"]) for r in rows] == [
        ("octo/other", 9, "", "label"),
        (REPO, 1, "alice", "comment"),
        (REPO, 1, "carol", "room"),
    ]
    carol = rows[2]
    assert carol["reason"] == "until 2099"
    assert (carol["created_at"], carol["expires_at"]) == ("2026-01-05T10:00:00Z", "2099-01-01T00:00:00Z")

    only = client.get("/api/v1/holds?repo=octo/other", headers=auth).get_json()["holds"]
    assert [(r["repo"], r["number"]) for r in only] == [("octo/other", 9)]
    for bad in ("octo", "octo/other/x", "../x", "a/b c"):
        assert client.get(f"/api/v1/holds?repo={bad}", headers=auth).status_code == 400


# -- events ------------------------------------------------------------------------------------------------


def _add(r: redis.Redis, stream: str, event: str, data: dict[str, Any], at_ms: int) -> str:
    raw = r.xadd(stream, {"event": event, "data": json.dumps(data)}, id=f"{at_ms}-0")
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def test_events_newest_first_with_a_cursor(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    ids = []
    for n in range(7):
        stream = keys.HOOK_EVENTS if n % 3 == 0 else keys.AUDIT
        ids.append(_add(redis_client, stream, f"e{n}", {"repo": REPO, "number": n}, 1_700_000_000_000 + n))
    seen: list[str] = []
    before: str | None = None
    pages = 0
    while True:
        query = "limit=3" + (f"&before={before}" if before else "")
        reply = client.get(f"/api/v1/events?{query}", headers=auth).get_json()
        seen += [e["id"] for e in reply["events"]]
        pages += 1
        before = reply["next"]
        if before is None:
            break
    assert seen == ids[::-1]
    assert pages == 3
    first = client.get("/api/v1/events?limit=1", headers=auth).get_json()["events"][0]
    assert first == {"id": ids[6], "stream": "hook", "at": "2023-11-14T22:13:20Z", "event": "e6",
                     "data": {"repo": REPO, "number": 6}}


def test_events_of_one_repo(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    _add(redis_client, keys.history(REPO), "hold.placed", {"repo": REPO, "number": 1}, 1000)
    _add(redis_client, keys.HOOK_EVENTS, "hook.gate.fired", {"repo": "octo/widgets", "pr": 1}, 2000)
    _add(redis_client, keys.HOOK_EVENTS, "hook.gate.fired", {"repo": "octo/other", "pr": 1}, 3000)
    _add(redis_client, keys.history("octo/other"), "hold.placed", {"repo": "octo/other"}, 4000)
    _add(redis_client, keys.AUDIT, "hold.placed", {"repo": REPO, "number": 1}, 1000)
    reply = client.get(f"/api/v1/events?repo={REPO}", headers=auth).get_json()
    assert [(e["stream"], e["id"]) for e in reply["events"]] == [("hook", "2000-0"), ("history", "1000-0")]
    assert reply["next"] is None


def test_events_filter_scan_is_bounded_and_pages_on(
    api: Any, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app import reads

    monkeypatch.setattr(reads, "SCAN_CAP", 100)
    _, client, auth = api
    _add(redis_client, keys.HOOK_EVENTS, "hook.gate.fired", {"repo": REPO}, 10)
    pipe = redis_client.pipeline()
    for n in range(250):  # other repos' records, newer than ours
        pipe.xadd(keys.HOOK_EVENTS, {"event": "hook.gate.fired", "data": '{"repo": "a/b"}'}, id=f"{1000 + n}-0")
    pipe.execute()
    found: list[str] = []
    before: str | None = None
    for _ in range(10):
        reply = client.get(f"/api/v1/events?repo={REPO}" + (f"&before={before}" if before else ""),
                           headers=auth).get_json()
        found += [e["id"] for e in reply["events"]]
        before = reply["next"]
        if before is None:
            break
    assert found == ["10-0"]


@pytest.mark.parametrize("query", ["limit=0", "limit=501", "limit=x", "before=abc", "before=1-2-3", "repo=x"])
def test_events_bad_query(api: Any, query: str) -> None:
    _, client, auth = api
    response = client.get(f"/api/v1/events?{query}", headers=auth)
    assert response.status_code == 400
    assert "error" in response.get_json()


def test_unreadable_entries_are_shown_raw(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    redis_client.xadd(keys.AUDIT, {"event": "x", "data": "{not json"}, id="5-0")
    (entry,) = client.get("/api/v1/events", headers=auth).get_json()["events"]
    assert entry["data"] == "{not json"


# -- hook records ------------------------------------------------------------------------------------------


def test_hook_events_are_stored_and_listed(api: Any, redis_client: redis.Redis) -> None:
    _, client, auth = api
    events = [{"repo": REPO, "pr": 12, "decision": "block", "command_digest": "ab" * 8}, {"repo": REPO, "pr": 3}]
    response = client.post("/api/v1/hook-events", json={"events": events}, headers=auth)
    assert (response.status_code, response.get_json()) == (202, {"stored": 2})
    stored: list[Any] = redis_client.xrange(keys.HOOK_EVENTS) or []
    assert [(f[b"event"], json.loads(f[b"data"]), f[b"by"]) for _, f in stored] == [
        (b"hook.gate.fired", events[0], b"tester"), (b"hook.gate.fired", events[1], b"tester")]
    listed = client.get(f"/api/v1/events?repo={REPO}", headers=auth).get_json()["events"]
    assert [e["data"] for e in listed] == events[::-1]
    assert all(e["by"] == "tester" for e in listed)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 400),
        (b"[]", 400),
        (b'{"events": {}}', 400),
        (b'{"events": [1]}', 400),
        (b'{"events": [{}, "x"]}', 400),
        (b'{"other": []}', 400),
        (b'{"events": []}', 202),
        (json.dumps({"events": [{}] * 500}).encode(), 202),
        (json.dumps({"events": [{}] * 501}).encode(), 413),
        (json.dumps({"events": [{"pad": "x" * (1024 * 1024)}]}).encode(), 413),
    ],
)
def test_hook_events_rows(api: Any, redis_client: redis.Redis, body: bytes, status: int) -> None:
    _, client, auth = api
    response = client.post("/api/v1/hook-events", data=body, headers={**auth, "Content-Type": "application/json"})
    assert response.status_code == status
    count = redis_client.xlen(keys.HOOK_EVENTS)
    assert count == (len(json.loads(body)["events"]) if status == 202 else 0)


def test_hook_events_need_a_token(api: Any, redis_client: redis.Redis) -> None:
    _, client, _ = api
    assert client.post("/api/v1/hook-events", json={"events": [{}]}).status_code == 401
    assert redis_client.xlen(keys.HOOK_EVENTS) == 0


def test_api_answers_503_when_redis_is_down(tmp_path: Path) -> None:
    app, token = make_app(None, tmp_path, redis_url=closed_port_url())
    client = app.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    for response in (client.get(f"/api/v1/verdicts/{REPO}/1", headers=auth),
                     client.get("/api/v1/holds", headers=auth),
                     client.post("/api/v1/hook-events", json={"events": [{}]}, headers=auth)):
        assert response.status_code == 503
        assert "retry" in response.get_json()["error"]


def test_unknown_api_path_is_json_404(api: Any) -> None:
    _, client, auth = api
    response = client.get("/api/v1/nothing", headers=auth)
    assert response.status_code == 404 and "error" in response.get_json()
