"""One chat command as the web tier hands it to the workers, and who may act on what from chat.

Shared by `app.chat` (which checks and queues) and `workers.chat.rooms` (which applies): a leaf in `core/`
so the web tier never imports the worker stack (PyGithub) to name the job or its argument.

Trust model (issue #9): each chat workspace (Slack team or enterprise id, Mattermost team id) is bound
to the GitHub orgs it may act on (``MERGE_HOLD_SLACK_TEAMS=T123=acme+acme-labs``). A command whose
target lies outside its workspace's orgs is refused before anything is recorded. PR holds are open
to the allow-list (``MERGE_HOLD_CHAT_ALLOWED_USERS``, empty: anyone in a bound workspace); org- and
repo-wide holds, lifting them and exemptions need a chat admin (``MERGE_HOLD_CHAT_ADMINS``, empty:
nobody), since they override what maintainers set in ``.github/merge-hold.yml``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from core import jobs
from core.holds import from_iso

CHAT_JOB = jobs.CHAT_COMMAND.address
"""The rq job the web tier queues by name (never by import)."""
REPUBLISH_JOB = jobs.REPUBLISH.address
"""Republish the PRs a scope reaches after a hold placed or lifted outside a chat job (API, dashboard)."""

Binding = tuple[tuple[str, tuple[str, ...]], ...]
"""``((team id, (org, ...)), ...)``: the parsed ``MERGE_HOLD_*_TEAMS`` value, orgs lower-cased."""


def parse_binding(name: str, raw: str) -> Binding:
    """``T123=acme+acme-labs,T456=other`` -> binding. A bare id (``T789``) is kept bound to no org: its
    commands get a reply saying so, rather than the workspace looking unknown."""
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        team, _, orgs = part.partition("=")
        team = team.strip()
        bound = tuple(sorted({o.strip().lower() for o in orgs.split("+") if o.strip()}))
        if not team or any(not _org_name(o) for o in bound):
            raise ValueError(f"{name}: expected TEAM=org+org,TEAM=org..., got {part!r}")
        pairs.append((team, bound))
    return tuple(pairs)


def _org_name(org: str) -> bool:
    return bool(org) and len(org) <= 100 and all(c.isascii() and (c.isalnum() or c in "-_.") for c in org)


def bound_orgs(binding: Binding, *team_ids: str) -> tuple[str, ...] | None:
    """The orgs the first of ``team_ids`` found in the binding may act on; None when none is served."""
    table = dict(binding)
    for team in team_ids:
        if team and team in table:
            return table[team]
    return None


def scope_owner(scope: str) -> str:
    """The org (owner) a scope belongs to: ``acme/widgets@main`` -> ``acme``."""
    return scope.split("/", 1)[0].split("#", 1)[0].split("@", 1)[0].lower()


def within(orgs: Iterable[str], scope: str) -> bool:
    return scope_owner(scope) in set(orgs)


def listed(entries: tuple[str, ...], platform: str, team_id: str, user_id: str, channel_id: str = "") -> bool:
    """Whether a user (or, when ``channel_id`` is given, their channel) is on a list of chat ids. Entries
    are user ids (``U024BE7LH``) or channel ids with ``#`` (``#C0123``), either optionally qualified by
    the workspace (``T123/U456``) and the platform (``slack:``/``mattermost:``)."""
    subjects = [s for s in (user_id, f"#{channel_id}" if channel_id else "") if s.strip("#")]
    accepted = {form for s in subjects for form in (s, f"{team_id}/{s}")}
    accepted |= {f"{platform}:{form}" for form in accepted}
    return any(entry.strip() in accepted for entry in entries)


def unsafe_url_characters(url: str) -> bool:
    """Whether a URL someone else gave us carries what no URL we POST to may: spaces, control characters,
    backslashes (which parsers disagree about). Chat response URLs and outgoing webhook endpoints alike."""
    return any(ord(c) < 0x21 or c in ("\\", "\x7f") for c in url)


def reply_url_allowed(url: str, base: str | None) -> bool:
    """A Mattermost ``response_url`` must lie under MATTERMOST_URL (a prefix at a path boundary, so
    ``https://chat.example.evil`` does not pass for ``https://chat.example``): the worker POSTs to it."""
    if not url:
        return True  # nothing will be posted
    if not base or unsafe_url_characters(url):
        return False
    return url.startswith(base.rstrip("/") + "/")


@dataclass(frozen=True)
class ChatRequest:
    """One slash command as the chat platform sent it, normalised (job argument, kept JSON-plain)."""

    platform: str  # "slack" | "mattermost"
    team_id: str
    team_name: str
    channel_id: str
    channel_name: str
    user_id: str
    user_name: str
    command: str
    text: str
    response_url: str
    received_at: str
    orgs: str = ""
    """The orgs the workspace is bound to, ``+``-joined, as the web tier checked them."""
    admin: str = ""
    """"1" when the user is a chat admin (checked by the web tier)."""
    enterprise_id: str = ""
    """Slack Enterprise Grid's enterprise id, when the workspace sent one (it may be what is bound)."""

    @property
    def room(self) -> str:
        """Human-readable, for status descriptions: ``slack:acme/#releases``."""
        return f"{self.platform}:{self.team_name or self.team_id}/#{self.channel_name or self.channel_id}"

    @property
    def bound(self) -> tuple[str, ...]:
        return tuple(o for o in self.orgs.split("+") if o)

    def received(self, clock: datetime) -> datetime:
        """When the platform sent it (the web tier's clock at receipt), or ``clock`` for a request that
        does not say: the caller's clock, since the domain core reads none (docs/architecture.md)."""
        return from_iso(self.received_at) or clock

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatRequest:
        return cls(**{name: str(data.get(name) or "") for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Reply:
    text: str
    in_channel: bool = False
