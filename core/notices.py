"""Chat notifications, pure: which audit events a subscribed channel hears, and how they read.

Audit events (`state.audit.record`): ``hold.{held,lifted,lifted_all}`` (PR comments and reviews,
`/hold-for`), ``room.*`` (chat, API, dashboard), ``tree.*``, ``verdict.held`` / ``verdict.free``,
``pr.approved`` / ``pr.queued``, and what went wrong afterwards: ``incident.recorded`` (a held PR
merged), ``gate.*`` and ``app.(un)suspended`` (the tamper watch), ``status.forged`` (put back). A
channel subscribed (``/hold subscribe TARGET``) to a repo or an org hears, for that repo or any repo of
that org: holds placed and lifted, exemptions, freezes and the tree closer starting and ending, a held
PR approved or added to a merge queue, an agent's merge the hook blocked, a PR merged while held, a
branch that stopped requiring merge-hold (and its return), and a forged status put back. Everything
else the audit log records (statuses posted, fan-outs, config reloads) stays out of chat: it is
bookkeeping, not news.

`notice` turns one audit event into one line (or None); `message` folds a channel's pending lines
into one chat message, so a burst (a freeze reaching forty PRs) is one post, not forty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.holds import from_iso

_REVIEW_LIFT = re.compile(r"^(@\S+ approved|review \S+ by @\S+ dismissed)$")
"""A review's own register cleared: every approval says so, held or not; `pr.approved` tells the news."""
MAX_LINES = 20
"""Lines shown in one message; the rest are counted ("…and 12 more"), never silently dropped."""


@dataclass(frozen=True)
class Notice:
    """One line of news about ``repo`` (or, for an org-wide hold, ``org`` alone)."""

    org: str
    repo: str | None
    text: str

    @property
    def targets(self) -> tuple[str, ...]:
        """The subscription targets that hear it: the repo and its org."""
        return (self.repo, self.org) if self.repo else (self.org,)


def _org(repo: str | None, scope: str | None) -> str:
    return (repo or scope or "").split("/", 1)[0].split("#", 1)[0].split("@", 1)[0].lower()


def _pr(repo: str | None, data: dict[str, Any]) -> str:
    number = data.get("number")
    return f"{repo}#{number}" if repo and number not in (None, "") else str(data.get("scope") or repo or "")


def _reason(data: dict[str, Any]) -> str:
    reason = str(data.get("reason") or "").strip()
    return f": {reason}" if reason else ""


def _until(data: dict[str, Any]) -> str:
    expires = data.get("expires_at")
    return f" until {expires}" if expires else ""


def _freezes(data: dict[str, Any]) -> list[str]:
    holds = data.get("holds") or []
    return [str(h.get("id", "")).removeprefix("freeze:") for h in holds
            if isinstance(h, dict) and h.get("source") == "freeze"]


def _text(event: str, repo: str | None, data: dict[str, Any]) -> str | None:
    pr = _pr(repo, data)
    scope = str(data.get("scope") or pr)
    if event == "hold.held":
        return f":no_entry: {data.get('actor')} held {pr}{_reason(data)}"
    if event == "hold.lifted" and not _REVIEW_LIFT.match(str(data.get("message") or "")):
        return f":white_check_mark: {data.get('actor')} lifted the hold on {pr}{_reason(data)}"
    if event == "hold.lifted_all":
        return f":white_check_mark: {data.get('actor')} lifted every hold on {pr}{_reason(data)}"
    if event == "room.held":
        paths = data.get("paths")
        where = f" where a PR changes {', '.join(map(str, paths))}" if isinstance(paths, list) and paths else ""
        return f":no_entry: {data.get('holder')} held {scope}{where}{_until(data)}{_reason(data)}"
    if event == "room.lifted":
        return f":white_check_mark: {data.get('actor')} lifted the hold on {scope}"
    if event == "room.exempted":
        return f":unlock: {data.get('by')} exempted {pr} from room and freeze holds{_until(data)}{_reason(data)}"
    if event == "room.unexempted":
        return f":lock: {data.get('actor')} ended the exemption of {pr}"
    if event == "exemption.ended":
        return (f":lock: a push moved {pr} to {str(data.get('head_sha') or '?')[:7]}: the exemption @{data.get('by')} "
                f"granted covered {str(data.get('granted_head') or '?')[:7]} only; room and freeze holds hold it again")
    if event == "tree.closed":
        return f":red_circle: {scope} is closed{_reason(data)}"
    if event == "tree.opened":
        return f":large_green_circle: {scope} is open again"
    if event == "verdict.held" and _freezes(data):
        return f":snowflake: freeze {', '.join(_freezes(data))} started: {pr} is held"
    if event == "freeze.ended":
        return f":sunny: freeze {data.get('name')} ended on {repo}"
    if event == "pr.approved":
        return f":eyes: held PR {pr} was approved by {data.get('by')}; it stays held"
    if event == "pr.queued":
        return f":eyes: held PR {pr} was added to the merge queue; its group stays held"
    return _watch_text(event, repo, pr, data)


