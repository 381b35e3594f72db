"""The App's own endpoints, installations, tokens, repositories and collaborator permissions."""

from __future__ import annotations

from typing import Any

from tests.emulator import auth, shapes
from tests.emulator.shapes_pulls import repo_object
from tests.emulator.state import iso
from tests.emulator.wire import Request, Response, Route, error, not_found, paginate, route
from tests.emulator.world import World

DOCS_TOKEN = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
NOT_ACCESSIBLE = ("There is at least one repository that does not exist or is not accessible to the parent "
                  "installation.")
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read",
                     "read": "read", "none": "none"}
"""`permission` keeps the legacy base roles: maintain reads as write and triage as read."""


def full_name(req: Request) -> str:
    return f"{req.params['owner']}/{req.params['repo']}"


def get_app(world: World, req: Request) -> Response:
    return Response(200, shapes.app(req.base, world.app_slug, len(world.installations), world.app_permissions,
                                    world.app_events))


def list_installations(world: World, req: Request) -> Response:
    found = [shapes.installation(req.base, i, world.app_slug) for _, i in sorted(world.installations.items())]
    return paginate(req, found)


def get_installation(world: World, req: Request) -> Response:
    inst = world.installations.get(int(req.params["id"]))
    if inst is None:
        return not_found()
    return Response(200, shapes.installation(req.base, inst, world.app_slug))


def create_token(world: World, req: Request) -> Response:
    inst = world.installations.get(int(req.params["id"]))
    if inst is None:
        return not_found(DOCS_TOKEN)
    body: dict[str, Any] = req.body if isinstance(req.body, dict) else {}
    mine = [r for r in world.repos.values() if r.installation_id == inst.id]
    narrowed: frozenset[str] | None = None
    names, ids = body.get("repositories"), body.get("repository_ids")
    if names or ids:
        wanted = [r for r in mine if r.name in (names or ()) or r.id in (ids or ())]
        if len(wanted) != len(names or ()) + len(ids or ()):
            return error(422, NOT_ACCESSIBLE, DOCS_TOKEN)
        narrowed = frozenset(r.full_name.lower() for r in wanted)
    token = auth.mint(world, inst.id, narrowed)
    answer: dict[str, Any] = {
        "token": token.token, "expires_at": iso(token.expires_at),
        "permissions": body.get("permissions") or dict(inst.permissions),
        "repository_selection": "selected",
    }
    if narrowed is not None:
        answer["repositories"] = [repo_object(world, req.base, r.full_name) for r in mine
                                  if r.full_name.lower() in narrowed]
    return Response(201, answer)


def installation_repositories(world: World, req: Request) -> Response:
    principal = req.principal
    found = sorted((r for r in world.repos.values() if r.installation_id == principal.installation_id
                    and (principal.repos is None or r.full_name.lower() in principal.repos)),
                   key=lambda r: r.id)
    return paginate(req, found, lambda r: repo_object(world, req.base, r.full_name),
                    lambda chunk: {"total_count": len(found), "repository_selection": "selected",
                                   "repositories": chunk})


def repo_installation(world: World, req: Request) -> Response:
    repo = world.repo(full_name(req))
    if repo is None or repo.installation_id not in world.installations:
        return not_found()
    return Response(200, shapes.installation(req.base, world.installations[repo.installation_id],
                                             world.app_slug))


def get_repo(world: World, req: Request) -> Response:
    obj = repo_object(world, req.base, full_name(req))
    obj.update(permissions={"admin": False, "maintain": False, "push": False, "triage": False, "pull": True},
               network_count=0, subscribers_count=0)
    return Response(200, obj)


def collaborator_permission(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    login = req.params["username"]
    role = world.role_of(repo, login)
    if role is None:
        # Not a collaborator: anyone can read a public repository, nobody a private one.
        role = "none" if repo.private else "read"
    return Response(200, {"permission": LEGACY_PERMISSION[role], "role_name": role,
                          "user": shapes.user(req.base, login)})


ROUTES: list[Route] = [
    route("GET", "/app", "jwt", get_app),
    route("GET", "/app/installations", "jwt", list_installations),
    route("GET", "/app/installations/{id}", "jwt", get_installation),
    route("POST", "/app/installations/{id}/access_tokens", "jwt", create_token),
    route("GET", "/installation/repositories", "token", installation_repositories),
    route("GET", "/repos/{owner}/{repo}/installation", "jwt", repo_installation),
    route("GET", "/repos/{owner}/{repo}", "token", get_repo),
    route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", "token", collaborator_permission),
]
