"""The world the incident and tamper-watch tests share: one deployment (signed webhooks in, a real rq
worker, real Redis) over the GitHub emulator, a Slack stand-in subscribed to the repo, a dashboard
token, and the webhook payloads GitHub sends, built from its examples (tests/fixtures, MIT).

acme/widgets (installation 3, every permission merge-hold asks for): ``main`` requires `merge-hold`
from this App; #5 (head `HEAD5`, ``feature/login``) is held by @alice through a real `/hold` comment;
#6 (head `HEAD6`) is free.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from core import jobs
from core.readiness import REQUIRED_EVENTS, REQUIRED_PERMISSIONS
from merge_hold.tokens import create as create_token
from state import subscriptions
from tests.chat_support import BINDING, SLACK_SECRET, slack_body, slack_headers
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.slack_standin import SlackStandIn, slack_standin
from tests.webapp_support import post_form

REPO = "acme/widgets"
INSTALLATION = 3
HEAD5, HEAD6 = "5" * 40, "6" * 40
FULL = {name: level for name, (level, _why) in REQUIRED_PERMISSIONS.items()}
METRICS_TOKEN = "metrics-secret"
ADMIN = "admin-ada"
"""A repo admin: GitHub lets admins merge past a failing required check (the "bypass")."""


@dataclass
class Watched:
    svc: Service
    emu: GitHubEmulator
    slack: SlackStandIn
    token: str

    def deliver(self, event: str, payload: dict[str, Any], delivery_id: str | None = None) -> None:
        response = self.svc.deliver(event, payload, delivery_id=delivery_id or str(uuid.uuid4()))
        assert response.status_code in (200, 202), response.get_data(as_text=True)
        self.svc.drain()

    def dashboard(self) -> FlaskClient:
        client = self.svc.app.test_client()
        assert post_form(client, "/login", {"token": self.token}).status_code == 302
        return client

    def bot_comments(self, number: int) -> list[str]:
        return [c.body for c in self.emu.comments
                if c.repo == REPO and c.number == number and c.user == self.emu.bot_login]

    def chat(self) -> str:
        return "\n".join(self.slack.texts())


@pytest.fixture()
def fast_chat(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chat drains at once (no rq scheduler in the in-process worker), with no pause between messages."""
    monkeypatch.setattr(subscriptions, "BATCH_SECONDS", 0)
    monkeypatch.setattr(subscriptions, "INTERVAL_SECONDS", 0)
    monkeypatch.setattr(jobs, "NOTIFY_POST", replace(jobs.NOTIFY_POST, retry=(0, 0, 0)))


def seed(emu: GitHubEmulator, *, protect: bool = True) -> None:
    emu.set_app(permissions=FULL, events=list(REQUIRED_EVENTS))
    emu.add_installation(INSTALLATION, "acme")
    emu.set_installation_permissions(INSTALLATION, FULL, REQUIRED_EVENTS)
    emu.add_repo(REPO, installation_id=INSTALLATION)
    if protect:
        emu.protect_branch(REPO, "main", checks=[("merge-hold", APP_ID), ("ci/build", None)])
    emu.add_pull(REPO, 5, head_sha=HEAD5, head_ref="feature/login", user="octocat")
    emu.add_pull(REPO, 6, head_sha=HEAD6, head_ref="free-branch", user="octocat")
    emu.set_permission(REPO, "alice", "write")
    emu.set_permission(REPO, ADMIN, "admin")


@contextmanager
def watched(emu: GitHubEmulator, redis_url: str, tmp_path: Path, *, protect: bool = True,
            config: str | None = None, arrange: Callable[[GitHubEmulator], None] | None = None,
            **overrides: Any) -> Iterator[Watched]:
    """The deployment, with #5 held and the repo subscribed in Slack; ``config`` is a repo config file,
    ``arrange`` seeds more of the world before the App is added to the repo; ``overrides`` are settings."""
    seed(emu, protect=protect)
    if arrange is not None:
        arrange(emu)
    if config is not None:
        emu.set_file(REPO, ".github/merge-hold.yml", config)
    tokens = tmp_path / "tokens"
    with slack_standin() as slack:
        options: dict[str, Any] = {
            "api_tokens_file": str(tokens), "secret_key": "watch-test-key", "metrics_token": METRICS_TOKEN,
            "slack_signing_secret": SLACK_SECRET, "slack_teams": BINDING, "slack_bot_token": "xoxb-watch",
            "slack_api_url": slack.api_url, "queue_name": "merge-hold-watch", **overrides}
        settings = service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug, **options)
        svc = Service.start(settings)
        world = Watched(svc, emu, slack, create_token(tokens, "watcher", "read"))
        added = fixture("installation_repositories", "added.payload.json")
        added["installation"]["id"] = INSTALLATION
        added["repositories_added"] = [{"full_name": REPO, "private": False}]
        world.deliver("installation_repositories", added)
        body = slack_body("/hold", f"subscribe {REPO}")
        answer = svc.client.post("/chat/slack", data=body, headers=slack_headers(body))
        assert "now hears about" in str(answer.get_json()["text"])
        world.deliver("issue_comment", comment(5, "/hold waiting for DB migration", user="alice", comment_id=55))
        assert (emu.latest_status(REPO, HEAD5) or {}).get("state") == "failure"
        assert (emu.latest_status(REPO, HEAD6) or {}).get("state") in (None, "success")
        yield world


