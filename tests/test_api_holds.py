"""Token scopes and orgs on every API route, and room holds from CI (issue #9 item 2): a `hold` token
places a hold over the API, the worker publishes it, the token lifts it; audit-logged under its name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask

from core import keys
from merge_hold.tokens import create as create_token
from tests.chat_support import drain, dry_runtime, manage
from tests.webapp_support import make_app

REPO = "acme/widgets"


def app_with_tokens(redis_client: redis.Redis, tmp_path: Path) -> tuple[Flask, dict[str, dict[str, str]]]:
    app, admin = make_app(redis_client, tmp_path)
    path = tmp_path / "tokens"
    tokens = {"admin": admin}
    for name, scope, orgs in (("reader", "read", ()), ("hooker", "hook-events", ()), ("deploy", "hold", ()),
                              ("deploy2", "hold", ()), ("other-deploy", "hold", ("other",)),
                              ("acme-reader", "read", ("acme",))):
        tokens[name] = create_token(path, name, scope, orgs)
    return app, {name: {"Authorization": f"Bearer {token}"} for name, token in tokens.items()}


# route -> which tokens may use it (by name); the rest get 403.
ROUTES: list[tuple[str, str, dict[str, Any] | None, set[str]]] = [
    ("GET", f"/api/v1/repos/{REPO}/held", None, {"admin", "reader", "hooker", "deploy", "deploy2", "acme-reader"}),
    ("GET", "/api/v1/repos/other/x/held", None, {"admin", "reader", "hooker", "deploy", "deploy2", "other-deploy"}),
    ("GET", f"/api/v1/repos/{REPO}/guard", None, {"admin", "reader", "hooker", "deploy", "deploy2", "acme-reader"}),
    ("GET", "/api/v1/repos/other/x/guard", None, {"admin", "reader", "hooker", "deploy", "deploy2", "other-deploy"}),
    ("GET", f"/api/v1/verdicts/{REPO}/1", None, {"admin", "reader", "hooker", "deploy", "deploy2", "acme-reader"}),
    ("GET", "/api/v1/events", None, {"admin", "reader", "hooker", "deploy", "deploy2"}),  # org-limited: ?repo=
    ("GET", f"/api/v1/events?repo={REPO}", None, {"admin", "reader", "hooker", "deploy", "deploy2", "acme-reader"}),
    ("POST", "/api/v1/hook-events", {"events": []}, {"admin", "hooker"}),
    ("POST", "/api/v1/holds", {"target": f"{REPO}@main", "reason": "deploy 4711"}, {"admin", "deploy", "deploy2"}),
    ("POST", "/api/v1/holds", {"target": "other/x#1", "reason": "deploy"}, {"admin", "deploy", "deploy2",
                                                                          "other-deploy"}),
]


@pytest.mark.parametrize(("method", "path", "body", "allowed"), ROUTES)
def test_each_route_checks_scope_and_org(redis_client: redis.Redis, tmp_path: Path, method: str, path: str,
                                         body: dict[str, Any] | None, allowed: set[str]) -> None:
    app, headers = app_with_tokens(redis_client, tmp_path)
    manage(redis_client, REPO, {1: "main"})
    manage(redis_client, "other/x", {1: "main"})
    client = app.test_client()
    for name, header in headers.items():
        answer = client.open(path, method=method, json=body, headers=header)
        if name in allowed:
            assert answer.status_code in (200, 201, 202, 404), (name, answer.get_json())
            assert answer.status_code != 404 or "verdict" in str(answer.get_json()), (name, answer.get_json())
        else:
            assert answer.status_code == 403, (name, answer.status_code)
            assert "error" in (answer.get_json() or {})


def test_holds_listing_is_limited_to_the_token_orgs(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> None:
    app, headers = app_with_tokens(redis_client, tmp_path)
    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000)
    manage(redis_client, REPO, {1: "main"})
    manage(redis_client, "other/x", {1: "main"})
    client = app.test_client()
    for target in (f"{REPO}#1", "other/x#1"):
        assert client.post("/api/v1/holds", json={"target": target, "reason": "r"},
                           headers=headers["admin"]).status_code == 201
    drain(rt)
    seen = {h["repo"].lower() for h in (client.get("/api/v1/holds", headers=headers["acme-reader"]).get_json()
                                        or {})["holds"]}
    assert seen == {REPO}
    everything = client.get("/api/v1/holds", headers=headers["reader"]).get_json() or {}
    assert {h["repo"].lower() for h in everything["holds"]} == {REPO, "other/x"}


@pytest.mark.parametrize(("body", "status", "says"), [
    ({}, 400, "target is required"),
    ({"target": "acme/wid:gets", "reason": "x"}, 400, "not a GitHub repository name"),
    ({"target": f"{REPO}", "reason": "   "}, 400, "reason is required"),
    ({"target": f"{REPO}", "reason": "x", "for": "forever"}, 400, "for must be a duration"),
    ({"target": f"{REPO}", "reason": "x", "for": "400d"}, 400, "for must be a duration"),
    ({"target": f"{REPO}", "reason": "x", "for": 30}, 400, "for must be a duration"),
    ({"target": "acme/unknown", "reason": "x"}, 404, "does not manage"),
    ({"target": "nobody", "reason": "x"}, 404, "does not manage"),
])
def test_bad_hold_requests(redis_client: redis.Redis, tmp_path: Path, body: dict[str, Any], status: int,
                           says: str) -> None:
    app, headers = app_with_tokens(redis_client, tmp_path)
    manage(redis_client, REPO, {1: "main"})
    answer = app.test_client().post("/api/v1/holds", json=body, headers=headers["deploy"])
    assert answer.status_code == status and says in str((answer.get_json() or {}).get("error"))
    assert redis_client.hlen(keys.room_holds(REPO)) == 0


def test_a_pipeline_holds_and_lifts_through_the_api(redis_client: redis.Redis, redis_url: str,
                                                    tmp_path: Path) -> None:
    app, headers = app_with_tokens(redis_client, tmp_path)
    rt = dry_runtime(redis_client, redis_url, write_rate_per_minute=60_000)
    manage(redis_client, REPO, {1: "main", 2: "main", 3: "release/1"})
    client = app.test_client()
    placed = client.post("/api/v1/holds", json={"target": f"{REPO}@main", "reason": "deploy 4711", "for": "30m"},
                         headers=headers["deploy"])
    assert placed.status_code == 201
    hold = (placed.get_json() or {})["hold"]
    assert hold["id"] == f"room:api:deploy:{REPO}@main" and hold["expires_at"] and hold["holder"] == "token:deploy"
    drain(rt)
    posted = [json.loads(s) for s in redis_client.lrange(keys.DRY_RUN_STATUSES, 0, -1)]
    failing = {s["sha"][-1] for s in posted if s["state"] == "failure"}
    assert failing == {"1", "2"} and all("deploy 4711" in s["description"] for s in posted if s["state"] == "failure")

    hold_url = f"/api/v1/holds/{hold['id']}"
    assert client.delete(hold_url, headers=headers["deploy2"]).status_code == 403  # another pipeline's hold
    assert client.delete(hold_url, headers=headers["other-deploy"]).status_code == 404  # outside its orgs
    assert client.delete(hold_url, headers=headers["reader"]).status_code == 403
    lifted = client.delete(hold_url, headers=headers["deploy"])
    assert lifted.status_code == 200 and (lifted.get_json() or {})["lifted"]["id"] == hold["id"]
    assert client.delete(hold_url, headers=headers["deploy"]).status_code == 404
    drain(rt)
    latest = [json.loads(s) for s in redis_client.lrange(keys.DRY_RUN_STATUSES, 0, 1)]
    assert {s["state"] for s in latest} == {"success"}
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(keys.AUDIT)  # type: ignore[assignment]
    audit = [(f[b"event"].decode(), json.loads(f[b"data"])) for _, f in entries]
    held = [d for e, d in audit if e == "room.held"]
    assert held and held[0]["holder"] == "token:deploy" and held[0]["origin"] == "api:deploy"
    assert [d["actor"] for e, d in audit if e == "room.lifted"] == ["token:deploy"]


def test_an_admin_token_lifts_any_hold_in_its_orgs(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, headers = app_with_tokens(redis_client, tmp_path)
    manage(redis_client, REPO, {1: "main"})
    client = app.test_client()
    placed = client.post("/api/v1/holds", json={"target": "acme", "reason": "org freeze"}, headers=headers["deploy"])
    hold_id = (placed.get_json() or {})["hold"]["id"]
    assert client.delete(f"/api/v1/holds/{hold_id}", headers=headers["admin"]).status_code == 200
    assert redis_client.hlen(keys.org_room_holds("acme")) == 0


def test_an_org_limited_token_stores_only_records_of_its_orgs(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, _ = make_app(redis_client, tmp_path)
    token = create_token(tmp_path / "tokens", "hook-acme", "hook-events", ("acme",))
    client, header = app.test_client(), {"Authorization": f"Bearer {token}"}
    mine = {"events": [{"repo": "acme/widgets", "merges": [{"repo": "ACME/widgets"}]}, {"tool": "Bash"}]}
    assert client.post("/api/v1/hook-events", json=mine, headers=header).status_code == 202
    for other in ({"repo": "other/x"}, {"merges": [{"repo": "acme/widgets"}, {"repo": "other/x"}]}):
        answer = client.post("/api/v1/hook-events", json={"events": [other]}, headers=header)
        assert answer.status_code == 403 and "other/x" in str((answer.get_json() or {}).get("error"))
    assert redis_client.xlen(keys.HOOK_EVENTS) == 2
