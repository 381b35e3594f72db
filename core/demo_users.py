"""The pretend GitHub users of `merge-hold dev`'s demo sign-in, and the permissions they are emulated with.

Only a dry run on loopback offers them (no App credentials, no completed `/setup`, a loopback bind):
there is no GitHub to ask who someone is, so a newcomer picks a user and the dashboard treats them as
that GitHub user with the roles below — the same signed-in viewer a GitHub sign-in fills, so the PR
page's Hold and Lift, `/rooms` and its admin-only forms work as they would for a real user. The roles
are per repo, as GitHub's are (`fnmatch` patterns over `owner/repo`, first match wins); `merge-hold dev`
prints this table. The chat ids are the demo Slack workspace `merge-hold simulate chat` signs for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase


@dataclass(frozen=True)
class DemoUser:
    login: str
    summary: str
    roles: tuple[tuple[str, str], ...]
    """``(owner/repo pattern, role)``: admin, maintain, write, triage or read (GitHub's names)."""

    def role_in(self, repo: str) -> str | None:
        return next((role for pattern, role in self.roles if fnmatchcase(repo.lower(), pattern)), None)


DEMO_USERS: tuple[DemoUser, ...] = (
    DemoUser("alice", "write on acme/widgets: holds and lifts her own holds", (("acme/widgets", "write"),)),
    DemoUser("maint", "maintain on acme/widgets: also lifts others' holds", (("acme/widgets", "maintain"),)),
    DemoUser("ada", "admin of every acme repo: freezes and admin forms too", (("acme/*", "admin"),)),
    DemoUser("rita", "read on acme/widgets: sees, and is refused", (("acme/widgets", "read"),)),
)

DEMO_SLACK_TEAM = "TDEMO"
DEMO_SLACK_USER = "UDEMO"
DEMO_SLACK_ORGS = ("acme",)
"""The demo workspace, its chat admin (repo- and org-wide holds), and the orgs it is bound to."""


def find(login: str) -> DemoUser | None:
    return next((user for user in DEMO_USERS if user.login == login.lower()), None)


def roles(login: str, repos: Iterable[str]) -> dict[str, str]:
    """The lower-cased repos among ``repos`` that ``login`` may see, with their role: what
    `app.github_login.readable_repos` gives for a real GitHub user. Unknown logins see nothing."""
    user = find(login)
    if user is None:
        return {}
    found = {repo.lower(): user.role_in(repo) for repo in repos}
    return {repo: role for repo, role in sorted(found.items()) if role is not None}


def table() -> str:
    """The roster as `merge-hold dev` prints it."""
    width = max(len(user.login) for user in DEMO_USERS)
    return "\n".join(f"      {user.login:<{width}}  {user.summary}" for user in DEMO_USERS)
