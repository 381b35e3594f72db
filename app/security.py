"""Web hardening shared by every page: same-site redirects, security headers and CSRF tokens.

The dashboard is server-rendered and works without any script; its one script (`static/live.js`, a
file of this site, refreshing the live pages) is all the CSP allows: no inline script, no other
origin. A form POST carries a per-session CSRF token; the JSON API, webhooks and chat commands are
authenticated by bearer token or signature instead, never by the cookie, so their routes (not their
paths: `MACHINE_ROUTES`) are exempt.
"""

from __future__ import annotations

import hmac
import re
import secrets
import unicodedata
from urllib.parse import unquote, urlsplit

from flask import Flask, Response, abort, request, session

CSP = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; "
       "form-action 'self'{forms}; base-uri 'none'; frame-ancestors 'none'")
"""Scripts only from this site's own files (one: `static/live.js`, which refreshes the live pages by
fetching them from here): no inline script, no ``eval``, no other origin, so injected markup still
cannot run any. Forms may post here and to GitHub's web pages (the App manifest set-up posts there)."""
CSRF_FIELD = "csrf_token"
MACHINE_ROUTES = ("/api/", "/webhooks/", "/chat/")
"""Machine endpoints: their routes' rules start so. They are authenticated by bearer token or request
signature (which a browser never adds), never by the cookie: exempt from CSRF, and answered in JSON.
Judged by the rule a request matched, never by its path: the dashboard's
``/<owner>/<repo>/pull/<n>/hold`` of an owner named ``api``, ``chat`` or ``webhooks`` has a path that
starts like a machine route's and is a form all the same."""


def machine_route() -> bool:
    """Whether the current request matched a machine route (its rule, not its path, says so)."""
    return request.url_rule is not None and request.url_rule.rule.startswith(MACHINE_ROUTES)
MAX_NEXT = 2048
FORWARDING = re.compile(r"forwarded|^via$|client-?ip|real-?ip|connecting-?ip|^x-envoy-external-address$"
                        r"|^x-proxyuser-ip$", re.IGNORECASE)
"""Headers a proxy adds to say where a request came from: ``Forwarded`` (RFC 7239), ``Via``, every
``X-Forwarded-*``, ``X-Real-IP``, ``True-Client-IP``, ``CF-Connecting-IP``, ``Fastly-Client-IP``,
``X-Client-IP``, ``X-Cluster-Client-IP``, ``X-Original-Forwarded-For``, Envoy's and Google's. A proxy on
this host makes every request come from loopback; any of these means one stands in between."""


def forwarding_header() -> str | None:
    """The first header of the current request that says a proxy forwarded it, or None."""
    return next((name for name, _value in request.headers.items() if FORWARDING.search(name)), None)


def _unsafe_char(c: str) -> bool:
    # Control characters (browsers strip tab/newline inside URLs, turning "/\t/x" into "//x"), the
    # backslash (browsers read it as a slash) and anything outside ASCII (full-width slashes and other
    # look-alikes some parsers normalise): none belongs in a path we produced ourselves.
    return c == "\\" or not c.isascii() or unicodedata.category(c).startswith("C") or c == " "


def safe_next(target: str | None, fallback: str) -> str:
    """``target`` when it is a path on this site, else ``fallback``: the login's redirect can never be
    sent off-site (``//evil``, ``/\\evil``, ``/%09/evil``, ``https:…``, encoded slashes or controls)."""
    if not target or len(target) > MAX_NEXT:
        return fallback
    decoded, seen = target, {target}
    for _ in range(4):  # what any later hop might decode it to, up to a few rounds of %-encoding
        decoded = unquote(decoded)
        if decoded in seen:
            break
        seen.add(decoded)
    for form in seen:
        if any(_unsafe_char(c) for c in form):
            return fallback
        if not form.startswith("/") or form.startswith("//"):
            return fallback
        parts = urlsplit(form)
        if parts.scheme or parts.netloc:
            return fallback
    return target


def csrf_token() -> str:
    """This session's CSRF token (made on first use); templates put it in every form."""
    token = session.get(CSRF_FIELD)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session[CSRF_FIELD] = token
    return token


def _check_csrf() -> None:
    if request.method in ("GET", "HEAD", "OPTIONS") or machine_route():
        return
    if request.url_rule is None:
        return  # no route matched: the 404 or 405 that follows changes nothing
    expected = session.get(CSRF_FIELD)
    given = request.form.get(CSRF_FIELD, "")
    if not (isinstance(expected, str) and given and hmac.compare_digest(expected.encode(), given.encode())):
        abort(400, description="The form has expired or did not come from this site; reload the page and retry.")


HSTS = ("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
"""Added when the site is served over https, or the request came in over it."""


def response_headers(github_web_url: str = "https://github.com") -> tuple[tuple[str, str], ...]:
    """The headers every response carries, HSTS aside. One list for Flask's responses and for the
    webhook receiver, which answers without Flask (`app.webhooks`)."""
    policy = CSP.format(forms=f" {github_web_url}" if github_web_url.startswith(("http://", "https://")) else "")
    return (("Content-Security-Policy", policy), ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin"))


def install(app: Flask, *, https: bool, github_web_url: str = "https://github.com") -> None:
    """CSRF checks before each request, security headers after it."""
    app.before_request(_check_csrf)
    app.jinja_env.globals["csrf_token"] = csrf_token
    always = response_headers(github_web_url)

    @app.after_request
    def headers(response: Response) -> Response:
        for name, value in always:
            response.headers.setdefault(name, value)
        if https or request.is_secure:
            response.headers.setdefault(*HSTS)
        return response
