"""``/orgs/{org}/webhooks``: an org's outgoing webhook endpoints on the dashboard, for its admins.

Register an endpoint (URL, event types, a note), see each one's health and delivery log, redeliver a
message, pause, resume or remove an endpoint. The signing secret is shown once, on the page that answers
the registration (never put in the session or a redirect). Who may: an admin token login within the org,
or a GitHub sign-in with admin on every managed repo of the org (the sign-in knows repo roles only, so an
org owner shows as admin on each) — the rule of an org-wide freeze on `/rooms`. Others get 403; an org
merge-hold does not manage, or that the user sees no repo of, 404.
"""

from __future__ import annotations

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from app import reads
from app.auth import RANK, current_identity, login_required, may_see, role_in
from app.services import services
from app.webhook_endpoints import endpoint_rows, org_managed, register_endpoint, remove_endpoint, set_enabled
from core.outgoing import TYPES
from state import outgoing, webhook_endpoints

bp = Blueprint("webhook_page", __name__)

LOG_SHOWN = 20


def may_manage(org: str) -> bool:
    identity = current_identity()
    if identity is None:
        return False
    if identity.fingerprint != "github":
        return identity.scope == "admin" and identity.covers(org)
    repos = [r for r in reads.managed_repos(services().redis) if r.split("/", 1)[0] == org.lower()]
    return bool(repos) and all(RANK[role_in(r)] >= RANK["admin"] for r in repos)


def _guard(org: str) -> None:
    seen = [r for r in reads.managed_repos(services().redis) if r.split("/", 1)[0] == org.lower()]
    if not org_managed(org) or not any(may_see(r) for r in seen):
        abort(404)
    if not may_manage(org):
        abort(403, description=f"Outgoing webhooks of {org} are managed by its admins.")


def _acting() -> str:
    identity = current_identity()
    assert identity is not None
    return identity.name


def _back(org: str) -> Response:
    return redirect(url_for("webhook_page.page", org=org.lower()))


def _render(org: str, secret: tuple[str, str] | None = None) -> str:
    return render_template("webhooks.html", org=org.lower(), rows=endpoint_rows(org, log_limit=LOG_SHOWN),
                           types=TYPES, secret=secret)


@bp.get("/orgs/<org>/webhooks")
@login_required
def page(org: str) -> str:
    _guard(org)
    return _render(org)


@bp.post("/orgs/<org>/webhooks")
@login_required
def create(org: str) -> Response | tuple[str, int]:
    _guard(org)
    events = [e for e in request.form.getlist("events") if e in TYPES]
    try:
        endpoint = register_endpoint(org, request.form.get("url", ""), events, request.form.get("description", ""),
                                     _acting())
    except ValueError as exc:
        flash(f"Not registered: {exc}", "error")
        return _back(org)
    return _render(org, secret=(endpoint.id, endpoint.secret)), 201


def _endpoint(org: str, endpoint_id: str) -> webhook_endpoints.Endpoint:
    found = webhook_endpoints.get(services().redis, org.lower(), endpoint_id)
    if found is None:
        abort(404)
    return found


@bp.post("/orgs/<org>/webhooks/<endpoint_id>/<any(enable, disable, remove):action>")
@login_required
def change(org: str, endpoint_id: str, action: str) -> Response:
    _guard(org)
    endpoint = _endpoint(org, endpoint_id)
    if action == "remove":
        remove_endpoint(org, endpoint.id, _acting())
        flash(f"Removed the endpoint {endpoint.url}.", "ok")
    else:
        set_enabled(endpoint, action == "enable", _acting())
        flash(f"{'Resumed' if action == 'enable' else 'Paused'} deliveries to {endpoint.url}.", "ok")
    return _back(org)


@bp.post("/orgs/<org>/webhooks/<endpoint_id>/deliveries/<message_id>/redeliver")
@login_required
def redeliver(org: str, endpoint_id: str, message_id: str) -> Response:
    _guard(org)
    endpoint = _endpoint(org, endpoint_id)
    if outgoing.redeliver(services().redis, endpoint, message_id) is None:
        flash("That delivery is no longer in the log.", "error")
    else:
        flash(f"Sending {message_id} to {endpoint.url} again.", "ok")
    return _back(org)
