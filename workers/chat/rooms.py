"""Room holds and exemptions from chat: placed, lifted and listed in Redis, and the chat command job.

A room hold is one holder's hold on a scope (``o/r#12``, ``o/r``, ``o/r@glob`` or ``o``), with the room
it was placed from. Holds are per holder, but ``/unhold TARGET`` lifts every room hold with exactly that
scope placed from a chat workspace bound to the target's org, whoever placed it (Merge Freeze's
behaviour: a channel unfreezes what the channel froze; a workspace of another org cannot). A hold on a
wider or narrower scope stays: lifting ``acme/widgets`` leaves ``acme/widgets@release/*`` alone.
Exemptions let one PR through room and freeze holds (the verdict applies them). The web tier checked
who may do what (`core.chat_request`); the job checks the org binding again, as the last line.

The chat job answers through the command's ``response_url``: in the channel for what changed, only to
the user for listings and errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import requests
from redis import Redis

from core import hold_rights, keys
from core.chat_grammar import ChatCommand, ChatUsageError, parse_chat
from core.chat_request import CHAT_JOB, ChatRequest, Reply, bound_orgs, reply_url_allowed, within
from core.durations import format_duration
from core.escaping import for_chat
from core.exemptions import coverage
from core.freeze_gate import PATHS_NOTE
from core.hold_rights import ChatUser, Facts
from core.holds import Hold, named
from core.paths import describe as describe_paths
from core.repo_config import freeze_mode_of
from core.scopes import scope_applies
from state import freeze_progress, store, verdicts
from state.config_file import repo_config
from state.decoding import as_text
from state.room_holds import (
    find_hold,
    holds_in,
    lift_exemption,
    lift_holds,
    place_exemption,
    place_hold,
    room_holds_on,
)
from workers.github.gateway import NotFound
from workers.publishing import repos_in_scope, republish_scope
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

LIST_LIMIT = 25
"""Lines per section of a `/holds` answer; chat messages should stay short."""
REPLY_TIMEOUT = 10.0


# Their homes are core.chat_request and state.room_holds; named here for the imports of old.
__all__ = ["CHAT_JOB", "ChatRequest", "Reply", "lift_exemption", "lift_holds", "place_exemption", "place_hold"]


# --- the hold state ------------------------------------------------------------------------------


def _until(expires_at: datetime | None) -> str:
    return "" if expires_at is None else f" until {expires_at:%Y-%m-%d %H:%M} UTC"


def active_room_holds(redis: Redis, scope: str | None, now: datetime) -> list[Hold]:
    """Room holds that touch ``scope`` (all of them for None), oldest first; expired ones are left out
    (the reconcile deletes them: `state.room_holds.prune_expired`)."""
    repos = _all_repos(redis) if scope is None else repos_in_scope(redis, scope)
    owners = sorted({r.split("/", 1)[0] for r in repos} | ({scope.lower()} if scope and "/" not in scope else set()))
    found: list[Hold] = []
    for key in [*(keys.room_holds(r) for r in repos), *(keys.org_room_holds(o) for o in owners)]:
        for hold in holds_in(redis, key):
            if hold.active(now) and (scope is None or _touches(redis, hold, scope)):
                found.append(hold)
    return sorted(found, key=lambda h: (h.created_at, h.id))


def _touches(redis: Redis, hold: Hold, scope: str) -> bool:
    if "#" not in scope:
        return True  # a hold stored under the scope's repos or org
    repo, _, number = scope.partition("#")
    facts = store.load_pull(redis, repo, int(number)).facts
    base = facts.base if facts else ""
    return hold.scope == scope or scope_applies(hold.scope, repo, int(number), base)


def _all_repos(redis: Redis) -> list[str]:
    return sorted(as_text(m) for m in redis.smembers(keys.MANAGED_REPOS))


def open_prs_in_scope(redis: Redis, scope: str) -> int:
    """How many open PRs we know of that a hold on ``scope`` reaches (our records, before any listing)."""
    count = 0
    for repo in repos_in_scope(redis, scope):
        numbers = store.open_numbers(redis, repo)
        if "#" in scope:
            count += int(int(scope.partition("#")[2]) in numbers)
        elif "@" in scope:
            for number in numbers:
                facts = store.load_pull(redis, repo, number).facts
                count += int(facts is not None and scope_applies(scope, repo, number, facts.base))
        else:
            count += len(numbers)
    return count


def held_prs(redis: Redis, scope: str | None) -> list[tuple[str, dict[str, Any]]]:
    """``(o/r#n, verdict record)`` of each held PR within ``scope``."""
    found = []
    repos = _all_repos(redis) if scope is None else repos_in_scope(redis, scope)
    for repo, number, record in verdicts.held_records(redis, list(repos)):
        if record is None:
            continue
        if scope is not None and ("#" in scope or "@" in scope) and not scope_applies(
                scope, repo, number, str(record.get("base") or "")):
            continue
        found.append((f"{repo}#{number}", record))
    return found


def listing(redis: Redis, scope: str | None, now: datetime, orgs: tuple[str, ...] | None = None) -> str:
    """The `/holds [TARGET]` answer; without a target, only the holds within ``orgs`` (None: all)."""
    where = f" on {scope}" if scope else ""
    if scope is None and orgs is not None:
        rooms = [h for org in orgs for h in active_room_holds(redis, org, now)]
        held = [pr for org in orgs for pr in held_prs(redis, org)]
    else:
        rooms = active_room_holds(redis, scope, now)
        held = held_prs(redis, scope)
    if not rooms and not held:
        return f"No active holds{where}."
    lines: list[str] = []
    if rooms:
        lines.append(f"Room holds{where} ({len(rooms)}):")
        shown = rooms[:LIST_LIMIT]
        progress = _progress(redis, shown, now)
        lines += [f"• {h.scope}{_where(h)}: {named(h.holder)} in {h.origin}: {h.reason}{_until(h.expires_at)}"
                  f"{progress.get(h.id, '')}" for h in shown]
        lines += [f"  … and {len(rooms) - LIST_LIMIT} more"] if len(rooms) > LIST_LIMIT else []
    if held:
        lines.append(f"Held PRs{where} ({len(held)}):")
        lines += [f"• {name}: {record.get('description', '')}" for name, record in held[:LIST_LIMIT]]
        lines += [f"  … and {len(held) - LIST_LIMIT} more"] if len(held) > LIST_LIMIT else []
    return "\n".join(lines)


def _where(hold: Hold) -> str:
    return f" (paths {describe_paths(hold.paths)})" if hold.paths else ""


def _progress(redis: Redis, holds: list[Hold], now: datetime) -> dict[str, str]:
    """How far each freeze among ``holds`` has reached GitHub (`state.freeze_progress`), as a suffix."""
    repos = _all_repos(redis)
    ruled = [r for r in repos if redis.exists(keys.freeze_ruleset(r))]
    out = {}
    for hold_id, found in freeze_progress.progress(redis, holds, repos, now, ruled).items():
        parts = [f"{label} {count.done} of {count.total}" for label, count in (
            ("rulesets active", found.rulesets), ("statuses written", found.statuses),
            ("descriptions written", found.descriptions)) if count.total]
        if found.mode:
            parts.insert(0, found.mode)
        if found.fallbacks:
            parts.append(f"{len(found.fallbacks)} through statuses")
        if found.deferred:
            parts.append(f"{len(found.deferred)} bind by {max(until for _repo, until in found.deferred)[11:16]} UTC "
                         "(GitHub's hourly write window)")
        out[hold_id] = f" — {'; '.join(parts)}" if parts else ""
    return out


# --- the chat command job ------------------------------------------------------------------------


def _managed(redis: Redis, scope: str) -> bool:
    repos = repos_in_scope(redis, scope)
    return bool(repos) and all(redis.sismember(keys.MANAGED_REPOS, r) for r in repos)


def _reach(redis: Redis, scope: str) -> str:
    count = open_prs_in_scope(redis, scope)
    if "#" in scope:
        return ""
    prs = f"{count} open PR{'' if count == 1 else 's'}"
    if "/" not in scope:
        repos = len(repos_in_scope(redis, scope))
        return f" ({prs} in {repos} repo{'' if repos == 1 else 's'})"
    return f" ({prs})"


def chat_may_lift(rt: Runtime, req: ChatRequest) -> Callable[[Hold], bool]:
    """The one rule of every surface (`core.hold_rights.may_lift`) for this command's user: a chat
    admin or not as the web tier judged them (``req.admin``; it let only allowed users through), their
    workspace's orgs read again here, as the last line. Only holds placed from chat, from a workspace
    bound to the scope's org, are lifted."""
    settings = rt.settings
    binding = settings.slack_teams if req.platform == "slack" else settings.mattermost_teams
    user = ChatUser(req.platform, req.team_id, req.user_id, bound_orgs(binding, req.team_id, req.enterprise_id) or (),
                    admin=req.admin == "1", allowed=True)
    facts = Facts(slack=settings.slack_teams, mattermost=settings.mattermost_teams)

    def may_lift(hold: Hold) -> bool:
        return hold_rights.may_lift(user, hold.id, hold.scope, facts)
    return may_lift


def republish_job(scope: str) -> None:
    """Republish what a hold on ``scope`` reaches (queued by the API and dashboard after a change)."""
    republish_scope(current(), scope)


def execute(rt: Runtime, req: ChatRequest, command: ChatCommand) -> Reply:
    """Apply one well-formed chat command; the reply says what happened."""
    redis, now, who = rt.redis, req.received(datetime.now(UTC)), f"@{req.user_name or req.user_id}"
    if command.scope is not None and not within(req.bound, command.scope):
        return Reply(f"This workspace may not act on {command.scope}. Nothing was recorded.")
    if command.action == "list":
        return Reply(listing(redis, command.scope, now, req.bound))
    scope = str(command.scope)
    if not _managed(redis, scope):
        return Reply(f"merge-hold does not manage {scope}: is the GitHub App installed there?")
    span = f" for {format_duration(command.duration)}" if command.duration else ""
    if command.action == "hold":
        holder_id = f"{req.platform}:{req.team_id}:{req.user_id}"
        # One hold per holder and scope: a second /hold on the same target replaces the first; say so.
        earlier = find_hold(redis, f"room:{holder_id}:{scope}")
        hold = place_hold(redis, scope, holder=req.user_name or req.user_id, reason=command.reason,
                          holder_id=holder_id, origin=req.room, now=now, duration=command.duration,
                          paths=command.paths)
        gate = republish_scope(rt, scope, now)
        if hold.paths:
            gate = _path_gate(rt, scope)  # the rulesets do not carry it, whatever they say
        where = f" where a PR changes {describe_paths(hold.paths)}" if hold.paths else ""
        replaced = "" if earlier is None or not earlier.active(now) else \
            f" (this replaces {who}'s earlier hold on {scope}: {earlier.reason})"
        return Reply(f"{who} held {scope}{_reach(redis, scope)}{where}{span}{_until(hold.expires_at)}: "
                     f"{command.reason}{replaced}{gate}", in_channel=True)
    if command.action == "unhold":
        may_lift = chat_may_lift(rt, req)
        lifted = lift_holds(redis, scope, actor=req.user_name, origin=req.room,
                            only={h.id for h in room_holds_on(redis, scope) if may_lift(h)})
        if not lifted:
            return Reply(f"No room hold on exactly {scope}. `/holds {scope}` lists the holds that touch it.")
        gate = republish_scope(rt, scope, now)
        holders = ", ".join(sorted({named(h.holder) for h in lifted}))
        return Reply(f"{who} lifted the hold{'s' if len(lifted) > 1 else ''} on {scope}{_reach(redis, scope)} "
                     f"(placed by {holders}){gate}", in_channel=True)
    if command.action == "exempt":
        head = _head(rt, scope)
        if head is None:
            return Reply(f"merge-hold cannot see the head commit of {scope}: is it an open pull request? "
                         "Nothing was recorded.")
        exemption = place_exemption(redis, scope, by=req.user_name, reason=command.reason, origin=req.room,
                                    now=now, duration=command.duration, head_sha=head, sticky=command.sticky,
                                    channel=f"{req.platform}:{req.team_id}:{req.channel_id}")
        republish_scope(rt, scope)
        return Reply(f"{who} exempted {scope} from room and freeze holds {coverage(head, exemption.sticky)}"
                     f"{span}{_until(exemption.expires_at)}: {command.reason}", in_channel=True)
    ended = lift_exemption(redis, scope, actor=req.user_name, origin=req.room)
    if ended is None:
        return Reply(f"{scope} has no exemption.")
    republish_scope(rt, scope)
    return Reply(f"{who} ended the exemption of {scope} (granted by @{ended.by}: {ended.reason})", in_channel=True)


def _head(rt: Runtime, pr_scope: str) -> str | None:
    """The PR's head commit, the one an exemption covers: as merge-hold knows it, else as GitHub says."""
    repo, _, number = pr_scope.partition("#")
    head = store.load_pull(rt.redis, repo, int(number)).head_sha
    if head is not None:
        return head
    try:
        pull = rt.github.get_pull(repo, int(number))
    except NotFound:
        return None
    sha = (pull.get("head") or {}).get("sha") if pull.get("state") == "open" else None
    return str(sha) if sha else None


def _path_gate(rt: Runtime, scope: str) -> str:
    """What the reply says of a path-scoped hold where repos freeze through a ruleset: it does not."""
    ruled = [repo for repo in repos_in_scope(rt.redis, scope)
             if freeze_mode_of(repo_config(store.load_repo(rt.redis, repo))[0], rt.settings.freeze_mode) == "ruleset"]
    if not ruled:
        return ""
    return f" · freeze_mode: ruleset in {len(ruled)} repo{'s' if len(ruled) > 1 else ''}, but {PATHS_NOTE}"


def respond(url: str, reply: Reply, *, platform: str = "slack", only_under: str | None = None) -> bool:
    """POST the reply to the command's ``response_url``, its text escaped for ``platform`` (it carries
    reasons and names from outside: `core.escaping`); False (logged) when that fails. With
    ``only_under`` (Mattermost: MATTERMOST_URL) a URL elsewhere gets no request at all. The URL is a
    bearer credential (anyone holding it may post to the channel): it is never logged."""
    if not url:
        return False
    if only_under is not None and not reply_url_allowed(url, only_under or None):
        log.warning("not answering a chat command: its response_url is not under MATTERMOST_URL")
        return False
    body = {"response_type": "in_channel" if reply.in_channel else "ephemeral",
            "text": for_chat(platform, reply.text)}
    try:
        response = requests.post(url, json=body, timeout=REPLY_TIMEOUT, allow_redirects=False)
    except requests.RequestException as exc:
        log.warning("could not answer a chat command through its response_url: %s", type(exc).__name__)
        return False
    if not response.ok:
        log.warning("could not answer a chat command through its response_url: HTTP %s", response.status_code)
        return False
    return True


def chat_command_job(data: dict[str, Any]) -> str:
    """The rq job behind `POST /chat/*`: parse again (the app already refused malformed text), apply,
    answer through ``response_url``."""
    rt = current()
    req = ChatRequest.from_dict(data)
    only_under = (rt.settings.mattermost_url or "") if req.platform == "mattermost" else None
    parsed = parse_chat(req.command, req.text)
    if isinstance(parsed, ChatUsageError):
        reply = Reply(parsed.text)
    else:
        try:
            reply = execute(rt, req, parsed)
        except Exception:
            respond(req.response_url, Reply("merge-hold failed to carry out that command; try again."),
                    platform=req.platform, only_under=only_under)
            raise
    respond(req.response_url, reply, platform=req.platform, only_under=only_under)
    return reply.text
