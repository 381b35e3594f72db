"""What the emulated GitHub knows: plain records behind one lock.

Every read and write of these records happens under `Store.lock`; the HTTP handlers take it for the
whole of a request, so each request sees (and leaves) a consistent world.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.emulator.deploy_book import DeployBook
from tests.emulator.identity import DEFAULT_SLUG

ROLES = ("admin", "maintain", "write", "triage", "read", "none")
REVIEW_STATES = ("APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED")
DEFAULT_RATE_LIMIT = 5000
"""GitHub's floor for an installation's hourly REST budget (primary rate limit)."""


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | datetime | float | None, default: float) -> float:
    """Seeding accepts ISO-8601 strings, aware datetimes or epoch seconds."""
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.timestamp()


@dataclass
class Installation:
    id: int
    account_login: str
    account_type: str
    created_at: float
    permissions: dict[str, str]
    events: list[str]


@dataclass
class Repo:
    id: int
    full_name: str
    installation_id: int
    default_branch: str
    private: bool
    created_at: float
    files: dict[tuple[str, str], str] = field(default_factory=dict)  # (ref, path) -> text
    roles: dict[str, str] = field(default_factory=dict)  # lower-case login -> role

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


@dataclass
class Pull:
    repo: str
    number: int
    id: int
    seq: int
    head_sha: str
    head_ref: str
    base: str
    user: str
    labels: list[str]
    draft: bool
    state: str
    head_repo: str | None
    created_at: float
    updated_at: float
    title: str
    body: str
    review_decision: str | None = None
    closed_at: float | None = None
    merged_at: float | None = None
    merged_by: str | None = None


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    user: str
    body: str
    created_at: float
    updated_at: float
    author_association: str


@dataclass
class Review:
    id: int
    repo: str
    number: int
    user: str
    state: str
    submitted_at: float
    body: str
    commit_id: str
    author_association: str


@dataclass
class Status:
    id: int
    repo: str
    sha: str
    state: str
    description: str | None
    target_url: str | None
    context: str
    created_at: float
    creator: str
    via_api: bool

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "repo": self.repo, "sha": self.sha, "state": self.state,
                "description": self.description, "target_url": self.target_url, "context": self.context,
                "created_at": iso(self.created_at), "creator": self.creator}


@dataclass
class Delivery:
    id: int
    guid: str
    delivered_at: float
    redelivery: bool
    duration: float
    status_code: int
    event: str
    action: str | None
    installation_id: int | None
    repository_id: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "guid": self.guid, "delivered_at": iso(self.delivered_at),
                "redelivery": self.redelivery, "duration": self.duration,
                "status": "OK" if 200 <= self.status_code < 300 else f"Invalid HTTP Response: {self.status_code}",
                "status_code": self.status_code, "event": self.event, "action": self.action,
                "installation_id": self.installation_id, "repository_id": self.repository_id}


@dataclass
class Token:
    token: str
    installation_id: int
    expires_at: float
    repos: frozenset[str] | None  # lower-case full names when the mint narrowed it


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: dict[str, str]
    status: int
    auth: str  # "jwt" | "token" | "none"
    body: Any
    installation_id: int | None


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int | None  # None: every matching request


@dataclass
class Bucket:
    """One principal's primary rate-limit window."""

    limit: int
    remaining: int
    reset: float


