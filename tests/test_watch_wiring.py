"""The tamper watch's events are wired wherever the event lists live: the receiver queues them (and counts
them under their own metric label), the pump keeps every action, the workers have a handler, doctor
requires them and the App manifest subscribes to them with the permission GitHub asks for (Administration:
read). Through HTTP for the receiver; a row per event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from core.deliveries import ignore_reason
from core.events import EVENTS, metric_label
from core.readiness import REQUIRED_EVENTS, REQUIRED_PERMISSIONS
from tests.webapp_support import delivery_headers, make_app
from workers.events.dispatch import HANDLERS

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
WEBHOOKS = Path(__file__).resolve().parent / "fixtures" / "github" / "webhooks"
WATCHED = [
    ("branch_protection_rule", ["created", "edited", "deleted"]),
    ("branch_protection_configuration", ["disabled", "enabled"]),
    ("repository_ruleset", ["edited", "deleted"]),
]


@pytest.mark.parametrize(("event", "actions"), WATCHED, ids=[w[0] for w in WATCHED])
def test_every_list_knows_the_event(event: str, actions: list[str]) -> None:
    manifest = json.loads((DEPLOY / "github-app-manifest.json").read_text())
    assert event in EVENTS and EVENTS[event].actions is None  # every action: the watch re-reads
    assert event in HANDLERS and metric_label(event) == event and event in REQUIRED_EVENTS
    assert event in manifest["default_events"]
    assert manifest["default_permissions"]["administration"] == "read"
    assert REQUIRED_PERMISSIONS["administration"][0] == "read"
    for action in actions:
        payload = json.loads((WEBHOOKS / event / f"{action}.payload.json").read_text())
        assert ignore_reason(event, payload) is None


@pytest.mark.parametrize(("event", "actions"), WATCHED, ids=[w[0] for w in WATCHED])
def test_the_receiver_queues_it_and_counts_it_by_name(event: str, actions: list[str], redis_client: redis.Redis,
                                                       tmp_path: Path) -> None:
    app, _token = make_app(redis_client, tmp_path, metrics_token="m")
    client = app.test_client()
    body = (WEBHOOKS / event / f"{actions[0]}.payload.json").read_bytes()
    answer = client.post("/webhooks/github", data=body, headers=delivery_headers(event, body, delivery=f"d-{event}"))
    assert answer.status_code == 202 and answer.get_json() == {"queued": True, "delivery": f"d-{event}"}
    metrics = client.get("/metrics", headers={"Authorization": "Bearer m"}).get_data(as_text=True)
    assert f'merge_hold_webhooks_total{{event="{event}",outcome="queued"}} 1.0' in metrics
