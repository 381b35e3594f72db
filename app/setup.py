"""`GET|POST /setup`: register the GitHub App through GitHub's manifest flow, then say what is left.

1. `GET /setup` asks where to register the App (a user account or an organization).
2. `POST /setup` answers a form that posts the manifest (`core.app_manifest`, filled with
   MERGE_HOLD_PUBLIC_URL) to `{GITHUB_WEB_URL}/settings/apps/new` or
   `/organizations/{org}/settings/apps/new`, with a one-use `state`.
3. GitHub sends the browser back to `GET /setup?code=…&state=…`; the code is exchanged
   (`POST {GITHUB_API_URL}/app-manifests/{code}/conversions`) for the App's id, slug, private key,
   webhook secret and OAuth client, which are written to the data folder (files mode 0600) — or, with
   `merge-hold setup --print`, printed for a secret store — and the page shows the remaining steps.

Open only while no App is configured (App credentials in the environment, or a completed set-up in the
data folder), and only from this machine — loopback, with no forwarding header of any proxy
(`app.security.FORWARDING`) — or with the one-time setup token logged at start (kept in Redis, so every
web worker knows it; dropped once the App exists).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import re
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from flask import Blueprint, Flask, abort, current_app, render_template, request
from redis.exceptions import RedisError

from app.security import forwarding_header
from core import keys
from core.app_manifest import manifest
from foundation.settings import Settings
from state.decoding import as_text

log = logging.getLogger(__name__)

bp = Blueprint("setup", __name__)
EXTENSION = "merge_hold_setup"
STATE_TTL = 3600
"""GitHub's manifest codes expire within an hour; a state older than that has nothing to exchange."""
APP_FILE, KEY_FILE = "github-app.json", "github-app.pem"
SECRET_FILE, CLIENT_SECRET_FILE, ENV_FILE = "webhook-secret", "github-client-secret", "app.env"
LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
ORG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


class States(Protocol):
    """One-use `state` values of flows this server started, and the one-time setup token."""

    def put(self, state: str) -> None: ...
    def take(self, state: str) -> bool: ...
    def token(self) -> str: ...
    def drop_token(self) -> None: ...


class RedisStates:
    """Shared by every web worker (gunicorn forks several): the first one to start mints the token."""

    TOKEN = keys.SETUP_TOKEN

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def put(self, state: str) -> None:
        self.redis.set(keys.setup_state(state), "1", ex=STATE_TTL)

    def take(self, state: str) -> bool:
        return bool(self.redis.delete(keys.setup_state(state)))

    def token(self) -> str:
        self.redis.set(self.TOKEN, secrets.token_urlsafe(24), nx=True)
        found = self.redis.get(self.TOKEN)
        return as_text(found or "")

    def drop_token(self) -> None:
        self.redis.delete(self.TOKEN)


class MemoryStates:
    """For `merge-hold setup`: one process, no Redis."""

    def __init__(self) -> None:
        self.values: set[str] = set()
        self._token: str | None = None

    def put(self, state: str) -> None:
        self.values.add(state)

    def take(self, state: str) -> bool:
        found = state in self.values
        self.values.discard(state)
        return found

    def token(self) -> str:
        if self._token is None:
            self._token = secrets.token_urlsafe(24)
        return self._token

    def drop_token(self) -> None:
        self._token = ""


@dataclass
class SetupConfig:
    settings: Settings
    states: States
    print_only: bool = False
    out: Callable[[str], None] = print
    done: Callable[[], None] | None = None  # `merge-hold setup` stops once the App exists
    redis: Any = None
    """The service's Redis, where the bootstrap's progress is read once the App exists (None: `merge-hold
    setup` alone, which has nothing to show then)."""


def data_dir(settings: Settings) -> Path:
    return Path(settings.data_dir).expanduser()


def configured(settings: Settings) -> bool:
    return settings.has_app_credentials or (data_dir(settings) / APP_FILE).exists()


def install(app: Flask, config: SetupConfig, *, announce: bool = True) -> None:
    """Register `/setup` on `app`; while no App is configured (and `announce`), log how to reach it."""
    app.extensions[EXTENSION] = config
    app.register_blueprint(bp)
    # A dry run (`merge-hold dev`) is reached from loopback: no token.
    if announce and not configured(config.settings) and not config.settings.dry_run:
        try:
            token = config.states.token()
        except RedisError as exc:
            # The app starts without Redis (webhooks answer 503 until it is back); so does /setup.
            log.warning("no GitHub App configured; /setup token unavailable (%s): open /setup from loopback", exc)
            return
        log.warning("no GitHub App configured: register one at %s/setup (from loopback, or from anywhere "
                    "with ?token=%s)", config.settings.public_url, token)


def _config() -> SetupConfig:
    found: SetupConfig = current_app.extensions[EXTENSION]
    return found


def local() -> bool:
    """Whether the current request was made on this machine: from loopback, and through no proxy (a
    proxy on this host makes every request come from loopback; any forwarding header refuses it)."""
    return request.remote_addr in LOOPBACK and forwarding_header() is None


def _allowed(config: SetupConfig) -> bool:
    if local():
        return True
    given = request.values.get("token", "")
    if not given or config.settings.dry_run:
        return False
    return hmac.compare_digest(given.encode(), config.states.token().encode())


