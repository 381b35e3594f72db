"""The dashboard: active holds by repo, one page per PR, and the dry-run statuses. Read-only, server-rendered.

The PR page's URL is the commit status's ``target_url`` (``{public_url}/{owner}/{repo}/pull/{n}``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, abort, render_template, request, url_for

from app import history, reads, timeline, times
from app.auth import login_required, may_see, role_in
from app.dashboard_actions import github_login, may_hold, may_lift, may_lift_comment, repo_config
from app.exemption_actions import page_exemption
from app.services import services
from core import keys
from core.holds import from_iso, named
from core.scopes import scope_applies
from state import posted_status, room_holds

bp = Blueprint("dashboard", __name__)


def ago(iso: str | None, now: datetime | None = None) -> str:
    """'3h ago' / 'in 2d': a glance at how old a hold is or when it ends; the ISO time is the title."""
    try:
        moment = from_iso(iso)
    except (TypeError, ValueError):
        return str(iso)
    if moment is None:
        return ""
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    future, seconds = seconds < 0, abs(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            amount = f"{seconds // size}{unit}"
            break
    else:
        amount = f"{seconds}s"
    return f"in {amount}" if future else f"{amount} ago"


@bp.app_template_filter("ago")
def ago_filter(iso: str | None) -> str:
    return ago(iso)


@bp.app_template_filter("exact")
def exact_filter(iso: str | None) -> str:
    """``14:32 UTC, 3 min ago``: the moment and a glance at it (`app.times`)."""
    return times.exact(iso)


@bp.app_template_filter("ends")
def ends_filter(iso: str | None) -> str:
    """``ends 14:32 UTC, in 1 h 59 min`` (never rounded down)."""
    return times.ends(iso)


@bp.app_template_filter("clock")
def clock_filter(moment: datetime) -> str:
    return times.clock(moment, datetime.now(UTC))


@bp.app_template_filter("compact")
def compact_filter(data: Any) -> str:
    """A history entry in one line: its message if it has one, else its data without the repo and
    number the page already shows."""
    if isinstance(data, dict):
        if isinstance(data.get("message"), str):
            return str(data["message"])
        data = {k: v for k, v in data.items() if k not in ("repo", "number")}
    return json.dumps(data, separators=(", ", ": "), sort_keys=True, default=str)


SENTENCES = {
    "room.held": "{holder} held {scope} ({origin}): {reason}",
    "room.lifted": "{actor} lifted the hold on {scope} ({origin})",
    "room.exempted": "{by} exempted this PR from room and freeze holds ({origin}): {reason}",
    "room.unexempted": "{actor} ended the exemption ({origin})",
    "exemption.ended": "A push moved this PR to {head_sha:.7}: the exemption {by} granted ({reason}) covered "
                       "{granted_head:.7} only, so room and freeze holds hold it again",
    "exemption.refused": "{sender} added the exempt label {label}, which counts only from maintain or admin "
                         "access ({permission}): ignored",
    "status.posted": "merge-hold posted {state}: {description}",
    "status.forged": "A merge-hold status not posted by the App was overwritten",
    "verdict.held": "The verdict became held",
    "verdict.free": "The verdict became free",
    "fanout.skipped": "A fan-out skipped this PR ({status})",
    "status.skipped": "GitHub refused this PR's status ({status}); its next change posts it again",
    "incident.recorded": "Merged by @{merged_by} although {reason}: recorded as an incident",
    "chat.linked": "@{login} linked chat user @{user_name} ({platform} {team_id}) to their GitHub login",
    "chat.unlinked": "Chat user @{user_name} ({platform} {team_id}) unlinked from GitHub @{login}",
    "exemption.requested": "{actor} asked for an exemption from the freeze ({origin})",
    "check_run.refreshed": "{actor} asked for a refresh ({origin})",
    "check_run.skipped": "GitHub refused this PR's check run ({status}); its next change writes it again",
}


PEOPLE = ("holder", "actor", "by", "sender")
"""Fields of the room sentences that name who acted: a person as ``@login``, a token as ``token:NAME``."""
bp.add_app_template_filter(named, "named")


@bp.app_template_filter("sentence")
def sentence_filter(entry: Any) -> str:
    """A history entry as a sentence ("@alice held this PR: waiting for DB migration"); the raw record
    stays one click away on the page."""
    event = str(entry.get("event", "")) if isinstance(entry, dict) else ""
    data = entry.get("data") if isinstance(entry, dict) else None
    if not isinstance(data, dict):
        return event or "?"
    if event.startswith("hold."):
        actor, verb = data.get("actor"), event.partition(".")[2].replace("_", " ")
        message, reason = str(data.get("message") or ""), str(data.get("reason") or "")
        origin = f" ({data['origin']})" if data.get("origin") else ""
        if message.startswith("@"):  # the outcome's own sentence ("@alice held this PR for 2h")
            return f"{message}{': ' + reason if reason and reason not in message else ''}{origin}"
        said = message or reason
        return f"@{actor} {verb}{': ' + said if said else ''}{origin}" if actor else compact_filter(data)
    if event in ("verdict.held", "verdict.free") and str(data.get("version")) == "1":
        return f"merge-hold first saw this PR: {'held' if event == 'verdict.held' else 'no holds'}"
    freezes = [str(h.get("holder") or h.get("id")) for h in data.get("holds") or []
               if isinstance(h, dict) and h.get("source") == "freeze"]
    if event == "verdict.held" and freezes:  # a scheduled window began: nobody acted, the clock did
        return f"Freeze {', '.join(freezes)} started: this PR is held"
    template = SENTENCES.get(event)
    if template is None:
        return f"{event}: {compact_filter(data)}"
    fields = defaultdict(lambda: "?", {k: named(v) if k in PEOPLE and isinstance(v, str) else v
                                       for k, v in data.items() if v not in (None, "")})
    return template.format_map(fields)


@bp.app_template_global("pr_url")
def pr_url(repo: Any, number: Any) -> str | None:
    """The PR page's URL, or None for anything that is not a well-formed repo and number."""
    if not (isinstance(repo, str) and reads.valid_repo(repo) and str(number).isdigit()):
        return None
    owner, name = repo.split("/")
    return url_for("dashboard.pull", owner=owner, name=name, number=int(number))


