"""Targets of room holds as people type them, normalised to the scope strings of `core.scopes`.

``owner/repo#12``, a PR URL (github.com or a GitHub Enterprise host), ``owner/repo``,
``owner/repo@branch-glob`` or ``owner`` become ``o/r#12``, ``o/r``, ``o/r@glob`` and ``o``. Owner and
repo names are lower-cased (GitHub compares them case-insensitively); branch globs keep their case.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$")
"""GitHub logins: letters, digits and hyphens, at most 39 characters, not starting with a hyphen.
Underscores are allowed for Enterprise Managed Users (``alice_acme``). Trailing and doubled hyphens are
not rejected: GitHub refuses them today, but older accounts carry them."""

REPO = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
"""Repository names: letters, digits, ``.``, ``_`` and ``-``, at most 100 characters (not ``.``/``..``)."""

_NUMBER = re.compile(r"^[1-9][0-9]{0,9}$")
_BAD_GLOB = re.compile(r"[\s\\^:~]|\.\.|@\{|//|^/|/$|\.lock$|^-")
"""What git refuses in a branch name (`git check-ref-format`), minus the glob characters ``*?[]``."""

_SLACK_LINK = re.compile(r"^<(?P<url>[^|<>]+)(?:\|[^<>]*)?>$")


class TargetError(ValueError):
    """A target that names no PR, repo, branch glob or org; the message says what is wrong."""


def unwrap_slack(text: str) -> str:
    """Slack sends links as ``<https://…|label>`` or ``<https://…>``; this gives back the URL."""
    found = _SLACK_LINK.match(text.strip())
    return found["url"] if found else text.strip()


def _repo(owner: str, name: str, original: str) -> str:
    if not OWNER.fullmatch(owner):
        raise TargetError(f"{original!r}: {owner!r} is not a GitHub user or organisation name")
    if not REPO.fullmatch(name) or name in (".", ".."):
        raise TargetError(f"{original!r}: {name!r} is not a GitHub repository name")
    return f"{owner.lower()}/{name.lower()}"


def _number(text: str, original: str) -> int:
    if not _NUMBER.fullmatch(text):
        raise TargetError(f"{original!r}: {text!r} is not a pull request number")
    return int(text)


def _from_url(url: str, original: str) -> str:
    parts = urlsplit(url)
    if not parts.netloc or any(c.isspace() for c in url):
        raise TargetError(f"{original!r} is not a GitHub URL")
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) == 2 and segments[0] == "orgs":
        segments = segments[1:]
    # GitHub Enterprise Server may be served under a path prefix; the owner/repo/pull/N tail decides.
    if len(segments) >= 4 and segments[-2] in ("pull", "pulls"):
        segments = segments[-4:]
    elif len(segments) >= 4 and segments[2] in ("pull", "pulls"):
        segments = segments[:4]
    if len(segments) == 4 and segments[2] in ("pull", "pulls"):
        owner, name, _, number = segments
        return f"{_repo(owner, name, original)}#{_number(number, original)}"
    if len(segments) == 2:
        owner, name = segments
        return _repo(owner, name.removesuffix(".git"), original)
    if len(segments) == 1:
        return parse_owner(segments[0], original)
    raise TargetError(f"{original!r}: a URL target is a pull request, repository or organisation page")


def parse_owner(text: str, original: str | None = None) -> str:
    if not OWNER.fullmatch(text):
        raise TargetError(f"{original or text!r}: {text!r} is not a GitHub user or organisation name")
    return text.lower()


def parse_target(text: str) -> str:
    """A scope string for a target, or `TargetError`."""
    original = text
    target = unwrap_slack(text)
    if not target:
        raise TargetError("a target is required")
    if re.match(r"^https?://", target, re.IGNORECASE):
        return _from_url(target, original)
    if "#" in target:
        repo, _, number = target.partition("#")
        owner, slash, name = repo.partition("/")
        if not slash:
            raise TargetError(f"{original!r}: a PR target is owner/repo#NUMBER")
        return f"{_repo(owner, name, original)}#{_number(number, original)}"
    if "@" in target:
        repo, _, glob = target.partition("@")
        owner, slash, name = repo.partition("/")
        if not slash:
            raise TargetError(f"{original!r}: a branch target is owner/repo@BRANCH-GLOB")
        if not glob or _BAD_GLOB.search(glob):
            raise TargetError(f"{original!r}: {glob!r} is not a branch name or glob")
        return f"{_repo(owner, name, original)}@{glob}"
    if "/" in target:
        owner, _, name = target.partition("/")
        return _repo(owner, name, original)
    return parse_owner(target, original)


def is_pr_scope(scope: str) -> bool:
    return "#" in scope