@bp.route("/setup", methods=["GET", "POST"])
def setup() -> Any:
    config = _config()
    settings = config.settings
    if configured(settings):
        # Closed for good once an App exists: nothing is created or converted here any more, whoever asks.
        # The operator on this machine (the one-time token is spent) may still read how far the
        # bootstrap is — the step the set-up's last page told them to wait for.
        if request.method == "GET" and not request.args and config.redis is not None and local():
            return _installing(config)
        abort(404)
    state = request.args.get("state", "")
    if request.method == "GET" and request.args.get("code"):
        # GitHub's redirect back: authorised by the one-use state this server issued.
        if not state or not config.states.take(state):
            abort(403, "unknown or used state: start again at /setup")
        return _convert(config, request.args["code"])
    if not _allowed(config):
        proxy = forwarding_header()
        why = f" (this request came through a proxy: it carries {proxy})" if proxy else ""
        abort(403, f"open /setup from the server itself, without a proxy{why}, or add ?token=… as logged at start")
    token = request.values.get("token", "")
    if request.method == "GET":
        return render_template("setup.html", step="where", settings=settings, token=token,
                               loopback_url=_loopback(settings.public_url))
    org = request.form.get("org", "").strip()
    if org and not ORG.match(org):
        return render_template("setup.html", step="where", settings=settings, token=token,
                               error=f"{org!r} is not a GitHub organization name",
                               loopback_url=_loopback(settings.public_url)), 400
    state = secrets.token_urlsafe(24)
    config.states.put(state)
    where = f"/organizations/{quote(org)}/settings/apps/new" if org else "/settings/apps/new"
    return render_template("setup.html", step="post", settings=settings, org=org,
                           action=f"{settings.github_web_url}{where}?state={quote(state)}",
                           manifest=json.dumps(manifest(settings.public_url, freeze_mode=settings.freeze_mode)))


def _loopback(public_url: str) -> bool:
    return bool(re.match(r"^https?://(127\.|localhost|\[::1\])", public_url))


def _convert(config: SetupConfig, code: str) -> Any:
    settings = config.settings
    url = f"{settings.github_api_url}/app-manifests/{quote(code, safe='')}/conversions"
    req = urllib.request.Request(url, data=b"", method="POST", headers={
        "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "merge-hold-setup"})
    try:
        with urllib.request.urlopen(req, timeout=15) as answer:
            app_data: dict[str, Any] = json.loads(answer.read())
    except (urllib.error.URLError, ValueError) as exc:
        log.warning("manifest conversion failed: %s", exc)
        return render_template("setup.html", step="failed", settings=settings,
                               error="GitHub did not accept the code (used or older than an hour?): "
                                     "start again at /setup"), 502
    env = credentials_env(app_data, data_dir(settings))
    if config.print_only:
        config.out(env + "\n" + str(app_data["pem"]).strip() + "\n")
        where = "printed on the server's terminal (nothing was written to disk)"
    else:
        store_credentials(data_dir(settings), app_data, env)
        where = f"written to {data_dir(settings).resolve()} (files mode 0600; {ENV_FILE} has them as variables)"
    config.states.drop_token()
    if config.done is not None:
        config.done()
    slug = str(app_data.get("slug", ""))
    return render_template("setup.html", step="done", settings=settings, app=app_data, where=where,
                           install_url=f"{settings.github_web_url}/apps/{quote(slug)}/installations/new",
                           env_file=str((data_dir(settings) / ENV_FILE).resolve()))


def credentials_env(app_data: dict[str, Any], folder: Path) -> str:
    """The settings the service needs, as `NAME=value` lines (shell-quoted where it matters)."""
    lines = {
        "GITHUB_APP_ID": str(app_data["id"]),
        "GITHUB_PRIVATE_KEY_PATH": str((folder / KEY_FILE).resolve()),
        "GITHUB_WEBHOOK_SECRET": str(app_data.get("webhook_secret") or ""),
        "MERGE_HOLD_APP_SLUG": str(app_data.get("slug", "")),
        "GITHUB_CLIENT_ID": str(app_data.get("client_id") or ""),
        "GITHUB_CLIENT_SECRET": str(app_data.get("client_secret") or ""),
    }
    return "\n".join(f"{name}={value}" for name, value in lines.items() if value)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older file may have been created with a looser mode
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def store_credentials(folder: Path, app_data: dict[str, Any], env: str) -> list[Path]:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    public = {k: app_data.get(k) for k in ("id", "slug", "name", "html_url", "client_id", "node_id")}
    public["owner"] = (app_data.get("owner") or {}).get("login")
    written = {
        KEY_FILE: str(app_data["pem"]).strip() + "\n",
        SECRET_FILE: str(app_data.get("webhook_secret") or "") + "\n",
        CLIENT_SECRET_FILE: str(app_data.get("client_secret") or "") + "\n",
        ENV_FILE: env + "\n",
        APP_FILE: json.dumps(public, indent=2) + "\n",  # last: its presence closes /setup
    }
    paths = []
    for name, text in written.items():
        _write_private(folder / name, text)
        paths.append(folder / name)
    return paths


def _installing(config: SetupConfig) -> str:
    """The read-only page after set-up: each installation's bootstrap under way (`app.reads.bootstrap_lines`,
    as the dashboard shows it), or that none is."""
    from app.reads import bootstrap_lines

    settings = config.settings
    try:
        found = bootstrap_lines(config.redis, settings.write_rate_per_minute, settings.write_hourly,
                                lambda _repo: True, datetime.now(UTC))
    except RedisError:
        abort(503, "Redis is unavailable: the bootstrap's progress cannot be read")
    return render_template("setup.html", step="installing", bootstraps=found)
