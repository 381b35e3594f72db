"""Check runs (GitHub's Checks API) and the clicks on their requested actions.

Create, update, get and list by name on a commit, with GitHub's validation: Checks: write (403 "Resource not
accessible by integration" without it), a known ``head_sha``, ``status``/``conclusion`` values (a
``conclusion`` completes the run; a completed run needs one), ``output`` with ``title`` and ``summary``
(at most 65,535 characters each of ``summary`` and ``text``), and ``actions`` (at most 3; ``label`` ≤ 20,
``description`` ≤ 40, ``identifier`` ≤ 20 characters) — each refused 422. A suite keeps at most 1,000 runs of
one name; creating more deletes the oldest (GitHub's changelog of 2020-09-14). Only the App that created a
run may update it.

`tests.emulator.seeding_checks.ChecksSeeding.click` is a person clicking a button on the Checks tab: the ``check_run``
``requested_action`` payload GitHub would deliver to the App, with the clicker as ``sender``; a button the
run does not show cannot be clicked. `ChecksSeeding.check_run_shown` is what the PR's Checks tab shows.
"""

from __future__ import annotations

import json
from typing import Any

from tests.emulator import shapes
from tests.emulator.identity import APP_ID
from tests.emulator.routes_pulls import full_name, resolve_ref
from tests.emulator.seeding_checks import CheckRun, book
from tests.emulator.state import iso
from tests.emulator.wire import Request, Response, Route, error, not_found, route
from tests.emulator.world import World

DOCS = "https://docs.github.com/rest/checks/runs"
STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
MAX_TEXT = 65_535
MAX_ACTIONS = 3
ACTION_LIMITS = (("label", 20), ("description", 40), ("identifier", 20))
MAX_PER_NAME = 1000


def _invalid(message: str) -> Response:
    return error(422, f"Invalid request.\n\n{message}", DOCS)


def _validate(body: Any, *, creating: bool) -> Response | None:
    if not isinstance(body, dict):
        return error(400, "Problems parsing JSON", DOCS)
    required = ("name", "head_sha") if creating else ()
    for name in required:
        if not isinstance(body.get(name), str) or not body[name]:
            return _invalid(f'"{name}" wasn\'t supplied.')
    if "status" in body and body["status"] not in STATUSES:
        return _invalid(f"For 'properties/status', {json.dumps(body['status'])} is not one of {json.dumps(STATUSES)}.")
    if body.get("conclusion") is not None and body["conclusion"] not in CONCLUSIONS:
        return _invalid(f"For 'properties/conclusion', {json.dumps(body['conclusion'])} is not one of "
                        f"{json.dumps(CONCLUSIONS)}.")
    if (body.get("status") == "completed" or body.get("completed_at")) and not body.get("conclusion") and creating:
        return _invalid("No subschema in \"anyOf\" matched.\n\"conclusion\" wasn't supplied.")
    output = body.get("output")
    if output is not None:
        if not isinstance(output, dict) or not isinstance(output.get("title"), str) \
                or not isinstance(output.get("summary"), str):
            return _invalid("\"title\", \"summary\" weren't supplied.")
        for name in ("summary", "text"):
            value = output.get(name)
            if isinstance(value, str) and len(value) > MAX_TEXT:
                return error(422, f"Invalid request.\n\nOnly {MAX_TEXT} characters are allowed; {len(value)} were "
                             "supplied.", DOCS)
    actions = body.get("actions")
    if actions is not None:
        if not isinstance(actions, list):
            return _invalid(f"For 'properties/actions', {json.dumps(actions)} is not an array.")
        if len(actions) > MAX_ACTIONS:
            return _invalid(f"For 'properties/actions', the array has {len(actions)} items; the maximum is "
                            f"{MAX_ACTIONS}.")
        for action in actions:
            for name, limit in ACTION_LIMITS:
                value = action.get(name) if isinstance(action, dict) else None
                if not isinstance(value, str):
                    return _invalid(f'"{name}" wasn\'t supplied.')
                if len(value) > limit:
                    return _invalid(f"For 'properties/{name}', {json.dumps(value)} is too long (maximum is "
                                    f"{limit} characters).")
    return None


def _may_write(world: World, req: Request) -> Response | None:
    repo = world.require_repo(full_name(req))
    inst = world.installations.get(repo.installation_id)
    if inst is None or inst.permissions.get("checks") != "write":
        return error(403, "Resource not accessible by integration", DOCS)
    return None


def _apply(world: World, run: CheckRun, body: dict[str, Any]) -> None:
    for name in ("name", "details_url", "external_id"):
        if name in body:
            setattr(run, name, body[name])
    if "status" in body:
        run.status = body["status"]
    if body.get("conclusion") is not None:
        run.conclusion, run.status = body["conclusion"], "completed"
        run.completed_at = world.clock()
    if "output" in body:
        run.output = dict(body["output"])
    if "actions" in body:
        run.actions = [dict(a) for a in body["actions"]]


