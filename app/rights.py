"""The signed-in dashboard user as `core.hold_rights` sees them, and the facts the rule reads.

One rule decides who places and lifts a room hold on every surface (`core.hold_rights`); this module
only describes the person behind the current request in its terms: a GitHub sign-in is a
`GitHubUser` with their role in each repo they see and the chat user linked to their login (judged as
chat judges it now, `app.chat_links`); a token sign-in is the `Token` it signed in with, acting within
its scope and orgs exactly as over the API. Both are read once per request.
"""

from __future__ import annotations

from flask import g, request

from app import reads
from app.auth import REPOS, current_identity, github_user
from app.chat_links import linked_chat_user
from app.services import services
from core.hold_rights import Actor, Facts, GitHubUser, Token
from core.permissions import Permission
from core.scopes import scope_repo
from state import store
from state.config_file import repo_config


def actor() -> Actor:
    """The signed-in user (a dashboard view's, after `app.auth.login_required`)."""
    found = g.get("merge_hold_actor")
    if isinstance(found, GitHubUser | Token):
        return found
    identity = current_identity()
    assert identity is not None
    login = github_user()
    made: GitHubUser | Token
    if login is None:
        made = Token(identity.name, identity.scope, identity.orgs)
    else:
        seen = request.environ.get(REPOS)
        roles = {str(r).lower(): Permission.parse(str(role)) for r, role in seen.items()} \
            if isinstance(seen, dict) else {}
        made = GitHubUser(login, roles, linked_chat_user(login))
    g.merge_hold_actor = made
    return made


def _lift_others(repo: str) -> Permission:
    config, _error = repo_config(store.load_repo(services().redis, repo))
    return Permission.parse(config.lift_others_permission) if config is not None else Permission.MAINTAIN


def facts(scope: str) -> Facts:
    """What the rule reads for a hold on ``scope``: the managed repos, the repo's lift-others
    permission (for a PR), the chat workspaces' bindings."""
    managed = g.get("merge_hold_managed")
    if not isinstance(managed, tuple):
        managed = g.merge_hold_managed = tuple(reads.managed_repos(services().redis))
    settings = services().settings
    repo = scope_repo(scope)
    lift_others = {repo.lower(): _lift_others(repo)} if repo is not None and "#" in scope else {}
    return Facts(managed=managed, lift_others=lift_others, slack=settings.slack_teams,
                 mattermost=settings.mattermost_teams)
