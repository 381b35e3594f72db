"""The service's settings: read once from the environment, in a factory or `main`, never at import.

Every variable is listed in `FIELDS` with its default and why; an unknown ``MERGE_HOLD_*`` variable or a
bad value fails at start with a message naming the variable (policy-bot's config rejects unknown keys
the same way).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.chat_request import Binding, parse_binding
from core.outgoing_urls import networks
from core.redis_url import RedisUrlError
from core.redis_url import check as check_redis_url


class SettingsError(ValueError):
    """A missing or invalid environment variable; the message names it."""


def _bool(name: str, raw: str) -> bool:
    low = raw.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off", ""):
        return False
    raise SettingsError(f"{name}: expected true or false, got {raw!r}")


def _int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name}: expected a whole number, got {raw!r}") from None
    if value < 0:
        raise SettingsError(f"{name}: must not be negative, got {raw!r}")
    return value


def _float(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
    if value <= 0:
        raise SettingsError(f"{name}: must be positive, got {raw!r}")
    return value


def _freeze_mode(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("statuses", "ruleset"):
        raise SettingsError(f"{name}: expected statuses or ruleset, got {raw!r}")
    return value


def _csv(_name: str, raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _str(_name: str, raw: str) -> str:
    return raw


def _redis_url(name: str, raw: str) -> str:
    try:
        check_redis_url(raw)
    except RedisUrlError as exc:
        # The message never repeats the URL: it may carry a password.
        raise SettingsError(f"{name}: {exc}") from None
    return raw


def _binding(name: str, raw: str) -> Binding:
    try:
        return parse_binding(name, raw)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def _networks(name: str, raw: str) -> tuple[str, ...]:
    parts = _csv(name, raw)
    try:
        networks(parts)
    except ValueError as exc:
        raise SettingsError(f"{name}: {exc}") from None
    return parts


def _url(name: str, raw: str) -> str:
    if not raw.startswith(("http://", "https://")):
        raise SettingsError(f"{name}: expected an http(s) URL, got {raw!r}")
    return raw.rstrip("/")


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None
    github_app_id: int | None = None
    # Secrets stay out of repr(): a settings object printed in a traceback or a log leaks nothing.
    github_private_key: str | None = field(default=None, repr=False)
    github_webhook_secret: str | None = field(default=None, repr=False)
    github_api_url: str = "https://api.github.com"
    github_web_url: str = "https://github.com"
    github_client_id: str | None = None
    github_client_secret: str | None = field(default=None, repr=False)
    public_url: str = "http://127.0.0.1:8000"
    slack_signing_secret: str | None = field(default=None, repr=False)
    slack_teams: Binding = ()
    slack_bot_token: str | None = field(default=None, repr=False)
    slack_api_url: str = "https://slack.com/api"  # slack_sdk wants a trailing "/": add it there
    mattermost_token: str | None = field(default=None, repr=False)
    mattermost_url: str | None = None
    mattermost_teams: Binding = ()
    api_tokens_file: str | None = None
    # MERGE_HOLD_* -----------------------------------------------------------------------------
    dry_run: bool = False
    queue_name: str = "merge-hold"
    max_body_bytes: int = 25 * 1024 * 1024
    write_rate_per_minute: float = 60.0
    write_burst: int = 10
    write_hourly: int = 450
    freeze_mode: str = "statuses"
    secret_key: str | None = field(default=None, repr=False)
    app_slug: str | None = None
    chat_allowed_users: tuple[str, ...] = ()
    chat_admins: tuple[str, ...] = ()
    data_dir: str = ".merge-hold"
    log_level: str = "INFO"
    reconcile_seconds: int = 600
    min_replicas: int = 0
    metrics_token: str | None = field(default=None, repr=False)
    demo_signin: bool = False
    webhook_allow_networks: tuple[str, ...] = ()

    @property
    def has_app_credentials(self) -> bool:
        return self.github_app_id is not None and self.github_private_key is not None

    @property
    def bot_login(self) -> str | None:
        """The login GitHub shows for our App's actions; events it sends are ours (no loops)."""
        return f"{self.app_slug}[bot]" if self.app_slug else None


