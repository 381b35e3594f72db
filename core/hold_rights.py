"""Who may place and who may lift a room hold: one rule for every surface (issue 24 item 1). Pure.

A room hold lies on a scope (one PR, a branch glob of a repo, a repo, an org) and was placed from one of
three doors, which its id names (`state.room_holds`: ``room:{holder id}:{scope}``): the dashboard by a
GitHub user (``dashboard:LOGIN``), chat by a chat user (``slack:TEAM:USER``, ``mattermost:TEAM:USER``),
the API by a token (``api:NAME``). Every surface that places or lifts one — the page's Freeze, Lift and
Thaw, chat's ``/hold`` and ``/unhold``, the API's ``POST`` and ``DELETE`` — asks `may_place` and
`may_lift` here, so that a door cannot give more than another for the same person.

The rule (README, "Who may place and lift a room hold"):

- **A GitHub user** (signed in on the page) places a repo- or branch-wide hold with admin on the repo,
  an org-wide one with admin on every managed repo of the org (a freeze overrides what maintainers
  configured). They lift any hold they could place, whatever its door — GitHub admin is the highest
  say over a repo, who could drop the required check anyway; a hold on one PR with the repo's
  ``lift_others_permission`` (maintain), their own with write. Their own hold needs what placing it
  again would need (design §3: lifting your own needs the same as placing). A PR's hold placed *on its page* is
  not a room hold: it is their own comment-like hold (`core.comment_rules`).
- **A chat user** acts only within the orgs their workspace is bound to. A hold on one PR needs the
  allow-list (``MERGE_HOLD_CHAT_ALLOWED_USERS``; empty: anyone), a wider one a chat admin
  (``MERGE_HOLD_CHAT_ADMINS``), to place and to lift; they lift only holds placed *from chat*, from a
  workspace bound to the scope's org (a channel unfreezes what chat froze, never a GitHub admin's or a
  pipeline's hold).
- **A GitHub user linked to a chat user** (`/hold link`) has, besides their GitHub rights, exactly what
  that chat user has in chat — no more: the chat rule above, with the chat user's identity.
- **A token** (the API, or a token sign-in on the page) places with scope ``hold`` or ``admin`` within its
  orgs; ``hold`` lifts the holds it placed, ``admin`` any within its orgs. ``read`` and ``hook-events``
  neither place nor lift.

Identities never cross namespaces: a token ``ada`` is ``token:ada`` and owns ``api:ada`` holds only;
it is never the GitHub user ``@ada`` and never owns ``dashboard:ada``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from core.chat_request import Binding, bound_orgs, listed, scope_owner
from core.holds import TOKEN_PREFIX
from core.permissions import Permission
from core.scopes import scope_repo

PLACING_SCOPES = frozenset({"hold", "admin"})
"""Token scopes that place room holds (and lift their own)."""


class Door(StrEnum):
    """Where a room hold was placed, as its id says."""

    DASHBOARD = "dashboard"
    CHAT = "chat"
    API = "api"
    OTHER = "other"


class Reach(StrEnum):
    PR = "pr"
    BRANCH = "branch"
    REPO = "repo"
    ORG = "org"


def reach(scope: str) -> Reach:
    if "#" in scope:
        return Reach.PR
    if "@" in scope:
        return Reach.BRANCH
    return Reach.REPO if "/" in scope else Reach.ORG


def token_actor(name: str) -> str:
    """How a token is named as an actor or holder: ``token:NAME``, never a bare name."""
    return f"{TOKEN_PREFIX}{name}"


def holder_id_of(hold_id: str) -> str:
    """``room:{holder id}:{scope}`` -> the holder id (scopes never contain ``:``)."""
    return hold_id.removeprefix("room:").rpartition(":")[0]


def door_of(hold_id: str) -> Door:
    kind = holder_id_of(hold_id).partition(":")[0]
    if kind == "dashboard":
        return Door.DASHBOARD
    if kind in ("slack", "mattermost"):
        return Door.CHAT
    return Door.API if kind == "api" else Door.OTHER


@dataclass(frozen=True)
class ChatUser:
    """A chat user as chat judges them now (the admin list and the binding are read at every use)."""

    platform: str
    team_id: str
    user_id: str
    orgs: tuple[str, ...]
    """The orgs their workspace is bound to, lower-cased; () when it is served no more."""
    admin: bool = False
    allowed: bool = True
    """May hold and lift single PRs (the allow-list, or empty; a chat admin always may)."""

    @property
    def holder_id(self) -> str:
        return f"{self.platform}:{self.team_id}:{self.user_id}"


@dataclass(frozen=True)
class GitHubUser:
    login: str
    roles: Mapping[str, Permission] = field(default_factory=dict)
    """Their role in each repo they may see (lower-cased names); absent: none."""
    chat: ChatUser | None = None
    """The chat user linked to this login (`/hold link`), as chat judges them now."""

    @property
    def holder_id(self) -> str:
        return f"dashboard:{self.login.lower()}"


@dataclass(frozen=True)
class Token:
    name: str
    scope: str
    orgs: tuple[str, ...] = ()
    """Lower-cased; empty: every org."""

    @property
    def holder_id(self) -> str:
        return f"api:{self.name}"

    def covers(self, scope: str) -> bool:
        return not self.orgs or scope_owner(scope) in self.orgs


Actor = GitHubUser | ChatUser | Token


def chat_user(platform: str, team_id: str, user_id: str, *, admins: tuple[str, ...], allowed_users: tuple[str, ...],
              binding: Binding, enterprise_id: str = "", channel_id: str = "") -> ChatUser:
    """A chat user as chat judges them now: their workspace's bound orgs (``binding`` of their platform),
    chat admin or not, on the allow-list or not (a channel on it counts only where a channel is known:
    a linked identity acting on the page has none)."""
    orgs = bound_orgs(binding, team_id, enterprise_id) or ()
    admin = listed(admins, platform, team_id, user_id)
    allowed = admin or not allowed_users or listed(allowed_users, platform, team_id, user_id, channel_id)
    return ChatUser(platform, team_id, user_id, tuple(orgs), admin=admin, allowed=allowed)


@dataclass(frozen=True)
class Facts:
    """What the rule reads besides the actor: the managed repos (an org's repos), each repo's
    ``lift_others_permission``, and which orgs each chat workspace is bound to."""

    managed: tuple[str, ...] = ()
    lift_others: Mapping[str, Permission] = field(default_factory=dict)
    """Lower-cased repo -> its repo config's ``lift_others_permission``; absent: maintain."""
    slack: Binding = ()
    mattermost: Binding = ()

    def repos_of(self, org: str) -> list[str]:
        return [r.lower() for r in self.managed if r.split("/", 1)[0].lower() == org.lower()]

    def workspace_orgs(self, holder_id: str) -> tuple[str, ...]:
        """The orgs the chat workspace a hold was placed from is bound to (() for no chat hold)."""
        platform, _, rest = holder_id.partition(":")
        team = rest.partition(":")[0]
        if platform not in ("slack", "mattermost") or not team:
            return ()
        return bound_orgs(self.slack if platform == "slack" else self.mattermost, team) or ()


def _role(user: GitHubUser, repo: str) -> Permission:
    return user.roles.get(repo.lower(), Permission.NONE)


def github_may_freeze(user: GitHubUser, scope: str, facts: Facts) -> bool:
    """Admin on the scope's repo; for an org, admin on every managed repo of it (and it has one)."""
    repo = scope_repo(scope)
    repos = [repo.lower()] if repo is not None else facts.repos_of(scope)
    return bool(repos) and all(_role(user, r) >= Permission.ADMIN for r in repos)


def _chat_may_act(user: ChatUser, scope: str) -> bool:
    """The chat right over a scope, regardless of the hold: within the bound orgs, PR holds for the
    allow-list, wider ones for chat admins."""
    if scope_owner(scope) not in user.orgs:
        return False
    return (user.allowed or user.admin) if reach(scope) is Reach.PR else user.admin


def _chat_may_lift(user: ChatUser, hold_id: str, scope: str, facts: Facts) -> bool:
    holder = holder_id_of(hold_id)
    return (_chat_may_act(user, scope) and door_of(hold_id) is Door.CHAT
            and scope_owner(scope) in facts.workspace_orgs(holder))


def may_place(actor: Actor, scope: str, facts: Facts) -> bool:
    """Whether ``actor`` may place a room hold on ``scope``."""
    if isinstance(actor, Token):
        return actor.scope in PLACING_SCOPES and actor.covers(scope)
    if isinstance(actor, ChatUser):
        return _chat_may_act(actor, scope)
    if actor.chat is not None and _chat_may_act(actor.chat, scope):
        return True
    return reach(scope) is not Reach.PR and github_may_freeze(actor, scope, facts)


def may_lift(actor: Actor, hold_id: str, scope: str, facts: Facts) -> bool:
    """Whether ``actor`` may lift the room hold ``hold_id`` on ``scope``."""
    holder = holder_id_of(hold_id)
    # GitHub logins compare case-insensitively, as GitHub does; token names exactly, as the tokens file has them.
    own = holder == actor.holder_id if isinstance(actor, Token) else holder.lower() == actor.holder_id.lower()
    if isinstance(actor, Token):
        return actor.covers(scope) and (actor.scope == "admin" or (own and actor.scope in PLACING_SCOPES))
    if isinstance(actor, ChatUser):
        return _chat_may_lift(actor, hold_id, scope, facts)
    if actor.chat is not None and _chat_may_lift(actor.chat, hold_id, scope, facts):
        return True
    if own and may_place(actor, scope, facts):
        return True  # their own freeze, which they may place again (as a GitHub admin or a linked chat admin)
    if reach(scope) is not Reach.PR:
        return github_may_freeze(actor, scope, facts)
    repo = str(scope_repo(scope)).lower()
    needed = Permission.WRITE if own else facts.lift_others.get(repo, Permission.MAINTAIN)
    return _role(actor, repo) >= needed


def _github_need(scope: str) -> str:
    repo = scope_repo(scope)
    return f"admin access to {repo}" if repo is not None else f"admin access to every repository of {scope}"


def lift_refusal(actor: Actor, hold_id: str, scope: str, facts: Facts) -> str:
    """Why ``actor`` may not lift this hold, in a sentence naming what would allow it."""
    door = door_of(hold_id)
    if isinstance(actor, Token):
        if actor.scope not in PLACING_SCOPES:
            return (f"token {actor.name!r} has scope {actor.scope!r}: lifting a room hold needs a hold token "
                    "(its own holds) or an admin token")
        return "a hold token lifts only the holds it placed; an admin token lifts any"
    chat_note = "chat lifts only holds placed from chat, in a workspace bound to their org"
    if isinstance(actor, ChatUser):
        return chat_note if door is not Door.CHAT or _chat_may_act(actor, scope) else \
            "lifting it needs a merge-hold chat admin (MERGE_HOLD_CHAT_ADMINS)"
    if reach(scope) is Reach.PR:
        repo = str(scope_repo(scope)).lower()
        need = facts.lift_others.get(repo, Permission.MAINTAIN).name.lower()
        return f"lifting someone else's hold on a pull request needs {need} access to {repo}"
    linked = (" (your linked chat user may lift only holds placed from chat)" if actor.chat is not None and
              _chat_may_act(actor.chat, scope) else "")
    return f"lifting a hold on {scope} needs {_github_need(scope)} on GitHub{linked}"
