"""Which branches the API's rulesets bind, and whether a PR may merge by branch protection and rules.

GitHub's rules as documented: a ruleset targets branches through ``conditions.ref_name`` (``include``
and ``exclude`` lists of ``refs/heads/…`` patterns, ``~DEFAULT_BRANCH`` and ``~ALL``; an org ruleset
also names repositories in ``conditions.repository_name``); only ``active`` rulesets bind (``evaluate``
and ``disabled`` ones are not returned by ``GET …/rules/branches/{b}`` and block nothing), and a
required status check pinned to an ``integration_id`` is met only by a status that App created.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from tests.emulator.identity import APP_ID, bot_login
from tests.emulator.state import Status, Store


def ref_matches(pattern: str, ref: str, default_branch: str) -> bool:
    """GitHub's fnmatch for ref names: ``*`` stays within one path segment, ``**`` crosses them."""
    if pattern == "~ALL":
        return True
    if pattern == "~DEFAULT_BRANCH":
        return ref == f"refs/heads/{default_branch}"
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else "[^/]" if part == "?"
                    else re.escape(part) for part in re.split(r"(\*\*|\*|\?)", pattern))
    return re.fullmatch(regex, ref) is not None


def _name_matches(pattern: str, name: str) -> bool:
    return pattern == "~ALL" or ref_matches(pattern.lower(), name.lower(), "")


def applies(ruleset: dict[str, Any], repo: str, branch: str, default_branch: str) -> bool:
    """Whether an *active* ``ruleset`` binds ``branch`` of ``repo`` (lower-case full name)."""
    if ruleset["enforcement"] != "active" or ruleset["target"] != "branch":
        return False
    conditions = ruleset.get("conditions") or {}
    if ruleset["source_type"] == "Organization":
        names = conditions.get("repository_name") or {}
        short = repo.split("/", 1)[1]
        if not any(_name_matches(p, short) for p in names.get("include", [])) \
                or any(_name_matches(p, short) for p in names.get("exclude", [])):
            return False
    elif ruleset["source"].lower() != repo:
        return False
    refs = conditions.get("ref_name") or {}
    ref = f"refs/heads/{branch}"
    return any(ref_matches(p, ref, default_branch) for p in refs.get("include", [])) \
        and not any(ref_matches(p, ref, default_branch) for p in refs.get("exclude", []))


def active_rules(world: Store, repo: str, branch: str) -> list[dict[str, Any]]:
    """The rules API rulesets put on a branch, as ``GET …/rules/branches/{b}`` lists them."""
    found = world.require_repo(repo)
    out = []
    for ruleset in world.rulesets.values():
        if applies(ruleset, found.full_name.lower(), branch, found.default_branch):
            for rule in ruleset["rules"]:
                out.append({**rule, "ruleset_source_type": ruleset["source_type"],
                            "ruleset_source": ruleset["source"], "ruleset_id": ruleset["id"]})
    return out


def required_checks(world: Store, repo: str, base: str) -> list[tuple[str, int | None]]:
    """The status checks a merge into ``base`` needs, (context, app id or None), by classic protection
    and by rules (seeded, or active rulesets created through the API)."""
    found = world.repos[repo.lower()]
    key = (found.full_name.lower(), base)
    required: list[tuple[str, int | None]] = []
    protection = world.protections.get(key)
    if protection is not None:
        required += [(c["context"], c.get("app_id")) for c in protection["required_status_checks"]["checks"]]
    for rule in [*world.rules.get(key, []), *active_rules(world, found.full_name, base)]:
        if rule["type"] == "required_status_checks":
            required += [(c["context"], c.get("integration_id"))
                         for c in rule["parameters"]["required_status_checks"]]
    return list(dict.fromkeys(required))


Newest = Callable[[str, str, str, int | None], Status | None]
"""(repo lower-case, sha, context, app id or None) -> the newest status that counts for that check."""


def _blockers(required: list[tuple[str, int | None]], repo: str, sha: str, newest: Newest) -> list[str]:
    blockers = []
    for context, app_id in required:
        status = newest(repo, sha, context, app_id)
        if status is None:
            blockers.append(f"{context}: expected")
        elif status.state != "success":
            blockers.append(f"{context}: {status.state}")
    return blockers


def _counts(status: Status, app_id: int | None, ours: str) -> bool:
    """A check pinned to an App is met only by a status that App created."""
    return app_id is None or (app_id == APP_ID and status.creator == ours)


def merge_blockers(world: Store, repo: str, number: int) -> list[str]:
    """Why GitHub would refuse to merge ``repo#number`` now, by its required status checks (classic
    protection and active rules, seeded or created through the API); empty: mergeable."""
    pull = world.pulls[(repo.lower(), number)]
    if pull.state != "open":
        return [f"pull request is {pull.state}"]
    ours = bot_login(world.app_slug)

    def newest(repo_lower: str, sha: str, context: str, app_id: int | None) -> Status | None:
        return next((s for s in reversed(world.all_statuses) if s.repo.lower() == repo_lower and s.sha == sha
                     and s.context == context and _counts(s, app_id, ours)), None)

    return _blockers(required_checks(world, repo, pull.base), world.repos[repo.lower()].full_name.lower(),
                     pull.head_sha, newest)


def blocked_pulls(world: Store, pulls: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
    """`merge_blockers` of many PRs at once (the same rules), reading the statuses once: the PRs that
    may not merge, with why. For benchmarks over thousands of PRs, where one scan per PR is too slow."""
    ours = bot_login(world.app_slug)
    by_commit: dict[tuple[str, str, str], list[Status]] = {}
    for status in reversed(world.all_statuses):  # newest first
        by_commit.setdefault((status.repo.lower(), status.sha, status.context), []).append(status)

    def newest(repo_lower: str, sha: str, context: str, app_id: int | None) -> Status | None:
        return next((s for s in by_commit.get((repo_lower, sha, context), ()) if _counts(s, app_id, ours)), None)

    required: dict[tuple[str, str], list[tuple[str, int | None]]] = {}
    out: dict[tuple[str, int], list[str]] = {}
    for repo, number in pulls:
        pull = world.pulls[(repo.lower(), number)]
        if pull.state != "open":
            out[(repo, number)] = [f"pull request is {pull.state}"]
            continue
        key = (repo.lower(), pull.base)
        if key not in required:
            required[key] = required_checks(world, repo, pull.base)
        found = _blockers(required[key], world.repos[repo.lower()].full_name.lower(), pull.head_sha, newest)
        if found:
            out[(repo, number)] = found
    return out
