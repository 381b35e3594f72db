"""The App's OAuth web flow and the user-to-server endpoints, shaped as GitHub documents them.

Web flow (docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/
generating-a-user-access-token-for-a-github-app): ``GET /login/oauth/authorize`` (the browser; here
the user set with `sign_in_as` approves at once and is redirected back with ``code`` and ``state``),
``POST /login/oauth/access_token`` (the server trades the code, once, within ten minutes, for a
``ghu_`` token; GitHub answers errors with status 200 and an ``error`` field). With the token:
``GET /user``, ``GET /user/installations`` (this App's installations the user can reach) and
``GET /user/installations/{id}/repositories`` (the installation's repos the user has explicit
access to, as seeded with `set_permission`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.emulator import shapes
from tests.emulator.shapes_pulls import repo_object
from tests.emulator.wire import Request, Response, Route, not_found, paginate, route
from tests.emulator.world import World

CLIENT_ID = "Iv1.0000000000000000"
CLIENT_SECRET = "emulated-oauth-client-secret-0123456789abcdef"
CODE_LIFETIME = 600
DOCS_ERRORS = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"


@dataclass
class Grant:
    login: str
    redirect_uri: str
    expires_at: float


def _page(status: int, text: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    body = text.encode()
    return status, {"content-type": "text/html; charset=utf-8", "content-length": str(len(body)),
                    **(headers or {})}, body


Answer = tuple[int, dict[str, str], bytes]


def web(world: World, method: str, target: str, raw: bytes, headers: dict[str, str]) -> Answer:
    """``/login/oauth/*``: github.com pages, not the API (no API authentication, no rate limit)."""
    split = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
    with world.lock:
        if split.path == "/login/oauth/authorize" and method == "GET":
            return _authorize(world, query)
        if split.path == "/login/oauth/access_token" and method == "POST":
            form = {k: v[-1] for k, v in parse_qs(raw.decode(errors="replace")).items()}
            if headers.get("content-type", "").startswith("application/json"):
                form = {k: str(v) for k, v in json.loads(raw or b"{}").items()}
            return _access_token(world, {**query, **form}, headers.get("accept", ""))
    return _page(404, "Not Found")


def _authorize(world: World, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    if query.get("client_id") != CLIENT_ID:
        return _page(404, "<h1>404</h1><p>The application could not be found.</p>")
    redirect_uri = query.get("redirect_uri", "")
    if not redirect_uri.startswith(("http://", "https://")):
        return _page(400, "<p>The redirect_uri is missing or not valid.</p>")
    login = world.oauth_login
    if login is None:
        return _page(200, "<h1>Sign in to GitHub</h1><p>(emulator: call sign_in_as(login) first)</p>")
    code = secrets.token_hex(10)
    world.oauth_codes[code] = Grant(login, redirect_uri, world.clock() + CODE_LIFETIME)
    joiner = "&" if "?" in redirect_uri else "?"
    back = f"{redirect_uri}{joiner}{urlencode({'code': code, 'state': query.get('state', '')})}"
    return _page(302, "", {"location": back})


def _access_token(world: World, form: dict[str, str], accept: str) -> tuple[int, dict[str, str], bytes]:
    grant: Grant | None = world.oauth_codes.pop(form.get("code", ""), None)  # single use
    if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
        answer: dict[str, str] = {"error": "incorrect_client_credentials",
                                  "error_description": "The client_id and/or client_secret passed are incorrect."}
    elif grant is None or grant.expires_at <= world.clock() or (
            form.get("redirect_uri") and form["redirect_uri"] != grant.redirect_uri):
        answer = {"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."}
    else:
        token = "ghu_" + secrets.token_hex(18)
        world.user_tokens[token] = grant.login
        answer = {"access_token": token, "expires_in": "28800", "token_type": "bearer", "scope": ""}
    if "error" in answer:
        answer["error_uri"] = DOCS_ERRORS
    if "application/json" in accept:
        body = json.dumps(answer).encode()
        return 200, {"content-type": "application/json; charset=utf-8", "content-length": str(len(body))}, body
    body = urlencode(answer).encode()
    return 200, {"content-type": "application/x-www-form-urlencoded; charset=utf-8",
                 "content-length": str(len(body))}, body


# --- the user-to-server API -----------------------------------------------------------------------


def _login(req: Request) -> str:
    return str(req.principal.login)


def _reachable(world: World, login: str, installation_id: int) -> list[Any]:
    return sorted((r for r in world.repos.values() if r.installation_id == installation_id
                   and world.role_of(r, login) not in (None, "none")), key=lambda r: r.id)


def get_user(world: World, req: Request) -> Response:
    return Response(200, {**shapes.user(req.base, _login(req)), "name": _login(req).title(), "type": "User"})


def user_installations(world: World, req: Request) -> Response:
    login = _login(req)
    found = [i for _, i in sorted(world.installations.items()) if _reachable(world, login, i.id)]
    return paginate(req, found, lambda i: shapes.installation(req.base, i, world.app_slug),
                    lambda chunk: {"total_count": len(found), "installations": chunk})


def user_installation_repositories(world: World, req: Request) -> Response:
    installation_id = int(req.params["id"])
    found = _reachable(world, _login(req), installation_id)
    if installation_id not in world.installations or not found:
        return not_found()
    login = _login(req)

    def render(repo: Any) -> dict[str, Any]:
        return {**repo_object(world, req.base, repo.full_name), "permissions": permissions(world.role_of(repo, login))}

    return paginate(req, found, render, lambda chunk: {"total_count": len(found), "repository_selection": "selected",
                                                       "repositories": chunk})


LADDER = ("read", "triage", "write", "maintain", "admin")


def permissions(role: str | None) -> dict[str, bool]:
    """The ``permissions`` flags GitHub puts on a repository listed for a user: each role has the lower ones."""
    rank = LADDER.index(role) if role in LADDER else -1
    return {"admin": rank >= 4, "maintain": rank >= 3, "push": rank >= 2, "triage": rank >= 1, "pull": rank >= 0}


ROUTES: list[Route] = [
    route("GET", "/user", "user", get_user),
    route("GET", "/user/installations", "user", user_installations),
    route("GET", "/user/installations/{id}/repositories", "user", user_installation_repositories),
]
