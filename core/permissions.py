"""Repository permission levels, ordered, and what ``author_association`` tells without a lookup."""

from __future__ import annotations

from enum import IntEnum


class Permission(IntEnum):
    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5

    @classmethod
    def parse(cls, text: str | None) -> Permission:
        """GitHub's ``role_name``/``permission`` strings (``admin``, ``maintain``, ``write``, ``push``...)."""
        aliases = {"push": "write", "pull": "read"}
        name = aliases.get((text or "none").lower(), (text or "none").lower())
        return cls.__members__.get(name.upper(), cls.NONE)


NO_ACCESS_ASSOCIATIONS = frozenset(
    {"NONE", "CONTRIBUTOR", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN"}
)


def permission_from_association(association: str | None) -> Permission | None:
    """What ``comment.author_association`` settles alone; ``None`` means "look it up".

    OWNER is the repo's owner (admin). The no-access associations cannot carry write access (an org
    member or a collaborator would be MEMBER or COLLABORATOR). MEMBER and COLLABORATOR range from read
    to admin, so they need the (cached) permission lookup.
    """
    assoc = (association or "NONE").upper()
    if assoc == "OWNER":
        return Permission.ADMIN
    if assoc in NO_ACCESS_ASSOCIATIONS:
        return Permission.NONE
    return None
