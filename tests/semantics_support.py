"""What the exemption and path-scope tests share: a served repo at the GitHub emulator with a Slack stand-in,
chat requests from a bound workspace, and `pull_request` deliveries shaped like GitHub's example."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core.chat_request import ChatRequest
from tests.chat_support import BINDING, TEAM, emulated_service, head_sha, seed_repo
from tests.e2e_support import Service, fixture
from tests.emulator import GitHubEmulator
from tests.slack_standin import SlackStandIn

REPO = "acme/widgets"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def serve(emulator: GitHubEmulator, redis: Any, redis_url: str, slack: SlackStandIn, prs: int = 2,
          **overrides: Any) -> Service:
    """``prs`` open PRs of acme/widgets at the emulator, one deployment serving them, Slack on loopback."""
    seed_repo(emulator, redis, REPO, prs)
    return emulated_service(emulator, redis_url, slack_teams=BINDING, slack_bot_token="xoxb-exempt",
                            slack_api_url=slack.api_url, chat_admins=("U0DANA",), write_rate_per_minute=60_000,
                            **overrides)


def chat(**fields: str) -> ChatRequest:
    """A command from #releases of the bound workspace, by the chat admin @dana."""
    base = {"platform": "slack", "team_id": TEAM, "team_name": "acme-eng", "channel_id": "C0REL",
            "channel_name": "releases", "user_id": "U0DANA", "user_name": "dana", "command": "/hold", "text": "",
            "response_url": "", "received_at": datetime.now(UTC).isoformat(), "orgs": "acme", "admin": "1"}
    base.update(fields)
    return ChatRequest.from_dict(base)


_clock = [START]


def pull_event(number: int, action: str, *, sha: str | None = None, base: str = "main",
               labels: tuple[str, ...] = (), label: str | None = None, sender: str = "octocat",
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """GitHub's `pull_request` example for acme/widgets#``number``, each one a second after the last (its
    ``updated_at`` orders the facts)."""
    _clock[0] += timedelta(seconds=1)
    payload = fixture("pull_request", "opened.payload.json")
    pull = payload["pull_request"]
    pull.update(number=number, updated_at=_clock[0].strftime("%Y-%m-%dT%H:%M:%SZ"), state="open", draft=False,
                labels=[{"name": name} for name in labels])
    pull["head"].update(sha=sha or head_sha(REPO, number), ref=f"topic-{number}")
    pull["head"]["repo"]["full_name"] = pull["base"]["repo"]["full_name"] = REPO
    pull["base"]["ref"] = base
    payload["repository"].update(full_name=REPO, default_branch="main")
    payload.update(action=action, number=number, installation={"id": 1},
                   sender={**payload["sender"], "login": sender})
    if label is not None:
        payload["label"] = {"name": label, "color": "ededed", "default": False}
    payload.update(extra or {})
    return payload


def status(emulator: GitHubEmulator, sha: str) -> tuple[str | None, str | None]:
    found = emulator.latest_status(REPO, sha) or {}
    return found.get("state"), found.get("description")