@bp.get("/")
@login_required
def index() -> str:
    svc = services()
    now = datetime.now(UTC)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, number, record in reads.held_records(svc.redis):
        if not may_see(name):
            continue
        repo = str(record.get("repo") or name) if record else name  # as GitHub spells it, not lower-cased
        holds = [h for h in (record or {}).get("holds") or [] if isinstance(h, dict) and reads.hold_active(h, now)]
        groups[repo].append({
            "number": number,
            "record": record,
            "holds": holds,
            "error": record.get("error") if record else "no verdict recorded",
        })
    visible = [r for r in reads.managed_repos(svc.redis) if may_see(r)]
    return render_template(
        "index.html",
        live=True,
        groups=sorted(groups.items()),
        errors=reads.error_records(svc.redis, visible),
        repos=visible,
        dry_run=svc.settings.dry_run,
        recent=_visible_statuses(reads.dry_run_statuses(svc.redis, 10)) if svc.settings.dry_run else [],
        bootstraps=reads.bootstrap_lines(svc.redis, svc.settings.write_rate_per_minute, svc.settings.write_hourly,
                                         may_see, now),
    )


@bp.get("/<owner>/<name>/pull/<int:number>")
@login_required
def pull(owner: str, name: str, number: int) -> str:
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo) or not may_see(repo):
        abort(404)  # not even whether it exists
    redis = services().redis
    record = reads.verdict(redis, repo, number)
    now = datetime.now(UTC)
    holds = [h for h in (record or {}).get("holds") or [] if isinstance(h, dict)]
    liftable = {str(h.get("id")) for h in holds if str(h.get("id", "")).startswith("room:")
                and (found := room_holds.find_hold(redis, str(h["id"]))) is not None and may_lift(found)}
    # A comment's or a dashboard's hold (one per-holder register): lifted like an `/unhold` comment.
    liftable |= {str(h.get("id")) for h in holds if str(h.get("id", "")).startswith("comment:")
                 and may_lift_comment(repo, number, str(h.get("holder") or ""))}
    managed = reads.is_managed(redis, repo)
    active = [h for h in holds if reads.hold_active(h, now)]
    base = str(record["base"]) if record and record.get("base") else None
    kind = request.args.get("kind") if request.args.get("kind") in history.KINDS else None
    before = request.args.get("before")
    before = before if before and reads.STREAM_ID.fullmatch(before) else None
    acts, older = history.page(redis, repo, number, base, before=before, kind=kind)
    posted = posted_status.on_pr(redis, repo, number)
    waiting = [] if record else _waiting(repo, number, now)
    return render_template(
        "pull.html",
        live=True,
        repo=repo,
        number=number,
        record=record,
        active=active,
        expired=[h for h in holds if not reads.hold_active(h, now)],
        unseen=waiting,
        managed=managed,
        posted=posted,
        settled=_settled(record, posted),
        acts=acts,
        older=older,
        kind=kind,
        kinds=history.KINDS,
        before=before,
        chart=timeline.pr_chart(history.recent(redis, repo, number, base, now - timeline.PR_SPAN),
                                holds or waiting, now),
        exemption=page_exemption(repo, number, reads.pr_history(redis, repo, number)),
        liftable=liftable,
        may_hold=managed and github_login() is not None and may_hold(repo, number),
        token_login=github_login() is None,
        rights=_rights(repo, number, managed, active, liftable),
    )