# variable -> (field, parser, why). The reasons are the documentation (README table is generated from it).
FIELDS: dict[str, tuple[str, Callable[[str, str], Any], str]] = {
    "REDIS_URL": ("redis_url", _redis_url,
                  "redis://, rediss://, unix://, or redis+sentinel://[u:p@]H:P[,H:P]/SERVICE[/DB] (rediss+ TLS)"),
    "GITHUB_APP_ID": ("github_app_id", _int, "the GitHub App's id, the JWT issuer"),
    "GITHUB_PRIVATE_KEY": ("github_private_key", _str, "the App's PEM private key itself"),
    "GITHUB_PRIVATE_KEY_PATH": ("github_private_key", _str, "or a path to the PEM file"),
    "GITHUB_WEBHOOK_SECRET": ("github_webhook_secret", _str, "the App's webhook secret (HMAC key)"),
    "GITHUB_API_URL": ("github_api_url", _url, "https://api.github.com, or GHES `https://HOST/api/v3`"),
    "GITHUB_WEB_URL": ("github_web_url", _url, "https://github.com, or GHES `https://HOST`: OAuth and App set-up"),
    "GITHUB_CLIENT_ID": ("github_client_id", _str, "the App's OAuth client id (Sign in with GitHub)"),
    "GITHUB_CLIENT_SECRET": ("github_client_secret", _str, "the App's OAuth client secret"),
    "MERGE_HOLD_PUBLIC_URL": ("public_url", _url, "the dashboard's base URL, for status target_url"),
    "SLACK_SIGNING_SECRET": ("slack_signing_secret", _str, "verifies Slack's v0 request signatures"),
    "MERGE_HOLD_SLACK_TEAMS": ("slack_teams", _binding, "`T123=acme+acme-labs,T456=other`: workspace -> orgs"),
    "SLACK_BOT_TOKEN": ("slack_bot_token", _str, "bot token for chat.postMessage notifications"),
    "SLACK_API_URL": ("slack_api_url", _url, "Slack's Web API base (a stand-in in tests)"),
    "MATTERMOST_TOKEN": ("mattermost_token", _str, "the Mattermost slash command's token"),
    "MATTERMOST_URL": ("mattermost_url", _url, "the Mattermost server: replies go only there"),
    "MERGE_HOLD_MATTERMOST_TEAMS": ("mattermost_teams", _binding, "Mattermost team id -> orgs, same form"),
    "MERGE_HOLD_API_TOKENS_FILE": ("api_tokens_file", _str, "file of hashed API tokens (`merge-hold token`)"),
    "MERGE_HOLD_DRY_RUN": ("dry_run", _bool, "record statuses instead of posting them"),
    "MERGE_HOLD_QUEUE": ("queue_name", _str, "rq interactive queue name (bulk queues: NAME-bulk-inst-ID)"),
    "MERGE_HOLD_MAX_BODY_BYTES": ("max_body_bytes", _int, "webhook size cap (GitHub's own cap is 25 MB)"),
    "MERGE_HOLD_WRITE_RATE": ("write_rate_per_minute", _float, "status writes a minute, per installation"),
    "MERGE_HOLD_WRITE_BURST": ("write_burst", _int, "status writes at once after a quiet spell (0 or 1: none)"),
    "MERGE_HOLD_WRITE_HOURLY": ("write_hourly", _int,
                                "writes an hour, per installation (GitHub allows about 500; 0: no hourly cap)"),
    "MERGE_HOLD_FREEZE_MODE": ("freeze_mode", _freeze_mode,
                               "statuses or ruleset: how a room hold or freeze window binds (repo config overrides)"),
    "MERGE_HOLD_SECRET_KEY": ("secret_key", _str, "signs dashboard sessions (random if unset)"),
    "MERGE_HOLD_APP_SLUG": ("app_slug", _str, "the App's slug: its `slug[bot]` events are ignored"),
    "MERGE_HOLD_CHAT_ALLOWED_USERS": ("chat_allowed_users", _csv, "chat user/channel ids allowed PR holds"),
    "MERGE_HOLD_CHAT_ADMINS": ("chat_admins", _csv, "chat user ids for org/repo holds and exemptions"),
    "MERGE_HOLD_DATA_DIR": ("data_dir", _str, "`merge-hold dev`'s Redis data; `/setup` stores App credentials here"),
    "MERGE_HOLD_LOG_LEVEL": ("log_level", _str, "logging level"),
    "MERGE_HOLD_RECONCILE_SECONDS": ("reconcile_seconds", _int, "scheduled reconcile period (0: off)"),
    "MERGE_HOLD_MIN_REPLICAS": ("min_replicas", _int, "acknowledge a delivery once N replicas have it (WAIT)"),
    "MERGE_HOLD_METRICS_TOKEN": ("metrics_token", _str, "bearer token that /metrics requires"),
    "MERGE_HOLD_WEBHOOK_ALLOW_NETWORKS": ("webhook_allow_networks", _networks,
                                          "CIDRs outgoing webhooks may reach though not public (default: none)"),
    "MERGE_HOLD_DEMO_SIGNIN": ("demo_signin", _bool,
                               "`merge-hold dev` sets it: the pretend-user sign-in of a dry run on loopback"),
}


