"""Who may grant an exemption, and how one is told (pure).

An exemption lets one PR through room and freeze holds (design §3 "Exceptions"). It comes only from
signals a maintainer controls — never from the PR's branch name, title, body or author:

| door | who | a sticky one (follows every push) |
|---|---|---|
| chat ``/hold exempt`` | a chat admin (``MERGE_HOLD_CHAT_ADMINS``) | a chat admin |
| API ``POST /api/v1/exemptions`` | a token with the ``hold`` scope | an ``admin`` token |
| the PR's page | maintain or admin on the repo | admin on the repo |
| an exempt label | the `labeled` event's sender has maintain or admin | never (a push ends it) |

Each door turns its actor into a `Permission` (a chat admin and an admin token are admin, a hold token
maintain) and asks `refusal`: the one place this rule lives, so that the wide-hold permission model
can take it over in one move.
"""

from __future__ import annotations

from enum import StrEnum

from core.permissions import Permission

GRANT = Permission.MAINTAIN
"""The least permission that grants (or ends) an exemption bound to the PR's head."""
STICKY = Permission.ADMIN
"""A sticky exemption lets every later push through unseen: admins only."""


class Door(StrEnum):
    CHAT = "chat"
    API = "api"
    PAGE = "page"
    LABEL = "label"


_NEEDS = {
    Door.CHAT: ("an exemption needs a merge-hold chat admin (MERGE_HOLD_CHAT_ADMINS)",
                "a sticky exemption needs a merge-hold chat admin (MERGE_HOLD_CHAT_ADMINS)"),
    Door.API: ("an exemption needs a token with the hold scope", "a sticky exemption needs an admin token"),
    Door.PAGE: ("an exemption needs maintain or admin access to the repository",
                "a sticky exemption needs admin access to the repository"),
    Door.LABEL: ("an exempt label counts only when someone with maintain or admin access adds it",
                 "an exempt label is never sticky"),
}


def refusal(door: Door, role: Permission, *, sticky: bool = False) -> str | None:
    """Why an actor of ``role`` may not grant (or end) this exemption through ``door``; None: they may."""
    if door is Door.LABEL and sticky:
        return _NEEDS[door][1]
    needed = STICKY if sticky else GRANT
    return None if role >= needed else _NEEDS[door][int(sticky)]


def coverage(head_sha: str | None, sticky: bool) -> str:
    """What a granted exemption covers, for replies: ``on its head abc1234 (a new push ends it)``."""
    if sticky:
        return "on every head (sticky: new pushes too)"
    return f"on its head {(head_sha or '?')[:7]} (a new push ends it)"


def ended_by_push(pr: str, by: str, granted_head: str | None, head_sha: str | None, reason: str) -> str:
    """The line the grantor hears when a push ends an exemption."""
    return (f"The exemption of {pr} that @{by} granted ({reason}) covered {(granted_head or '?')[:7]}; "
            f"a push moved the PR to {(head_sha or '?')[:7]}, so room and freeze holds hold it again. "
            "Exempt it again to let the new head through.")


def label_ended_by_push(label: str, by: str, granted_head: str | None, head_sha: str | None) -> str:
    """The reply on the PR when a push ends what an exempt label let through."""
    return (f"The exempt label `{label}` that @{by} added covered {(granted_head or '?')[:7]}; a push moved this "
            f"PR to {(head_sha or '?')[:7]}, so room and freeze holds hold it again. Someone with maintain or "
            "admin access can remove the label and add it again to let the new head through.")


def label_refused(label: str, sender: str) -> str:
    """The reply on the PR when someone without maintain or admin access adds an exempt label."""
    return (f"@{sender}: the label `{label}` does not let this PR through room and freeze holds — "
            f"{_NEEDS[Door.LABEL][0]}. The label stays; it exempts nothing.")
