"""Commit statuses: create (with GitHub's validation rules), list, and the combined status."""

from __future__ import annotations

import json
from typing import Any

from tests.emulator import shapes
from tests.emulator.identity import bot_login
from tests.emulator.routes_pulls import full_name, resolve_ref
from tests.emulator.shapes_pulls import repo_object
from tests.emulator.state import Status, iso
from tests.emulator.wire import Request, Response, Route, error, paginate, route, validation_failed
from tests.emulator.world import World

DOCS_CREATE = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"
DOCS_COMBINED = "https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference"
STATES = ("error", "failure", "pending", "success")
MAX_DESCRIPTION = 140
MAX_PER_CONTEXT = 1000
"""GitHub keeps at most 1,000 statuses per SHA and context and refuses the next one."""
TOO_MANY = "This SHA and context has reached the maximum number of statuses."


def status_object(base: str, s: Status) -> dict[str, Any]:
    creator = shapes.user(base, s.creator)
    return {
        "url": f"{base}/repos/{s.repo}/statuses/{s.sha}", "avatar_url": creator["avatar_url"], "id": s.id,
        "node_id": shapes.node_id("StatusContext", s.id), "state": s.state, "description": s.description,
        "target_url": s.target_url, "context": s.context, "created_at": iso(s.created_at),
        "updated_at": iso(s.created_at), "creator": creator,
    }


def _invalid(message: str) -> Response:
    # Schema violations come back as 422 "Invalid request." rather than "Validation Failed".
    return error(422, f"Invalid request.\n\n{message}", DOCS_CREATE)


def create_status(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    body = req.body
    if not isinstance(body, dict):
        return error(400, "Problems parsing JSON", DOCS_CREATE)
    state = body.get("state")
    if state is None:
        return _invalid('"state" wasn\'t supplied.')
    if state not in STATES:
        return _invalid(f"For 'properties/state', {json.dumps(state)} is not one of {json.dumps(STATES)}.")
    for name in ("description", "target_url", "context"):
        if body.get(name) is not None and not isinstance(body[name], str):
            return _invalid(f"For 'properties/{name}', {json.dumps(body[name])} is not a string.")
    description: str | None = body.get("description")
    if description is not None and len(description) > MAX_DESCRIPTION:
        return validation_failed("Status", "description",
                                 f"description is too long (maximum is {MAX_DESCRIPTION} characters)",
                                 DOCS_CREATE)
    sha = resolve_ref(world, repo.full_name, req.params["sha"])
    if sha is None:
        return validation_failed("Status", "sha", f"No commit found for SHA: {req.params['sha']}", DOCS_CREATE)
    context: str = body.get("context") or "default"
    same = sum(1 for s in world.all_statuses
               if s.repo == repo.full_name and s.sha == sha and s.context == context)
    if same >= MAX_PER_CONTEXT:
        return validation_failed("Status", None, TOO_MANY, DOCS_CREATE)
    # An installation token acts as the App's bot user, which GitHub records as the creator.
    creator = bot_login(world.app_slug) if req.principal.kind == "token" else "octocat"
    status = Status(world.next_id(), repo.full_name, sha, state, description, body.get("target_url"),
                    context, world.clock(), creator, via_api=True)
    world.all_statuses.append(status)
    world.known_shas.add((repo.full_name.lower(), sha))
    return Response(201, status_object(req.base, status))


def _on(world: World, req: Request) -> tuple[str, list[Status]]:
    repo = world.require_repo(full_name(req))
    sha = resolve_ref(world, repo.full_name, req.params["ref"]) or req.params["ref"]
    newest_first = [s for s in reversed(world.all_statuses) if s.repo == repo.full_name and s.sha == sha]
    return sha, newest_first


def list_statuses(world: World, req: Request) -> Response:
    _, newest_first = _on(world, req)
    return paginate(req, newest_first, lambda s: status_object(req.base, s))


def combined_status(world: World, req: Request) -> Response:
    sha, newest_first = _on(world, req)
    latest: dict[str, Status] = {}
    for s in newest_first:
        latest.setdefault(s.context, s)
    states = {s.state for s in latest.values()}
    if states & {"error", "failure"}:
        state = "failure"
    elif not states or "pending" in states:
        state = "pending"
    else:
        state = "success"
    ordered = list(latest.values())
    repo = world.require_repo(full_name(req)).full_name
    return Response(200, {
        "state": state, "statuses": [status_object(req.base, s) for s in ordered], "sha": sha,
        "total_count": len(ordered), "repository": repo_object(world, req.base, repo),
        "commit_url": f"{req.base}/repos/{repo}/commits/{sha}",
        "url": f"{req.base}/repos/{repo}/commits/{sha}/status",
    })


ROUTES: list[Route] = [
    route("POST", "/repos/{owner}/{repo}/statuses/{sha}", "token", create_status),
    route("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses", "token", list_statuses),
    route("GET", "/repos/{owner}/{repo}/statuses/{ref}", "token", list_statuses),
    route("GET", "/repos/{owner}/{repo}/commits/{ref}/status", "token", combined_status),
]