OTHERS: frozenset[str] = frozenset({
    "MERGE_HOLD_HOOK_REGISTRY",  # the agent hook's install record (`hook.tools.registry`), not the server's
    "MERGE_HOLD_TEST_WITHOUT", "MERGE_HOLD_STORM_RUNS", "MERGE_HOLD_STORM_SEEDS", "MERGE_HOLD_README_SHOT",
})
"""``MERGE_HOLD_*`` variables that other parts read (the hook's tools, the test suite): a server started
with them set, as the tests start one, must not refuse them as unknown settings."""


def from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """Read and validate the settings; `SettingsError` names the first bad variable."""
    env = os.environ if environ is None else environ
    for name in env:
        if name.startswith("MERGE_HOLD_") and name not in FIELDS and name not in OTHERS:
            raise SettingsError(f"{name}: unknown setting (known: {', '.join(sorted(FIELDS))})")
    values: dict[str, Any] = {}
    for name, (attr, parse, _why) in FIELDS.items():
        raw = env.get(name)
        if raw is None or (raw == "" and attr not in ("dry_run",)):
            continue
        values[attr] = parse(name, raw)
    if "GITHUB_PRIVATE_KEY_PATH" in env and "GITHUB_PRIVATE_KEY" not in env:
        path = Path(env["GITHUB_PRIVATE_KEY_PATH"])
        try:
            values["github_private_key"] = path.read_text()
        except OSError as exc:
            raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: cannot read {path}: {exc.strerror}") from None
    key = values.get("github_private_key")
    if key is not None and "PRIVATE KEY" not in key:
        raise SettingsError("GITHUB_PRIVATE_KEY: not a PEM private key")
    if ("github_app_id" in values) != ("github_private_key" in values):
        missing = "GITHUB_PRIVATE_KEY" if "github_app_id" in values else "GITHUB_APP_ID"
        raise SettingsError(f"{missing}: required together with the other App credential")
    if values.get("demo_signin") and "github_app_id" in values:
        # Pretend users acting on real repositories would be impersonation: never with an App.
        raise SettingsError("MERGE_HOLD_DEMO_SIGNIN: the demo sign-in is for a dry run only; "
                            "unset it, or unset GITHUB_APP_ID/GITHUB_PRIVATE_KEY")
    return Settings(**values)


def require(settings: Settings, *names: str) -> None:
    """Fail at start, naming the variable, when a command needs a setting that is not set."""
    for name in names:
        attr = FIELDS[name][0]
        if getattr(settings, attr) in (None, ""):
            raise SettingsError(f"{name}: required by this command but not set")
