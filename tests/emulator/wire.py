"""Requests, answers, routes and GitHub's page-number pagination, independent of the HTTP server."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from tests.emulator.identity import API_DOCS

if TYPE_CHECKING:
    from tests.emulator.world import World

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100


@dataclass
class Principal:
    """Who is calling: an App (JWT), an installation (token) or nobody."""

    kind: str  # "jwt" | "token" | "user" | "none"
    installation_id: int | None = None
    repos: frozenset[str] | None = None  # a token narrowed to these lower-case full names
    error: str | None = None  # why the credentials were refused (401)
    login: str | None = None  # a user-to-server (ghu_) token's user

    @property
    def bucket_key(self) -> str:
        if self.error is not None:
            return "anonymous"
        if self.kind == "token" and self.installation_id is not None:
            return f"installation:{self.installation_id}"
        if self.kind == "user":
            return f"user:{self.login}"
        return "app" if self.kind == "jwt" else "anonymous"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    base: str  # scheme://host:port as the client addressed us; links and object URLs use it
    request_id: str
    principal: Principal = field(default_factory=lambda: Principal("none"))
    params: dict[str, str] = field(default_factory=dict)


@dataclass
class Response:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    after: Callable[[], None] | None = None  # run outside the lock, before the answer is sent


Handler = Callable[["World", Request], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    auth: str  # "jwt" | "token" | "none" (no credentials needed)
    handler: Handler


def route(method: str, path: str, auth: str, handler: Handler) -> Route:
    """path uses {name} for one segment ({number} and {id}: digits only) and {name+} for the rest of
    the path (contents paths)."""
    regex = re.sub(r"\{(\w+)\+\}", r"(?P<\1>.*)", path)
    regex = re.sub(r"\{(number|id)\}", r"(?P<\1>\\d+)", regex)
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", regex)
    return Route(method, re.compile(f"^{regex}$"), auth, handler)


def error(status: int, message: str | None = None, docs: str = API_DOCS, **extra: Any) -> Response:
    body = {"message": message or HTTPStatus(status).phrase, "documentation_url": docs,
            "status": str(status), **extra}
    return Response(status, body)


def not_found(docs: str = API_DOCS) -> Response:
    return error(404, "Not Found", docs)


def validation_failed(resource: str, field_name: str | None, message: str, docs: str = API_DOCS,
                      code: str = "custom") -> Response:
    """422 in the shape of GitHub's recorded "Validation Failed" answers."""
    detail: dict[str, Any] = {"resource": resource, "code": code, "message": message}
    if field_name is not None:
        detail["field"] = field_name
    return error(422, "Validation Failed", docs, errors=[detail])


def int_param(query: dict[str, str], name: str, default: int) -> int:
    try:
        value = int(query.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def per_page(query: dict[str, str]) -> int:
    return min(int_param(query, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE)


def paginate(req: Request, items: Sequence[Any], render: Callable[[Any], Any] | None = None,
             wrap: Callable[[list[Any]], Any] | None = None) -> Response:
    """One page of `items` as GitHub serves it, with a `Link` header of absolute URLs on the host and
    port the client used (next/last on all but the last page, first/prev on all but the first).
    `render` turns the served items (only those) into JSON objects; `wrap` the page into the body."""
    size, page = per_page(req.query), int_param(req.query, "page", 1)
    chunk = [render(item) if render else item for item in items[(page - 1) * size: page * size]]
    last = max(1, -(-len(items) // size))
    links: list[tuple[int, str]] = []
    if page > 1:
        links.append((min(page - 1, last), "prev"))
    if page < last:
        links += [(page + 1, "next"), (last, "last")]
    if page > 1:
        links.append((1, "first"))
    headers = {"link": ", ".join(f'<{page_url(req, n)}>; rel="{rel}"' for n, rel in links)} if links else {}
    return Response(200, wrap(chunk) if wrap else chunk, headers)


def page_url(req: Request, page: int) -> str:
    query = {k: v for k, v in req.query.items() if k != "page"}
    query["page"] = str(page)
    return f"{req.base}{req.path}?{urlencode(query)}"
