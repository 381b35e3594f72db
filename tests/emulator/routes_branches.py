"""Branches, their active rules, and what the App may do on a PR: reactions and comments.

Installation tokens are held to the permissions the installation accepted: a read needs the endpoint's
documented permission (`Get a branch`: Contents read; `Get rules for a branch`: Metadata read), a write
its write level, else GitHub's 403 "Resource not accessible by integration".
"""

from __future__ import annotations

from typing import Any

from tests.emulator import shapes, shapes_pulls
from tests.emulator.identity import bot_login
from tests.emulator.rulesets import active_rules
from tests.emulator.state import Comment, iso
from tests.emulator.wire import Request, Response, Route, error, not_found, paginate, route, validation_failed
from tests.emulator.world import World

DOCS_BRANCH = "https://docs.github.com/rest/branches/branches#get-a-branch"
DOCS_RULES = "https://docs.github.com/rest/repos/rules#get-rules-for-a-branch"
DOCS_REACTION = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
DOCS_COMMENT = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
NOT_ACCESSIBLE = "Resource not accessible by integration"
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
_LEVEL = {"none": 0, "read": 1, "write": 2, "admin": 3}


def _full_name(req: Request) -> str:
    return f"{req.params['owner']}/{req.params['repo']}"


def allowed(world: World, req: Request, *options: tuple[str, str]) -> bool:
    """Whether the calling installation accepted any one of (permission, level)."""
    inst = world.installations.get(req.principal.installation_id or -1)
    granted = inst.permissions if inst is not None else {}
    return any(_LEVEL.get(granted.get(name, "none"), 0) >= _LEVEL[level] for name, level in options)


def get_branch(world: World, req: Request) -> Response:
    if not allowed(world, req, ("contents", "read")):
        return error(403, NOT_ACCESSIBLE, DOCS_BRANCH)
    repo = world.require_repo(_full_name(req))
    branch = req.params["branch"]
    api = f"{req.base}/repos/{repo.full_name}"
    sha = world.branch_heads.get((repo.full_name.lower(), branch)) or shapes.fake_sha(repo.full_name, "branch", branch)
    protection = world.protections.get((repo.full_name.lower(), branch))
    shown = protection or {"enabled": False, "required_status_checks": {
        "enforcement_level": "off", "contexts": [], "checks": []}}
    return Response(200, {
        "name": branch,
        "commit": {"sha": sha, "node_id": shapes.node_id("Commit", int(sha[:7], 16)),
                   "url": f"{api}/commits/{sha}", "html_url": f"https://github.com/{repo.full_name}/commit/{sha}",
                   "commit": {"message": "Emulated commit", "comment_count": 0}, "parents": []},
        "_links": {"self": f"{api}/branches/{branch}", "html": f"https://github.com/{repo.full_name}/tree/{branch}"},
        "protected": protection is not None,
        "protection": shown,
        "protection_url": f"{api}/branches/{branch}/protection",
    })


def branch_rules(world: World, req: Request) -> Response:
    if not allowed(world, req, ("metadata", "read")):
        return error(403, NOT_ACCESSIBLE, DOCS_RULES)
    repo = world.require_repo(_full_name(req))
    branch = req.params["branch"]
    seeded = world.rules.get((repo.full_name.lower(), branch), [])
    return paginate(req, [*seeded, *active_rules(world, repo.full_name, branch)])


def create_reaction(world: World, req: Request) -> Response:
    if not allowed(world, req, ("issues", "write"), ("pull_requests", "write")):
        return error(403, NOT_ACCESSIBLE, DOCS_REACTION)
    repo = world.require_repo(_full_name(req))
    comment_id = int(req.params["id"])
    if not any(c.id == comment_id and c.repo.lower() == repo.full_name.lower() for c in world.comments):
        return not_found(DOCS_REACTION)
    body: dict[str, Any] = req.body if isinstance(req.body, dict) else {}
    content = body.get("content")
    if content not in REACTIONS:
        return validation_failed("Reaction", "content", f"content {content!r} is not a valid reaction",
                                 DOCS_REACTION, code="invalid")
    login = bot_login(world.app_slug)
    for existing in world.reactions:
        # GitHub answers 200 with the existing reaction when this user already reacted so.
        if existing["comment_id"] == comment_id and existing["content"] == content and existing["user"] == login:
            return Response(200, _reaction(req.base, existing))
    record = {"id": world.next_id(), "repo": repo.full_name, "comment_id": comment_id, "content": content,
              "user": login, "created_at": world.clock()}
    world.reactions.append(record)
    return Response(201, _reaction(req.base, record))


def _reaction(base: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "node_id": shapes.node_id("Reaction", record["id"]),
            "user": shapes.user(base, record["user"]), "content": record["content"],
            "created_at": iso(record["created_at"])}


def create_comment(world: World, req: Request) -> Response:
    if not allowed(world, req, ("issues", "write"), ("pull_requests", "write")):
        return error(403, NOT_ACCESSIBLE, DOCS_COMMENT)
    repo = world.require_repo(_full_name(req))
    number = int(req.params["number"])
    if world.pull(repo.full_name, number) is None:
        return not_found(DOCS_COMMENT)
    body: dict[str, Any] = req.body if isinstance(req.body, dict) else {}
    text = body.get("body")
    if not isinstance(text, str) or not text.strip():
        return validation_failed("IssueComment", "body", "body wasn't supplied.", DOCS_COMMENT,
                                 code="missing_field")
    now = world.clock()
    comment = Comment(world.next_id(), repo.full_name, number, bot_login(world.app_slug), text, now, now, "NONE")
    world.comments.append(comment)
    return Response(201, shapes_pulls.comment(req.base, comment))


def manifest_conversion(world: World, req: Request) -> Response:
    """`POST /app-manifests/{code}/conversions`: no authentication; a code works once."""
    answer = world.manifest_conversions.pop(req.params["code"], None)
    if answer is None:
        return not_found("https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest")
    return Response(201, answer)


ROUTES: list[Route] = [
    route("GET", "/repos/{owner}/{repo}/branches/{branch+}", "token", get_branch),
    route("GET", "/repos/{owner}/{repo}/rules/branches/{branch+}", "token", branch_rules),
    route("POST", "/repos/{owner}/{repo}/issues/comments/{id}/reactions", "token", create_reaction),
    route("POST", "/repos/{owner}/{repo}/issues/{number}/comments", "token", create_comment),
    route("POST", "/app-manifests/{code}/conversions", "none", manifest_conversion),
]
