"""Repository and organisation rulesets: the `…/rulesets` endpoints (list, create, get, update, delete).

Which branches a ruleset binds is `tests/emulator/rulesets.py`. A repository ruleset needs the
installation's Administration write permission, an organisation's Organization administration write.
Names are unique per owner of the ruleset; an update changes only the fields it names.
"""

from __future__ import annotations

from typing import Any

from tests.emulator.org_plans import org_refusal, org_targets_invalid
from tests.emulator.routes_branches import NOT_ACCESSIBLE, allowed
from tests.emulator.state import iso
from tests.emulator.wire import Request, Response, Route, error, not_found, route, validation_failed
from tests.emulator.world import World

DOCS_REPO = "https://docs.github.com/rest/repos/rules#create-a-repository-ruleset"
DOCS_ORG = "https://docs.github.com/rest/orgs/rules#create-an-organization-repository-ruleset"
ENFORCEMENTS = ("disabled", "active", "evaluate")
TARGETS = ("branch", "tag", "push")


def _render(req: Request, ruleset: dict[str, Any], *, full: bool = True) -> dict[str, Any]:
    where = (f"repos/{ruleset['source']}" if ruleset["source_type"] == "Repository"
             else f"orgs/{ruleset['source']}")
    shown = {"id": ruleset["id"], "name": ruleset["name"], "target": ruleset["target"],
             "source_type": ruleset["source_type"], "source": ruleset["source"],
             "enforcement": ruleset["enforcement"], "node_id": f"RRS_{ruleset['id']}",
             "_links": {"self": {"href": f"{req.base}/{where}/rulesets/{ruleset['id']}"}},
             "created_at": iso(ruleset["created_at"]), "updated_at": iso(ruleset["updated_at"])}
    if full:
        shown.update(bypass_actors=ruleset["bypass_actors"], conditions=ruleset["conditions"],
                     rules=ruleset["rules"], current_user_can_bypass="never")
    return shown


def _validate(body: Any, docs: str, *, creating: bool) -> Response | None:
    if not isinstance(body, dict):
        return error(400, "Problems parsing JSON", docs)
    if creating and not isinstance(body.get("name"), str):
        return error(422, "Invalid request.\n\n\"name\" wasn't supplied.", docs)
    if creating and body.get("enforcement") is None:
        return error(422, "Invalid request.\n\n\"enforcement\" wasn't supplied.", docs)
    if "enforcement" in body and body["enforcement"] not in ENFORCEMENTS:
        return error(422, f"Invalid request.\n\nFor 'properties/enforcement', \"{body['enforcement']}\" "
                          f"is not one of {list(ENFORCEMENTS)}.", docs)
    if "target" in body and body["target"] not in TARGETS:
        return error(422, "Invalid request.\n\nFor 'properties/target', the value is not allowed.", docs)
    for rule in body.get("rules") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("type"), str):
            return validation_failed("Ruleset", "rules", "Invalid rule", docs)
        if rule["type"] == "required_status_checks":
            checks = (rule.get("parameters") or {}).get("required_status_checks")
            if not isinstance(checks, list) or not all(isinstance(c, dict) and c.get("context") for c in checks):
                return validation_failed("Ruleset", "rules", "Invalid rule 'required_status_checks'", docs)
    return None


def _owner_of(req: Request) -> tuple[str, str]:
    if "repo" in req.params:
        return "Repository", f"{req.params['owner']}/{req.params['repo']}"
    return "Organization", req.params["org"]


def _permitted(world: World, req: Request) -> bool:
    kind, _ = _owner_of(req)
    return allowed(world, req, ("administration", "write") if kind == "Repository"
                    else ("organization_administration", "write"))


def _refused(world: World, req: Request) -> Response | None:
    """An org the calling installation cannot reach, or whose plan has no org rulesets
    (`tests.emulator.org_plans`), or (reading) an installation without Organization administration;
    repository rulesets are always there to read."""
    if _owner_of(req)[0] != "Organization":
        return None
    refused = org_refusal(world, req)
    if refused is None and req.method == "GET" and not allowed(world, req, ("organization_administration", "read")):
        return error(403, NOT_ACCESSIBLE, DOCS_ORG)
    return refused