class Store:
    """All records, the lock and the counters; seeding and inspection mixins build on it."""

    def __init__(self, *, app_slug: str = DEFAULT_SLUG, clock: Callable[[], float] = time.time) -> None:
        self.lock = threading.RLock()
        self.app_slug = app_slug
        self.clock = clock
        self.installations: dict[int, Installation] = {}
        self.repos: dict[str, Repo] = {}  # lower-case full name -> repo
        self.pulls: dict[tuple[str, int], Pull] = {}  # (lower-case repo, number)
        self.comments: list[Comment] = []
        self.reviews: list[Review] = []
        self.all_statuses: list[Status] = []
        self.known_shas: set[tuple[str, str]] = set()
        self.deliveries: dict[int, Delivery] = {}
        self.redeliveries: list[int] = []
        self.on_redeliver: Callable[[dict[str, Any]], int | None] | None = None
        self.tokens: dict[str, Token] = {}
        # The OAuth web flow (tests/emulator/oauth.py): who is signed in at github.com, codes, user tokens.
        self.oauth_login: str | None = None
        self.oauth_codes: dict[str, Any] = {}
        self.user_tokens: dict[str, str] = {}  # ghu_ token -> login
        self.mints: dict[int, int] = {}
        self.log: list[RequestRecord] = []
        self.faults: list[Fault] = []
        self.rate_limit_per_hour = DEFAULT_RATE_LIMIT
        self.buckets: dict[str, Bucket] = {}
        self.writes_per_minute: int | None = None
        self.writes_per_hour: int | None = None
        # Content-creating requests of each installation (the App's own and anonymous ones: key None),
        # newest last: GitHub's secondary limit counts them per minute and per hour.
        self.recent_writes: dict[int | None, deque[float]] = {}
        self.refused_writes = 0
        self.refused_by: dict[int | None, int] = {}  # refusals per installation (None: App and anonymous)
        # One installation's own secondary windows (writes a minute, an hour), over the defaults above.
        self.write_limits: dict[int | None, tuple[int | None, int | None]] = {}
        self.rate_limits: dict[str, int] = {}  # one principal's own hourly budget ("installation:ID")
        self.rulesets: dict[int, dict[str, Any]] = {}  # API rulesets (tests/emulator/routes_rulesets.py)
        # The App's own settings (GET /app) and the repos' branch rules (doctor reads them).
        self.app_permissions: dict[str, str] = {"metadata": "read", "contents": "read", "pull_requests": "read",
                                                "issues": "read", "statuses": "write"}
        self.app_events: list[str] = ["issue_comment", "pull_request", "pull_request_review", "push", "status"]
        self.protections: dict[tuple[str, str], dict[str, Any]] = {}  # (lower repo, branch) -> protection
        self.rules: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (lower repo, branch) -> active rules
        self.branch_heads: dict[tuple[str, str], str] = {}  # (lower repo, branch) -> head sha (set_branch_head)
        self.reactions: list[dict[str, Any]] = []  # reactions created through the API, oldest first
        self.manifest_conversions: dict[str, dict[str, Any]] = {}  # manifest flow: code -> the App's answer
        self.issues: dict[tuple[str, int], dict[str, Any]] = {}  # (lower repo, number) -> plain issue
        self.deploys = DeployBook()  # environments, deployment protection gates, the App's answers
        # The files each head of a pull changes (GET /pulls/{n}/files): (lower repo, head sha) -> entries.
        self.pull_files: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.ids = itertools.count(1_000_001)
        self.request_ids = itertools.count(1)

    def next_id(self) -> int:
        return next(self.ids)

    def repo(self, full_name: str) -> Repo | None:
        return self.repos.get(full_name.lower())

    def require_repo(self, full_name: str) -> Repo:
        found = self.repo(full_name)
        if found is None:
            raise KeyError(f"unknown repo {full_name!r}: seed it with add_repo() first")
        return found

    def pull(self, full_name: str, number: int) -> Pull | None:
        return self.pulls.get((full_name.lower(), number))

    def require_pull(self, full_name: str, number: int) -> Pull:
        found = self.pull(full_name, number)
        if found is None:
            raise KeyError(f"unknown pull {full_name}#{number}: seed it with add_pull() first")
        return found

    def role_of(self, repo: Repo, login: str) -> str | None:
        return repo.roles.get(login.lower())

    def association(self, repo: Repo, login: str) -> str:
        """What GitHub's `author_association` would say, from what the test seeded."""
        if login.lower() == repo.owner.lower():
            return "OWNER"
        role = self.role_of(repo, login)
        if role in (None, "none"):
            return "CONTRIBUTOR"
        return "COLLABORATOR"
