"""Web hardening (issue #9 item 5): the login's `next` stays on this site whatever it holds, security
headers on every answer, CSRF on every form, and no secret in the settings' repr."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import redis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.security import safe_next
from foundation.settings import Settings
from tests.webapp_support import csrf_of, make_app, post_form

SITE = "https://merge-hold.example"
FALLBACK = "/"


def browser_target(location: str) -> str:
    """Where a browser goes for ``Location: location`` on our site, per the WHATWG URL parser's quirks
    that matter here: tab and newline removed anywhere, a backslash read as a slash."""
    cleaned = "".join(c for c in location if c not in "\t\n\r").replace("\\", "/").strip("\x00 ")
    return urljoin(SITE + "/login", cleaned)


def stays_home(location: str) -> bool:
    target = urlsplit(browser_target(location))
    return target.scheme == "https" and target.netloc == "merge-hold.example"


@pytest.mark.parametrize(("target", "kept"), [
    ("/acme/widgets/pull/1", True),
    ("/?repo=acme%2Fwidgets", True),
    ("/rooms", True),
    ("//evil.example/x", False),
    ("/%09/evil.example", False),  # Werkzeug used to drop the tab: Location: //evil.example
    ("/\t/evil.example", False),
    ("/\n/evil.example", False),
    ("/x\r\nSet-Cookie: a=b", False),  # header injection; used to answer 500
    ("/%0a/evil.example", False),
    ("/%2F/evil.example", False),
    ("/%2f%2fevil.example", False),
    ("/%252F/evil.example", False),  # double-encoded
    ("/\\evil.example", False),
    ("/%5Cevil.example", False),
    ("\\\\evil.example", False),
    ("https://evil.example/", False),
    ("javascript:alert(1)", False),
    ("/ /evil.example", False),
    ("/\u3000/evil.example", False),
    ("/\uff0f/evil.example", False),  # full-width solidus
    ("/\u2215evil.example", False),
    ("///evil.example", False),
    ("", False),
    (None, False),
    ("evil.example", False),
    ("/" + "a" * 5000, False),
])
def test_next_rows(target: str | None, kept: bool) -> None:
    assert (safe_next(target, FALLBACK) == target) is kept


ALPHABET = st.sampled_from(["/", "\\", "%", "2", "F", "f", "5", "C", "c", "0", "9", "a", "e", ":", "@", ".", "?",
                            "#", "\t", "\n", "\r", " ", "\x00", "\x7f", "\u3000", "\uff0f", "\u2215", "\u00a0",
                            "e", "v", "i", "l", "h", "t", "p", "s", "j"])
NEXT_VALUES = st.one_of(
    st.text(ALPHABET, max_size=24),
    st.builds(lambda a, b: a + b, st.sampled_from(["/", "//", "/\\", "/%2F", "/%09/", "https:", "\\"]),
              st.text(ALPHABET, max_size=16)),
    st.text(max_size=16),
)


@given(NEXT_VALUES)
@settings(max_examples=400, deadline=None)
def test_safe_next_never_leaves_the_site(target: str) -> None:
    chosen = safe_next(target, FALLBACK)
    assert chosen in (target, FALLBACK)
    assert stays_home(chosen)


@pytest.fixture()
def login_app(redis_client: redis.Redis, tmp_path: Path) -> tuple[Flask, str]:
    return make_app(redis_client, tmp_path)


@given(NEXT_VALUES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_login_redirect_never_leaves_the_site(login_app: tuple[Flask, str], target: str) -> None:
    app, token = login_app
    response = post_form(app.test_client(), "/login", {"token": token, "next": target})
    assert response.status_code == 302  # never a 500, whatever the bytes
    assert stays_home(response.headers["Location"])


@pytest.mark.parametrize("path", ["/login", "/healthz", "/api/v1/holds", "/nope"])
def test_security_headers_on_every_answer(redis_client: redis.Redis, tmp_path: Path, path: str) -> None:
    app, _ = make_app(redis_client, tmp_path)
    headers = app.test_client().get(path).headers
    csp = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    # one script, a file of this site (static/live.js): nothing inline, evaluated or from elsewhere
    assert "script-src 'self';" in csp and "connect-src 'self';" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "nonce-" not in csp
    assert "form-action 'self' https://github.com;" in csp  # the App manifest set-up posts a form there
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in headers  # plain http: HSTS would be ignored, or pin a dev host
    https, _ = make_app(redis_client, tmp_path / "https", public_url="https://merge-hold.example")
    assert "max-age=" in https.test_client().get(path).headers["Strict-Transport-Security"]


def test_the_session_cookie_is_secure_over_https(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path, public_url="https://merge-hold.example")
    cookie = post_form(app.test_client(), "/login", {"token": token}).headers["Set-Cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


@pytest.mark.parametrize(("case", "field"), [("missing", None), ("wrong", "x" * 43), ("empty", "")])
def test_forms_need_the_csrf_token(redis_client: redis.Redis, tmp_path: Path, case: str, field: str | None) -> None:
    app, token = make_app(redis_client, tmp_path)
    client = app.test_client()
    csrf_of(client)
    data = {"token": token, **({"csrf_token": field} if field is not None else {})}
    response = client.post("/login", data=data)
    assert response.status_code == 400, case
    assert client.get("/").status_code == 302  # not logged in


def test_machine_endpoints_need_no_csrf(redis_client: redis.Redis, tmp_path: Path) -> None:
    app, token = make_app(redis_client, tmp_path)
    answer = app.test_client().post("/api/v1/hook-events", json={"events": []},
                                    headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 202


def test_the_settings_repr_holds_no_secret() -> None:
    values: dict[str, Any] = {
        "github_private_key": "-----BEGIN RSA PRIVATE KEY-----zzPEMzz", "github_webhook_secret": "zzHOOKzz",
        "github_client_secret": "zzCLIENTzz", "slack_signing_secret": "zzSLACKzz", "slack_bot_token": "zzBOTzz",
        "mattermost_token": "zzMMzz", "secret_key": "zzKEYzz", "metrics_token": "zzMETRICSzz"}
    shown = repr(Settings(**values)) + str(Settings(**values))
    assert not [v for v in values.values() if v in shown]