def _find(world: World, req: Request) -> dict[str, Any] | None:
    kind, source = _owner_of(req)
    found = world.rulesets.get(int(req.params["id"]))
    if found is None or found["source_type"] != kind or found["source"].lower() != source.lower():
        return None
    return found


def list_rulesets(world: World, req: Request) -> Response:
    kind, source = _owner_of(req)
    refused = _refused(world, req)
    if refused is not None:
        return refused
    shown = [_render(req, r, full=False) for r in world.rulesets.values()
             if r["source_type"] == kind and r["source"].lower() == source.lower()]
    return Response(200, shown)


def create_ruleset(world: World, req: Request) -> Response:
    kind, source = _owner_of(req)
    docs = DOCS_REPO if kind == "Repository" else DOCS_ORG
    refused = _refused(world, req)
    if refused is not None:
        return refused
    if not _permitted(world, req):
        return error(403, NOT_ACCESSIBLE, docs)
    invalid = _validate(req.body, docs, creating=True) or \
        (org_targets_invalid(req.body) if kind == "Organization" else None)
    if invalid is not None:
        return invalid
    body: dict[str, Any] = req.body
    if kind == "Repository":
        source = world.require_repo(source).full_name
    if any(r["source"].lower() == source.lower() and r["name"] == body["name"] for r in world.rulesets.values()):
        return validation_failed("Ruleset", "name", "Name must be unique", docs)
    now = world.clock()
    ruleset = {"id": world.next_id(), "name": body["name"], "target": body.get("target", "branch"),
               "source_type": kind, "source": source, "enforcement": body["enforcement"],
               "bypass_actors": list(body.get("bypass_actors") or []),
               "conditions": dict(body.get("conditions") or {}), "rules": list(body.get("rules") or []),
               "created_at": now, "updated_at": now}
    world.rulesets[ruleset["id"]] = ruleset
    return Response(201, _render(req, ruleset))


def get_ruleset(world: World, req: Request) -> Response:
    refused = _refused(world, req)
    if refused is not None:
        return refused
    found = _find(world, req)
    return not_found() if found is None else Response(200, _render(req, found))


def update_ruleset(world: World, req: Request) -> Response:
    kind, _ = _owner_of(req)
    docs = DOCS_REPO if kind == "Repository" else DOCS_ORG
    refused = _refused(world, req)
    if refused is not None:
        return refused
    if not _permitted(world, req):
        return error(403, NOT_ACCESSIBLE, docs)
    found = _find(world, req)
    if found is None:
        return not_found()
    invalid = _validate(req.body, docs, creating=False)
    if invalid is not None:
        return invalid
    for name in ("name", "target", "enforcement", "bypass_actors", "conditions", "rules"):
        if name in req.body:
            found[name] = req.body[name]
    found["updated_at"] = world.clock()
    return Response(200, _render(req, found))


def delete_ruleset(world: World, req: Request) -> Response:
    refused = _refused(world, req)
    if refused is not None:
        return refused
    if not _permitted(world, req):
        return error(403, NOT_ACCESSIBLE)
    found = _find(world, req)
    if found is None:
        return not_found()
    del world.rulesets[found["id"]]
    return Response(204, None)


ROUTES: list[Route] = [
    route("GET", "/repos/{owner}/{repo}/rulesets", "token", list_rulesets),
    route("POST", "/repos/{owner}/{repo}/rulesets", "token", create_ruleset),
    route("GET", "/repos/{owner}/{repo}/rulesets/{id}", "token", get_ruleset),
    route("PUT", "/repos/{owner}/{repo}/rulesets/{id}", "token", update_ruleset),
    route("DELETE", "/repos/{owner}/{repo}/rulesets/{id}", "token", delete_ruleset),
    route("GET", "/orgs/{org}/rulesets", "token", list_rulesets),
    route("POST", "/orgs/{org}/rulesets", "token", create_ruleset),
    route("GET", "/orgs/{org}/rulesets/{id}", "token", get_ruleset),
    route("PUT", "/orgs/{org}/rulesets/{id}", "token", update_ruleset),
    route("DELETE", "/orgs/{org}/rulesets/{id}", "token", delete_ruleset),
]