def _by(data: dict[str, Any]) -> str:
    return f" (changed by @{data['actor']})" if data.get("actor") else ""


def _watch_text(event: str, repo: str | None, pr: str, data: dict[str, Any]) -> str | None:
    """What the judged-afterwards layer found (`workers.events.incidents`, `workers.events.tamper`)."""
    where = f"{repo}@{data.get('branch')}"
    if event == "incident.recorded":
        who = f"@{data['merged_by']}" if data.get("merged_by") else "someone"
        return f":rotating_light: {pr} was merged by {who} although {data.get('reason') or 'merge-hold held it'}"
    if event == "gate.unenforced":
        return f":rotating_light: {where} no longer requires merge-hold{_by(data)}: holds there are not enforced"
    if event == "gate.undetermined":
        return f":warning: merge-hold cannot confirm that {where} requires it{_by(data)}: {data.get('detail')}"
    if event == "gate.restored":
        return f":white_check_mark: {where} requires merge-hold again"
    if event == "app.suspended":
        return (f":rotating_light: merge-hold was suspended on {repo}{_by(data)}: "
                "it can no longer post its status, so holds placed, lifted or expiring there do not reach GitHub")
    if event == "app.unsuspended":
        return f":white_check_mark: merge-hold is active again on {repo}"
    if event == "status.forged" and data.get("overwritten"):
        return (f":warning: @{data.get('sender') or '?'} posted a merge-hold {data.get('state')} on {pr} that "
                "merge-hold did not post; the real verdict was put back")
    return None


def notice(event: str, data: dict[str, Any]) -> Notice | None:
    """The chat line for one audit event (``data`` as `state.audit.record` records it), or None."""
    repo = data.get("repo") if isinstance(data.get("repo"), str) else None
    scope = data.get("scope") if isinstance(data.get("scope"), str) else None
    text = _text(event, repo, data)
    if text is None:
        return None
    return Notice(org=_org(repo, scope), repo=repo.lower() if repo else None, text=text)


def remembered(holds: list[Any]) -> list[dict[str, str]]:
    """What to keep of a held PR's holds to tell, when it goes free, why: freezes and timed holds."""
    kept = []
    for hold in holds:
        if isinstance(hold, dict) and (hold.get("source") == "freeze" or hold.get("expires_at")):
            kept.append({k: str(hold.get(k) or "") for k in ("id", "source", "scope", "expires_at")})
    return kept


def _expired(kept: dict[str, str], now: datetime) -> bool:
    ends = from_iso(kept.get("expires_at") or None)
    return kept.get("source") != "freeze" and ends is not None and ends <= now


def freed(repo: str, number: int, kept: list[dict[str, str]], now: datetime) -> Notice | None:
    """A PR held by a freeze or a timed hold went free: the freeze ended, or the hold expired (a hold
    lifted by someone was announced when it was lifted)."""
    pr = f"{repo}#{number}"
    freezes = [k["id"].removeprefix("freeze:") for k in kept if k.get("source") == "freeze"]
    expired = [k["scope"] or pr for k in kept if _expired(k, now)]
    lines = [f":sunny: freeze {', '.join(freezes)} ended: {pr} is free"] if freezes else []
    lines += [f":hourglass: the hold on {scope} expired: {pr} is free" for scope in dict.fromkeys(expired)]
    if not lines:
        return None
    return Notice(org=_org(repo, None), repo=repo.lower(), text="\n".join(lines))


def hook_notice(item: dict[str, Any]) -> Notice | None:
    """An agent's merge the hook blocked (a ``hook.gate.fired`` record with ``decision: deny``)."""
    repo = item.get("repo")
    if item.get("decision") != "deny" or not isinstance(repo, str) or "/" not in repo:
        return None
    pr = item.get("pr")
    what = f"{repo}#{pr}" if isinstance(pr, int) else repo
    reason = str(item.get("reason") or "").strip()
    tool = str(item.get("tool_name") or "an agent")
    text = f":robot_face: merge-hold stopped {tool} merging {what}" + (f": {reason}" if reason else "")
    return Notice(org=_org(repo, None), repo=repo.lower(), text=text[:500])


def message(lines: list[str], *, limit: int = MAX_LINES) -> str:
    """One chat message from a channel's pending lines, oldest first; repeats shown once."""
    unique = list(dict.fromkeys(lines))
    shown = unique[:limit]
    more = len(unique) - len(shown)
    return "\n".join([*shown, *([f"…and {more} more"] if more else [])])
