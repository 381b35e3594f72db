"""`GET /repos/{owner}/{repo}/issues/{number}`: an issue, or a PR as the issues API shows it."""

from __future__ import annotations

from typing import Any

from tests.emulator import shapes
from tests.emulator.state import iso
from tests.emulator.wire import Request, Response, Route, error, not_found, route
from tests.emulator.world import World

DOCS = "https://docs.github.com/rest/issues/issues#get-an-issue"
_LEVEL = {"none": 0, "read": 1, "write": 2, "admin": 3}


def get_issue(world: World, req: Request) -> Response:
    inst = world.installations.get(req.principal.installation_id or -1)
    granted = inst.permissions if inst is not None else {}
    if max(_LEVEL.get(granted.get("issues", "none"), 0), _LEVEL.get(granted.get("pull_requests", "none"), 0)) < 1:
        return error(403, "Resource not accessible by integration", DOCS)
    repo = world.require_repo(f"{req.params['owner']}/{req.params['repo']}")
    number = int(req.params["number"])
    api, html = f"{req.base}/repos/{repo.full_name}", f"https://github.com/{repo.full_name}"
    pull = world.pull(repo.full_name, number)
    issue = world.issues.get((repo.full_name.lower(), number))
    if pull is not None:
        record: dict[str, Any] = {"id": pull.id, "title": pull.title, "user": pull.user, "state": pull.state,
                                  "created_at": pull.created_at, "updated_at": pull.updated_at,
                                  "closed_at": pull.closed_at, "body": pull.body}
    elif issue is not None:
        record = dict(issue, body="")
    else:
        return not_found(DOCS)
    body: dict[str, Any] = {
        "id": record["id"], "node_id": shapes.node_id("Issue", record["id"]), "url": f"{api}/issues/{number}",
        "repository_url": api, "html_url": f"{html}/{'pull' if pull else 'issues'}/{number}", "number": number,
        "state": record["state"], "state_reason": "completed" if record["state"] == "closed" else None,
        "title": record["title"], "body": record["body"], "user": shapes.user(req.base, record["user"]),
        "labels": [], "assignee": None, "assignees": [], "milestone": None, "locked": False,
        "active_lock_reason": None, "comments": 0,
        "closed_at": iso(record["closed_at"]) if record["closed_at"] else None,
        "created_at": iso(record["created_at"]), "updated_at": iso(record["updated_at"]),
        "author_association": "CONTRIBUTOR",
    }
    if pull is not None:
        body["pull_request"] = {"url": f"{api}/pulls/{number}", "html_url": f"{html}/pull/{number}",
                                "diff_url": f"{html}/pull/{number}.diff", "patch_url": f"{html}/pull/{number}.patch",
                                "merged_at": iso(pull.merged_at) if pull.merged_at else None}
    return Response(200, body)


ROUTES: list[Route] = [route("GET", "/repos/{owner}/{repo}/issues/{number}", "token", get_issue)]
