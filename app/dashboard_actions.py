"""Acting from the dashboard: place and lift holds on a PR's page, the room holds and freeze windows on
`/rooms`. Plain HTML forms (CSRF-checked by `app.security`), no script.

A hold placed on a PR's page is the signed-in GitHub user's own hold, exactly as their `/hold` comment
would place it (design §3): the app enqueues `core.comment_rules.DASHBOARD_JOB`, which records it in
the PR's per-holder register with origin ``dashboard`` and recomputes the PR like a webhook handler. So
their `/unhold` comment lifts it, a maintainer's `/unhold @user` or `/unhold all` too, no exemption
lets the PR through it, and `reconcile --rebuild` keeps it. Who may: the repo config's
``hold_permission`` (write by default) or the PR's author (``author_can_hold``) to hold and to lift
one's own; ``lift_others_permission`` (maintain) for others'. Room holds (the Lift buttons on
`/rooms` and a PR's page) follow the one rule every surface applies, `core.hold_rights`. Roles come
from GitHub for a GitHub sign-in (`app.auth.role_in`); a token login acts by its scope, as over the API
(``token:NAME``, never a GitHub user), and has no GitHub user to hold as, so PR holds need a GitHub
sign-in.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from rq.job import Job
from werkzeug.wrappers import Response

from app import read_your_writes, reads, rights, rooms_view
from app.auth import RANK, current_identity, github_user, login_required, may_see, role_in
from app.chat_links import link_note
from app.services import services
from core import hold_rights, jobs, keys
from core.chat_request import REPUBLISH_JOB
from core.comment_rules import DASHBOARD_JOB
from core.comments import clean_reason
from core.durations import parse_duration
from core.exemptions import coverage
from core.holds import Exemption, Hold, from_iso, named, to_iso
from core.permissions import Permission
from core.prstate import DASHBOARD_REF
from core.repo_config import DEFAULT_CONFIG, RepoConfig
from core.scopes import scope_repo
from state import freeze_progress, room_holds, store
from state.config_file import repo_config as state_repo_config
from state.queueing import options

bp = Blueprint("actions", __name__)

LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
"""A GitHub login (bots end in ``[bot]``): the holder named by a lift form."""
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def repo_config(repo: str) -> RepoConfig:
    """The repo's `.github/merge-hold.yml` as the workers last read it, by their loader and their rule
    (`state.config_file.repo_config`): the defaults when it is absent, invalid or not read yet (the workers
    then post `error`, and the page offers no more than the defaults)."""
    config, _error = state_repo_config(store.load_repo(services().redis, repo))
    return config or DEFAULT_CONFIG


def acting_login() -> str:
    """Who acts, as the audit log names them: a GitHub login, or ``token:NAME`` for a token sign-in
    (never a bare name that could pass for a GitHub user's)."""
    identity = current_identity()
    assert identity is not None
    return identity.actor


def dashboard_holder_id(login: str) -> str:
    return f"dashboard:{login}"


def may_hold(repo: str, number: int) -> bool:
    config = repo_config(repo)
    if RANK[role_in(repo)] >= RANK[config.hold_permission]:
        return True
    facts = store.load_pull(services().redis, repo, number).facts
    return config.author_can_hold and facts is not None and facts.author.lower() == (github_login() or "").lower()


def github_login() -> str | None:
    """The signed-in GitHub user's login; None for a token login."""
    return github_user()


def may_lift_comment(repo: str, number: int, holder: str) -> bool:
    """A PR hold of ``holder`` in its per-holder register: one's own with hold rights (a comment's
    rule), others' with ``lift_others_permission``. Only a GitHub sign-in acts on these."""
    login = github_login()
    if login is None:
        return False
    if holder.lower() == login.lower() or repo_config(repo).shared_holds:
        return may_hold(repo, number)  # Prow's shared hold: whoever may hold may lift it
    return RANK[role_in(repo)] >= RANK[repo_config(repo).lift_others_permission]


def may_lift(hold: Hold) -> bool:
    """The one rule (`core.hold_rights`): the same answer chat and the API give this person."""
    return hold_rights.may_lift(rights.actor(), hold.id, hold.scope, rights.facts(hold.scope))


def may_see_scope(scope: str) -> bool:
    repo = scope_repo(scope)
    if repo is not None:
        return may_see(repo)
    # An org-wide hold is shown to whoever sees one of the org's repos.
    return any(may_see(r) for r in reads.managed_repos(services().redis) if r.split("/", 1)[0] == scope.lower())


def may_freeze(scope: str) -> bool:
    """Whether the signed-in user may place a hold on ``scope`` (`core.hold_rights.may_place`): admin on
    its repo (an org: on every managed repo of it), or what their linked chat user may do in chat."""
    return hold_rights.may_place(rights.actor(), scope, rights.facts(scope))


def republish_scope(scope: str) -> None:
    services().queue.enqueue(REPUBLISH_JOB, scope, **options(jobs.REPUBLISH),
                             description=f"republish {scope} after a dashboard hold change")


def _repo_or_404(owner: str, name: str) -> str:
    repo = f"{owner}/{name}"
    if not reads.valid_repo(repo) or not may_see(repo):
        abort(404)
    return repo


def _command(repo: str, number: int, data: dict[str, Any]) -> Job:
    """Queue a dashboard command for the workers, dated by the server clock now."""
    login = github_login()
    assert login is not None
    facts = store.load_pull(services().redis, repo, number).facts
    command = {**data, "actor": login, "permission": int(Permission.parse(role_in(repo))),
               "is_author": facts is not None and facts.author.lower() == login.lower(),
               "at": to_iso(datetime.now(UTC)), "ref": f"{DASHBOARD_REF}{uuid.uuid4().hex}"}
    return services().queue.enqueue(DASHBOARD_JOB, repo, number, command, **options(jobs.DASHBOARD_COMMAND),
                                    description=f"dashboard {data['kind']} on {repo}#{number} by {login}")


def _landed(landed: bool, done: str) -> None:
    """The flash after an act: what was done, or that it is on its way (read your writes)."""
    if landed:
        flash(f"{done}.", "ok")
    else:
        flash(f"{done}: pending — the worker has not applied it yet; this page updates when it lands.", "pending")


def reason_and_duration(noun: str, done: str) -> tuple[str, timedelta | None] | None:
    """The form's ``reason`` and ``for`` (a duration, optional), or None after flashing what is wrong —
    the time first, not a reason that was given: "``noun`` needs a reason …", "Nothing was ``done``"."""
    reason = clean_reason(request.form.get("reason", ""))
    span = request.form.get("for", "").strip()
    duration = parse_duration(span) if span else None
    if span and duration is None:
        flash(f"“{span}” is not a time merge-hold reads: write it like 30m, 2h or 1d (at most 90d). "
              f"Nothing was {done}.", "error")
        return None
    if not reason:
        flash(f"{noun} needs a reason (why it must wait). Nothing was {done}.", "error")
        return None
    return reason, duration


def _pull_page(owner: str, name: str, number: int) -> Response:
    return redirect(url_for("dashboard.pull", owner=owner, name=name, number=number))


@bp.post("/<owner>/<name>/pull/<int:number>/hold")
@login_required
def hold(owner: str, name: str, number: int) -> Response:
    repo = _repo_or_404(owner, name)
    back = _pull_page(owner, name, number)
    if not reads.is_managed(services().redis, repo):
        abort(404)
    if github_login() is None:
        flash("Holding a PR from its page needs Sign in with GitHub: the hold is yours, as a /hold comment "
              "would be. Machines use the holds API.", "error")
        return back
    if not may_hold(repo, number):
        flash(f"Holding needs {repo_config(repo).hold_permission} access to {repo}.", "error")
        return back
    given = reason_and_duration("A hold", "held")
    if given is None:
        return back
    reason, duration = given
    job = _command(repo, number, {"kind": "hold", "reason": reason,
                                  "seconds": int(duration.total_seconds()) if duration is not None else None})
    _landed(read_your_writes.job_landed(services().redis, job, repo, number), f"Held {repo}#{number}: {reason}")
    return back


@bp.post("/<owner>/<name>/pull/<int:number>/unhold")
@login_required
def unhold(owner: str, name: str, number: int) -> Response:
    """Lift a PR hold of the per-holder registers (a comment's or a dashboard's): form ``holder``."""
    repo = _repo_or_404(owner, name)
    back = _pull_page(owner, name, number)
    holder = request.form.get("holder", "").strip().removeprefix("@")
    if not reads.is_managed(services().redis, repo) or not LOGIN.fullmatch(holder):
        abort(404)
    if not may_lift_comment(repo, number, holder):
        login = github_login()
        flash("Lifting a hold from the page needs Sign in with GitHub." if login is None else
              f"Lifting @{holder}'s hold needs {repo_config(repo).lift_others_permission} access."
              if holder.lower() != login.lower() else
              f"Lifting your hold needs {repo_config(repo).hold_permission} access.", "error")
        return back
    own = holder.lower() == (github_login() or "").lower()
    # The hold the page showed (its time): the lift comes after it even within GitHub's one-second stamps.
    try:
        seen = from_iso(request.form.get("seen", "").strip()[:40])
    except ValueError:
        seen = None  # not a time: the lift counts from the server clock alone
    job = _command(repo, number, {"kind": "lift", "target": None if own else holder,
                                  "seen": to_iso(seen) if seen is not None else None})
    _landed(read_your_writes.job_landed(services().redis, job, repo, number),
            f"Lifted @{holder}'s hold on {repo}#{number}")
    return back


@bp.post("/holds/lift")
@login_required
def lift() -> Response:
    found = room_holds.find_hold(services().redis, request.form.get("hold_id", ""))
    target = "pull" if request.form.get("back") == "pull" else "rooms"
    if found is None or not may_see_scope(found.scope):
        abort(404)
    if not may_lift(found):
        why = hold_rights.lift_refusal(rights.actor(), found.id, found.scope, rights.facts(found.scope))
        flash(f"{named(found.holder)}'s hold on {found.scope} stays: {why}.", "error")
    else:
        room_holds.lift_hold(services().redis, found, actor=acting_login(), origin="dashboard")
        republish_scope(found.scope)
        if target != "pull" or "#" not in found.scope:
            flash(f"Lifted {named(found.holder)}'s hold on {found.scope}.", "ok")
    if target == "pull" and "#" in found.scope:
        owner, _, rest = found.scope.partition("/")
        name, _, number = rest.partition("#")
        if may_lift(found):
            gone = read_your_writes.hold_gone(services().redis, services().queue, f"{owner}/{name}", int(number),
                                              found.id)
            _landed(gone, f"Lifted {named(found.holder)}'s hold on {found.scope}")
        return redirect(url_for("dashboard.pull", owner=owner, name=name, number=int(number)))
    return redirect(url_for("actions.rooms"))


def week(config: RepoConfig) -> list[dict[str, Any]]:
    """Each freeze window as a row of the week: its hours on the days it runs, in its own time zone."""
    rows = []
    for window in config.freeze_windows:
        hours = f"{window.start} to {window.end}"
        rows.append({"name": window.name, "timezone": window.timezone, "branches": ", ".join(window.branches),
                     "days": [hours if day in window.days else "" for day in DAYS]})
    return rows


@bp.get("/rooms")
@login_required
def rooms() -> str:
    redis = services().redis
    now = datetime.now(UTC)
    visible = [r for r in reads.managed_repos(redis) if may_see(r)]
    holds: list[Hold] = []
    for key in [keys.room_holds(r) for r in visible] + [keys.org_room_holds(o) for o in
                                                         sorted({r.split("/", 1)[0] for r in visible})]:
        holds += [h for h in room_holds.holds_in(redis, key) if h.active(now)]
    holds.sort(key=lambda h: (h.scope, h.created_at))
    exemptions = [found for r in visible for raw in redis.hvals(keys.exemptions(r))
                  if (found := Exemption.from_dict(json.loads(raw))).active(now)]
    liftable = {h.id for h in holds if may_lift(h)}
    rows = [{"hold": h.to_dict(), "may_lift": h.id in liftable} for h in holds]
    configs = {r: repo_config(r) for r in visible}
    freezes = [(r, week(c)) for r, c in configs.items() if c.freeze_windows]
    mode = services().settings.freeze_mode
    progress = freeze_progress.progress(redis, holds, visible, now,
                                        [r for r, c in configs.items() if (c.freeze_mode or mode) == "ruleset"])
    scopes = sorted({h.scope for h in holds if h.id in progress})
    # Thaw is offered where it would lift something: the holds on that scope this user may lift.
    frozen = [{"scope": s, "may_thaw": any(h.scope == s and h.id in liftable for h in holds), "holds": [
        {"hold": h.to_dict(), "progress": progress[h.id]} for h in holds if h.scope == s and h.id in progress]}
        for s in scopes]
    may_freeze_any = _may_freeze_any(visible)
    shown = rooms_view.extras(redis, holds, configs, now, github_login=github_login(), may_freeze_any=may_freeze_any,
                              may_lift_any=any(row["may_lift"] for row in rows))
    shown_exemptions = [{**e.to_dict(), "covers": coverage(e.head_sha, e.sticky)} for e in exemptions]
    return render_template("rooms.html", rows=rows, exemptions=shown_exemptions,
                           freezes=freezes, days=DAYS, frozen=frozen, may_freeze_any=may_freeze_any,
                           link_note=link_note(github_login()), live=True, **shown)


def _may_freeze_any(visible: list[str]) -> bool:
    """Whether `/rooms` offers the Freeze form: a GitHub user who may freeze a repo or an org they see."""
    if github_login() is None:
        return False
    targets = sorted(set(visible) | {r.split("/", 1)[0] for r in visible})
    return any(may_freeze(t) for t in targets)
