"""One request through the emulated GitHub, in GitHub's order: injected faults, authentication, the
primary then the secondary rate limit, routing, repository visibility, and finally the endpoint."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.emulator import (
    auth,
    oauth,
    routes_apps,
    routes_branches,
    routes_checks,
    routes_contents,
    routes_deliveries,
    routes_deployments,
    routes_issues,
    routes_pulls,
    routes_rulesets,
    routes_statuses,
)
from tests.emulator.state import Fault, RequestRecord
from tests.emulator.wire import Principal, Request, Response, Route, error, not_found
from tests.emulator.world import World

log = logging.getLogger(__name__)

ROUTES: list[Route] = [*routes_apps.ROUTES, *routes_pulls.ROUTES, *routes_statuses.ROUTES,
                       *routes_contents.ROUTES, *routes_deliveries.ROUTES, *oauth.ROUTES,
                       *routes_branches.ROUTES, *routes_issues.ROUTES, *routes_rulesets.ROUTES,
                       *routes_deployments.ROUTES, *routes_checks.ROUTES]
DOCS_RATE = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
SECONDARY = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
             "If you reach out to GitHub Support for help, please include the request ID {}.")
_UNPARSABLE = object()


def dispatch(world: World, method: str, target: str, headers: Mapping[str, str], raw: bytes,
             base: str) -> tuple[int, dict[str, str], bytes]:
    """Answer one request: (status, headers, body bytes). `headers` keys are lower-case."""
    split = urlsplit(target)
    if split.path.startswith("/login/oauth/"):
        return oauth.web(world, method, target, raw, dict(headers))  # github.com's pages, not the API
    query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body = _UNPARSABLE
    with world.lock:
        request_id = f"E0E0:{next(world.request_ids):06X}:{id(world) % 0xFFFFFF:06X}"
        principal = auth.identify(world, headers.get("authorization"))
        req = Request(method, unquote(split.path) or "/", query, body, base, request_id, principal)
        try:
            response = _answer(world, req)
        except Exception:
            log.exception("emulator failed on %s %s", method, target)
            response = error(500, "Server Error")
        out = auth.rate_headers(world, principal.bucket_key)
        world.log.append(RequestRecord(method, req.path, query, response.status, principal.kind,
                                       None if body is _UNPARSABLE else body, principal.installation_id))
    if response.after is not None:
        response.after()
    # GitHub's clock, as the emulator keeps it: `merge-hold doctor` measures the JWT clock skew with it.
    out.update({"date": formatdate(world.clock(), usegmt=True),
                "content-type": "application/json; charset=utf-8", "x-github-request-id": request_id,
                "x-github-api-version-selected": "2022-11-28", "x-github-media-type": "github.v3; format=json"})
    out.update(response.headers)
    payload = _encode(response.body)
    out["content-length"] = str(len(payload))
    return response.status, out, payload


def _encode(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _answer(world: World, req: Request) -> Response:
    fault = _take_fault(world, req)
    principal = req.principal
    if fault is not None:
        auth.charge(world, principal.bucket_key)
        return _fault_response(fault, req)
    found = _route(req)
    if found is not None and found.auth == "none":
        # Endpoints that take no credentials at all (the App-manifest conversion).
        auth.charge(world, principal.bucket_key)
        return found.handler(world, req)
    if principal.kind == "none" and principal.error is None:
        auth.charge(world, principal.bucket_key)
        return error(401, "Requires authentication")
    if principal.error is not None:
        auth.charge(world, principal.bucket_key)
        return error(401, principal.error)
    if not auth.charge(world, principal.bucket_key):
        who = (f"installation ID {principal.installation_id}" if principal.installation_id is not None
               else "this App")
        return error(403, f"API rate limit exceeded for {who}.", DOCS_RATE)
    wait = auth.pace_write(world, req.method, req.path, principal.installation_id)
    if wait is not None:
        answer = error(403, SECONDARY.format(req.request_id), DOCS_RATE + "#about-secondary-rate-limits")
        answer.headers["retry-after"] = str(wait)
        return answer
    if found is None:
        return not_found()
    if found.auth == "jwt" and principal.kind != "jwt":
        return error(401, auth.BAD_JWT)
    if found.auth == "token" and principal.kind != "token":
        return error(403, "Resource not accessible by integration")
    if found.auth == "user" and principal.kind != "user":
        return error(403, "Resource not accessible by integration" if principal.kind != "none"
                     else "Requires authentication")
    if "owner" in req.params and found.auth == "token" and not _visible(world, principal, req):
        # GitHub answers 404, not 403, for a repository the token may not see: it does not
        # confirm that the repository exists.
        return not_found()
    if req.body is _UNPARSABLE:
        return error(400, "Problems parsing JSON")
    return found.handler(world, req)


def _route(req: Request) -> Route | None:
    for candidate in ROUTES:
        if candidate.method != req.method:
            continue
        match = candidate.pattern.match(req.path)
        if match is not None:
            req.params = {k: v for k, v in match.groupdict().items() if v is not None}
            return candidate
    return None


def _visible(world: World, principal: Principal, req: Request) -> bool:
    repo = world.repo(f"{req.params['owner']}/{req.params['repo']}")
    if repo is None or repo.installation_id != principal.installation_id:
        return False
    return principal.repos is None or repo.full_name.lower() in principal.repos


def _take_fault(world: World, req: Request) -> Fault | None:
    for fault in world.faults:
        if fault.method in ("*", req.method) and fault.path.search(req.path):
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    world.faults.remove(fault)
            return fault
    return None


def _fault_response(fault: Fault, req: Request) -> Response:
    if fault.body is not None:
        return Response(fault.status, fault.body, dict(fault.headers))
    if fault.status in (403, 429) and "retry-after" in fault.headers:
        answer = error(fault.status, SECONDARY.format(req.request_id), DOCS_RATE + "#about-secondary-rate-limits")
    else:
        answer = error(fault.status, HTTPStatus(fault.status).phrase)
    answer.headers.update(fault.headers)
    return answer