def _repository() -> dict[str, Any]:
    return {"full_name": REPO, "name": REPO.split("/")[1], "default_branch": "main", "private": False,
            "owner": {"login": REPO.split("/")[0], "type": "Organization"}}


def _user(login: str) -> dict[str, Any]:
    return {**fixture("pull_request", "closed.payload.json")["sender"], "login": login}


def comment(number: int, body: str, *, user: str, comment_id: int, at: str = "2026-01-05T10:00:00Z") -> dict[str, Any]:
    payload = fixture("issue_comment", "created.payload.json")
    payload["repository"] = {**payload["repository"], **_repository()}
    payload["installation"] = {"id": INSTALLATION}
    payload["issue"].update(number=number, pull_request={"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"})
    payload["comment"].update(body=body, author_association="MEMBER", created_at=at, updated_at=at, id=comment_id,
                              html_url=f"https://github.com/{REPO}/pull/{number}#issuecomment-{comment_id}")
    payload["comment"]["user"] = _user(user)
    payload["sender"] = _user(user)
    return payload


HEAD_REFS = {5: "feature/login", 6: "free-branch"}


def closed(number: int, head_sha: str, *, by: str | None, merged: bool = True, at: str | None = None,
           head_ref: str | None = None, base: str = "main") -> dict[str, Any]:
    """GitHub's `pull_request` ``closed`` (its example, merged when ``merged``), by ``by``, at ``at``
    (default now: the PR's newest snapshot, as GitHub's is)."""
    at = at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    payload = fixture("pull_request", "closed.payload.json")
    payload["repository"] = {**payload["repository"], **_repository()}
    payload["installation"] = {"id": INSTALLATION}
    pull = payload["pull_request"]
    pull.update(number=number, state="closed", merged=merged, merged_at=at if merged else None, closed_at=at,
                updated_at=at, merged_by=_user(by) if merged and by else None, title=f"Pull request {number}",
                html_url=f"https://github.com/{REPO}/pull/{number}")
    pull["head"] = {**pull["head"], "sha": head_sha, "ref": head_ref or HEAD_REFS.get(number, f"topic-{number}"),
                    "repo": {**pull["head"]["repo"], **_repository()}}
    pull["base"] = {**pull["base"], "ref": base, "repo": {**pull["base"]["repo"], **_repository()}}
    payload["sender"] = _user(by or "octocat")
    return payload


def gate_event(event: str, action: str, *, by: str, org_wide: bool = False) -> dict[str, Any]:
    """`branch_protection_rule`, `branch_protection_configuration` or `repository_ruleset`, as GitHub
    sends them (tests/fixtures); ``org_wide``: an org ruleset's event (no ``repository``)."""
    name = {"branch_protection_rule": f"{action}.payload.json",
            "branch_protection_configuration": f"{action}.payload.json",
            "repository_ruleset": f"{action}.with-organization-source.payload.json" if org_wide
            else f"{action}.payload.json"}[event]
    payload = fixture(event, name)
    payload["installation"] = {"id": INSTALLATION}
    payload["organization"] = {**payload["organization"], "login": REPO.split("/")[0]}
    if "repository" in payload:
        payload["repository"] = {**payload["repository"], **_repository()}
    if "rule" in payload:
        payload["rule"]["name"] = "main"
    payload["sender"] = _user(by)
    return payload


def installation_event(action: str, *, by: str) -> dict[str, Any]:
    payload = fixture("installation", f"{action}.payload.json")
    payload["installation"] = {**payload["installation"], "id": INSTALLATION}
    payload["repositories"] = [{"full_name": REPO, "private": False}] if action != "suspend" else []
    payload["sender"] = _user(by)
    return payload
