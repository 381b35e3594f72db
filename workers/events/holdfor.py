"""`/hold-for`: place a hold that waits on another PR or issue, and lift it when that one lands.

The hold is stored beside the repo's scoped holds (`keys.room_holds`, scope ``owner/repo#N``), with a
comment source, so the verdict counts it like any hold a person put on the PR and exemptions never
pass it. An index per dependency (`keys.hold_for_waiters`) finds the waiting PRs when the dependency's
`pull_request` (closed and merged) or `issues` (closed) event arrives; each is lifted with an audit
record and a reply on the waiting PR. Grammar and rules: `core/holdfor.py`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from github import GithubException

from core import keys
from core.comment_rules import Outcome
from core.escaping import for_github_comment
from core.holdfor import Dependency, hold_id, lifts, make_hold, parse_hold_for
from core.holds import Hold, from_iso
from core.permissions import Permission
from core.repo_config import RepoConfig
from state import audit, room_holds
from state.decoding import as_text
from workers.github.gateway import NotFound
from workers.publishing import request_recompute
from workers.runtime import Runtime

log = logging.getLogger(__name__)


def on_comment(rt: Runtime, repo: str, number: int, comment: dict[str, Any], *, permission: Permission,
               is_author: bool, config: RepoConfig) -> list[Outcome]:
    """Apply the comment's `/hold-for` lines; the outcomes join the comment's others (audit, answer)."""
    actor = str((comment.get("user") or {}).get("login", ""))
    commands = parse_hold_for(comment.get("body") or "", repo)
    if not commands:
        return []
    may = permission >= Permission.parse(config.hold_permission) or (is_author and config.author_can_hold)
    at = from_iso(comment.get("created_at")) or datetime.now(UTC)
    origin = str(comment.get("html_url", ""))
    outcomes: list[Outcome] = []
    for command in commands:
        if command.error:
            outcomes.append(Outcome("refused", actor, actor, "", f"@{actor}: not done, {command.error}"))
        elif not may:
            rule = f"{config.hold_permission} access" + (" or being the PR author" if config.author_can_hold else "")
            outcomes.append(Outcome("refused", actor, actor, "", f"@{actor}: not done, /hold-for needs {rule}"))
        elif command.target is None:
            outcomes += _cancel(rt, repo, number, actor, origin)
        else:
            outcomes.append(_place(rt, repo, number, actor, command.target, at, origin))
    return outcomes


def _place(rt: Runtime, repo: str, number: int, actor: str, dependency: Dependency, at: datetime,
           origin: str) -> Outcome:
    if dependency.repo.lower() == repo.lower() and dependency.number == number:
        return Outcome("refused", actor, actor, "", f"@{actor}: not done, a PR cannot wait for itself")
    try:
        found = rt.github.get_issue(dependency.repo, dependency.number)
    except (NotFound, GithubException) as exc:
        status = getattr(exc, "status", 404)
        return Outcome("refused", actor, actor, "", f"@{actor}: not done, merge-hold cannot see {dependency} "
                       f"({status}; it must be in a repository this App is installed on)")
    pull = found.get("pull_request") is not None
    done = (pull and bool((found.get("pull_request") or {}).get("merged_at"))) or (
        not pull and found.get("state") == "closed")
    if done:
        return Outcome("refused", actor, actor, "", f"@{actor}: not done, {dependency} is already "
                       f"{'merged' if pull else 'closed'}")
    hold = make_hold(f"{repo}#{number}", actor, dependency, pull=pull, at=at, origin=origin)
    with rt.redis.pipeline() as pipe:
        room_holds.put(pipe, hold)
        pipe.sadd(keys.hold_for_waiters(dependency.repo, dependency.number), f"{repo}#{number} {actor}")
        pipe.execute()
    request_recompute(rt, repo, number)
    return Outcome("held", actor, actor, hold.reason, f"@{actor} held this PR until {dependency} "
                   f"{'merges' if pull else 'closes'}")


def _waiting_holds(rt: Runtime, repo: str, number: int, holder: str | None) -> list[Hold]:
    found = []
    for hold in room_holds.holds_in(rt.redis, keys.room_holds(repo)):
        if hold.id.startswith("holdfor:") and hold.scope.lower() == f"{repo}#{number}".lower() and (
                holder is None or hold.holder.lower() == holder.lower()):
            found.append(hold)
    return found


def _cancel(rt: Runtime, repo: str, number: int, actor: str, origin: str) -> list[Outcome]:
    holds = _waiting_holds(rt, repo, number, actor)
    if not holds:
        return [Outcome("refused", actor, actor, "", f"@{actor}: not done, you have no /hold-for on this PR")]
    room_holds.remove(rt.redis, f"{repo}#{number}", [h.id for h in holds])
    request_recompute(rt, repo, number)
    return [Outcome("lifted", actor, actor, "", f"@{actor} lifted their /hold-for ({len(holds)})")]


def on_dependency_event(rt: Runtime, repo: str, number: int, *, kind: str, action: str, merged: bool) -> int:
    """A PR of `repo` closed (kind ``pull``) or an issue closed (``issue``): lift what waited on it.
    Returns how many holds were lifted; a redelivery finds the index empty and lifts nothing."""
    if not lifts(kind, action, merged):
        return 0
    dependency = Dependency(repo, number)
    index = keys.hold_for_waiters(repo, number)
    lifted = 0
    for raw in rt.redis.smembers(index):
        entry = as_text(raw)
        waiting, _, holder = entry.partition(" ")
        waiting_repo, _, waiting_number = waiting.rpartition("#")
        hid = hold_id(holder, dependency)
        if room_holds.remove(rt.redis, waiting, [hid]):
            lifted += 1
            what = "merged" if kind == "pull" else "closed"
            audit.record(rt.redis, waiting_repo, "hold.lifted", number=int(waiting_number), actor="merge-hold",
                        target=holder, reason=f"{dependency} {what}", message=f"/hold-for {dependency}: {what}")
            request_recompute(rt, waiting_repo, int(waiting_number))
            _tell(rt, waiting_repo, int(waiting_number),
                  for_github_comment(f"@{holder}'s hold lifted: {dependency} was {what}.", [holder]))
        rt.redis.srem(index, raw)
    return lifted


def _tell(rt: Runtime, repo: str, number: int, text: str) -> None:
    try:
        rt.github.reply(repo, number, text)
    except (GithubException, NotFound, OSError) as exc:  # an answer never blocks the lift
        log.warning("could not reply on %s#%s (needs Issues: write): %s", repo, number, exc)


def on_issues(rt: Runtime, payload: dict[str, Any]) -> str:
    """The `issues` event handler: only `closed` matters (a /hold-for waiting on the issue)."""
    repo = (payload.get("repository") or {}).get("full_name")
    issue = payload.get("issue") or {}
    if not repo or not issue.get("number") or issue.get("pull_request"):
        return "ignored"
    lifted = on_dependency_event(rt, str(repo), int(issue["number"]), kind="issue",
                                 action=str(payload.get("action")), merged=False)
    return f"hold-for lifted {lifted}"
