"""Environments and custom deployment protection rules: the App's review of a run's deployments and the
two reads `merge-hold doctor` makes (seeding and inspection: `seeding_deploys`).

GitHub's shapes: ``GET …/environments`` is ``{"total_count", "environments": [...]}``;
``GET …/environments/{name}/deployment_protection_rules`` is ``{"total_count",
"custom_deployment_protection_rules": [{"id", "node_id", "enabled", "app": {"id", "node_id", "slug",
"integration_url"}}]}``. The review (``POST …/actions/runs/{run_id}/deployment_protection_rule``) takes
``environment_name`` (required), ``state`` (``approved`` or ``rejected``; omitted: a status report, at
most ten, Markdown up to 1,024 characters) and ``comment``; it needs Deployments: write and answers 204.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from tests.emulator import shapes
from tests.emulator.deploy_book import MAX_REPORTS, Environment, GateAnswer
from tests.emulator.routes_apps import full_name
from tests.emulator.state import iso
from tests.emulator.wire import Request, Response, Route, error, not_found, paginate, route
from tests.emulator.world import World

DOCS_REVIEW = ("https://docs.github.com/rest/actions/workflow-runs"
               "#review-custom-deployment-protection-rules-for-a-workflow-run")
DOCS_RULES = ("https://docs.github.com/rest/deployments/protection-rules"
              "#get-all-deployment-protection-rules-for-an-environment")
STATES = ("approved", "rejected")
MAX_COMMENT = 1024
NOTHING_PENDING = "There are no pending deployment protection rules for this environment on this run."


def _invalid(message: str) -> Response:
    return error(422, f"Invalid request.\n\n{message}", DOCS_REVIEW)


def review_run(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    inst = world.installations.get(repo.installation_id)
    if inst is None or inst.permissions.get("deployments") != "write":
        return error(403, "Resource not accessible by integration", DOCS_REVIEW)
    body = req.body
    if not isinstance(body, dict):
        return error(400, "Problems parsing JSON", DOCS_REVIEW)
    environment, state, comment = body.get("environment_name"), body.get("state"), body.get("comment")
    if not isinstance(environment, str) or not environment:
        return _invalid('"environment_name" wasn\'t supplied.')
    if state is not None and state not in STATES:
        return _invalid(f"For 'properties/state', {json.dumps(state)} is not one of {json.dumps(list(STATES))}.")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT):
        return _invalid(f"For 'properties/comment', the comment must be a string of at most {MAX_COMMENT} "
                        "characters.")
    run_id = int(req.params["id"])
    gates = [g for (r, run, _), g in world.deploys.gates.items() if r == repo.full_name.lower() and run == run_id]
    if not gates:
        return not_found(DOCS_REVIEW)
    gate = world.deploys.gates.get((repo.full_name.lower(), run_id, environment))
    if gate is None or gate.state != "waiting" or (state is None and gate.reports >= MAX_REPORTS):
        return error(422, NOTHING_PENDING, DOCS_REVIEW)
    if state is None:
        gate.reports += 1
    else:
        gate.state = state
    world.deploys.answers.append(GateAnswer(repo.full_name, run_id, environment, state, comment))
    return Response(204)


def _environment_object(base: str, env: Environment) -> dict[str, Any]:
    name = quote(env.name, safe="")
    return {"id": env.id, "node_id": shapes.node_id("Environment", env.id), "name": env.name,
            "url": f"{base}/repos/{env.repo}/environments/{name}",
            "html_url": f"https://github.com/{env.repo}/deployments/activity_log?environments_filter={name}",
            "created_at": iso(env.created_at), "updated_at": iso(env.created_at), "protection_rules": [],
            "deployment_branch_policy": None}


def list_environments(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    found = [e for (r, _), e in sorted(world.deploys.environments.items()) if r == repo.full_name.lower()]
    return paginate(req, found, lambda e: _environment_object(req.base, e),
                    wrap=lambda page: {"total_count": len(found), "environments": page})


def protection_rules(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    env = world.deploys.environments.get((repo.full_name.lower(), req.params["name"]))
    if env is None:
        return not_found(DOCS_RULES)
    rules = [{"id": r["id"], "node_id": shapes.node_id("DeploymentProtectionRule", r["id"]), "enabled": r["enabled"],
              "app": {"id": r["app_id"], "node_id": shapes.node_id("Integration", r["app_id"]), "slug": r["slug"],
                      "integration_url": f"{req.base}/apps/{r['slug']}"}} for r in env.rules]
    return Response(200, {"total_count": len(rules), "custom_deployment_protection_rules": rules})


ROUTES: list[Route] = [
    route("POST", "/repos/{owner}/{repo}/actions/runs/{id}/deployment_protection_rule", "token", review_run),
    route("GET", "/repos/{owner}/{repo}/environments", "token", list_environments),
    route("GET", "/repos/{owner}/{repo}/environments/{name}/deployment_protection_rules", "token", protection_rules),
]