def run_object(world: World, base: str, run: CheckRun) -> dict[str, Any]:
    repo = run.repo
    pulls = [p for p in world.pulls.values()
             if p.repo.lower() == repo.lower() and p.head_sha == run.head_sha and p.state == "open"]
    found = world.require_repo(repo)
    mini = {"id": found.id, "url": f"{base}/repos/{repo}", "name": found.name}
    output = {"title": run.output.get("title"), "summary": run.output.get("summary"), "text": run.output.get("text"),
              "annotations_count": 0, "annotations_url": f"{base}/repos/{repo}/check-runs/{run.id}/annotations"}
    return {
        "id": run.id, "name": run.name, "node_id": shapes.node_id("CheckRun", run.id), "head_sha": run.head_sha,
        "external_id": run.external_id or "", "url": f"{base}/repos/{repo}/check-runs/{run.id}",
        "html_url": f"https://github.com/{repo}/runs/{run.id}", "details_url": run.details_url,
        "status": run.status, "conclusion": run.conclusion, "started_at": iso(run.started_at),
        "completed_at": iso(run.completed_at) if run.completed_at else None, "output": output,
        "check_suite": {"id": run.suite_id},
        "app": {"id": APP_ID, "slug": run.app_slug, "name": run.app_slug},
        "pull_requests": [{"url": f"{base}/repos/{repo}/pulls/{p.number}", "id": p.id, "number": p.number,
                           "head": {"ref": p.head_ref, "sha": p.head_sha, "repo": mini},
                           "base": {"ref": p.base, "sha": "0" * 40, "repo": mini}} for p in pulls],
        "actions": [dict(a) for a in run.actions],
    }


def create_run(world: World, req: Request) -> Response:
    refused = _may_write(world, req) or _validate(req.body, creating=True)
    if refused is not None:
        return refused
    repo = world.require_repo(full_name(req)).full_name
    sha = resolve_ref(world, repo, req.body["head_sha"])
    if sha is None:
        return error(422, f"No commit found for SHA: {req.body['head_sha']}", DOCS)
    books = book(world)
    suite = books.suites.setdefault((repo.lower(), sha), world.next_id())
    run = CheckRun(world.next_id(), repo, sha, req.body["name"], suite, world.app_slug, world.clock())
    _apply(world, run, req.body)
    books.runs[run.id] = run
    same = sorted(r.id for r in books.runs.values() if r.suite_id == suite and r.name == run.name)
    for old in same[:-MAX_PER_NAME]:  # GitHub keeps the newest 1,000 of one name per suite
        del books.runs[old]
        books.deleted += 1
    world.known_shas.add((repo.lower(), sha))
    return Response(201, run_object(world, req.base, run))


def _run_of(world: World, req: Request) -> CheckRun | None:
    run = book(world).runs.get(int(req.params["id"]))
    return run if run is not None and run.repo.lower() == full_name(req).lower() else None


def update_run(world: World, req: Request) -> Response:
    refused = _may_write(world, req) or _validate(req.body, creating=False)
    if refused is not None:
        return refused
    run = _run_of(world, req)
    if run is None:
        return not_found(DOCS)
    if run.app_slug != world.app_slug:
        return error(403, f"Invalid app_id `{APP_ID}` - check run can only be modified by the GitHub App that "
                     "created it.", DOCS)
    _apply(world, run, req.body)
    return Response(200, run_object(world, req.base, run))


def get_run(world: World, req: Request) -> Response:
    run = _run_of(world, req)
    return not_found(DOCS) if run is None else Response(200, run_object(world, req.base, run))


def list_for_ref(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req)).full_name
    sha = resolve_ref(world, repo, req.params["ref"]) or req.params["ref"]
    runs = sorted((r for r in book(world).runs.values() if r.repo.lower() == repo.lower() and r.head_sha == sha),
                  key=lambda r: -r.id)
    if req.query.get("check_name"):
        runs = [r for r in runs if r.name == req.query["check_name"]]
    if req.query.get("status"):
        runs = [r for r in runs if r.status == req.query["status"]]
    if req.query.get("filter", "latest") == "latest":
        seen: set[str] = set()
        runs = [r for r in runs if not (r.name in seen or seen.add(r.name))]  # type: ignore[func-returns-value]
    per_page = min(int(req.query.get("per_page") or 30), 100)
    page = int(req.query.get("page") or 1)
    chunk = runs[(page - 1) * per_page: page * per_page]
    return Response(200, {"total_count": len(runs), "check_runs": [run_object(world, req.base, r) for r in chunk]})


ROUTES: list[Route] = [
    route("POST", "/repos/{owner}/{repo}/check-runs", "token", create_run),
    route("PATCH", "/repos/{owner}/{repo}/check-runs/{id}", "token", update_run),
    route("GET", "/repos/{owner}/{repo}/check-runs/{id}", "token", get_run),
    route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", "token", list_for_ref),
]