def _settled(record: dict[str, Any] | None, posted: dict[str, Any] | None) -> bool:
    """Whether the status on GitHub is the verdict's: same commit, state and description."""
    if record is None:
        return True
    return posted_status.shows(posted, record)


def _waiting(repo: str, number: int, now: datetime) -> list[dict[str, Any]]:
    """Room holds that reach a PR merge-hold has not seen (no verdict yet): they hold it once it is seen."""
    redis = services().redis
    found = room_holds.holds_in(redis, keys.room_holds(repo)) + \
        room_holds.holds_in(redis, keys.org_room_holds(repo.split("/", 1)[0].lower()))
    return [h.to_dict() for h in found
            if h.active(now) and ("@" in h.scope or scope_applies(h.scope, repo, number, ""))]


def _rights(repo: str, number: int, managed: bool, active: list[dict[str, Any]], liftable: set[str]) -> list[str]:
    """What a signed-in GitHub user who may not act here would need, said plainly (the rules are the
    repo config's: `app.dashboard_actions`)."""
    login = github_login()
    if not managed or login is None:
        return []
    config, role = repo_config(repo), role_in(repo)
    said = []
    if not may_hold(repo, number):
        author = " or being this PR's author" if config.author_can_hold else ""
        said.append(f"You have {role} access to {repo}: holding this PR needs {config.hold_permission} "
                    f"access{author}.")
    others = [h for h in active if str(h.get("id")) not in liftable]
    if others:
        rooms = any(h.get("source") in ("room", "freeze") for h in others)
        said.append(f"Lifting another's hold needs {config.lift_others_permission} access to {repo}"
                    + ("; a room hold is lifted where it was placed (its chat room, or Rooms), a freeze window "
                       "ends on its own." if rooms else "; your own you may lift yourself."))
    return said


@bp.get("/dry-run")
@login_required
def dry_run() -> str:
    svc = services()
    return render_template(
        "dry_run.html", statuses=_visible_statuses(reads.dry_run_statuses(svc.redis)), dry_run=svc.settings.dry_run
    )


def _visible_statuses(statuses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # A record without a repo (unreadable) is shown only to whoever sees every repo.
    everything = may_see("")
    return [s for s in statuses if (may_see(str(s["repo"])) if isinstance(s.get("repo"), str) else everything)]
