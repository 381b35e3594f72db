"""The GitHub half of `merge-hold doctor`: the App, its installations and each repo's gate.

Plain HTTP (urllib) rather than PyGithub: the doctor needs status codes and the `Date` header of every
answer, and reads with the least permission — a branch's `protection` from `GET …/branches/{b}`
(Contents: read) and its rules from `GET …/rules/branches/{b}` (Metadata: read), never the classic
protection endpoint, which needs Administration access.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import jwt

from core import readiness
from core.freeze_gate import PATHS_NOTE, RULESET_NAME
from core.gate import read_gate
from foundation.settings import Settings
from merge_hold.doctor_deploys import deploy_checks

MAX_SKEW = 30
"""Seconds of clock difference tolerated. JWTs are backdated 60 s; past half that, a drifting clock
soon gets "'Issued at' claim must be …" refusals, so it is flagged early."""
TIMEOUT = 15


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def message(self) -> str:
        return str(self.body.get("message", "")) if isinstance(self.body, dict) else ""


class Api:
    """A few GitHub REST reads, each returning the status, parsed body and headers (never raising on
    an HTTP error: a refusal is a finding)."""

    def __init__(self, base: str, *, opener: Callable[..., Any] = urllib.request.urlopen) -> None:
        self.base = base.rstrip("/")
        self._open = opener

    def call(self, method: str, path: str, auth: str, body: Any = None) -> Answer:
        url = path if path.startswith("http") else f"{self.base}{path}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
            "Authorization": f"Bearer {auth}", "User-Agent": "merge-hold-doctor",
            **({"Content-Type": "application/json"} if data else {})})
        try:
            with self._open(request, timeout=TIMEOUT) as response:
                raw, status, headers = response.read(), response.status, dict(response.headers)
        except urllib.error.HTTPError as exc:
            raw, status, headers = exc.read(), exc.code, dict(exc.headers or {})
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return Answer(status, parsed, {k.lower(): v for k, v in headers.items()})

    def pages(self, path: str, auth: str, key: str | None = None) -> Iterator[Answer]:
        """Every page of a list, following `Link: rel="next"`; stops at the first non-200."""
        url: str | None = f"{path}{'&' if '?' in path else '?'}per_page=100"
        while url:
            answer = self.call("GET", url, auth)
            yield answer
            if answer.status != 200:
                return
            url = _next(answer.headers.get("link", ""))


def _next(link: str) -> str | None:
    for part in link.split(","):
        pieces = part.split(";")
        if len(pieces) >= 2 and 'rel="next"' in pieces[1]:
            return pieces[0].strip().strip("<>")
    return None


def app_jwt(settings: Settings, now: float) -> str:
    assert settings.github_app_id is not None and settings.github_private_key is not None
    claims = {"iat": int(now) - 60, "exp": int(now) + 540, "iss": str(settings.github_app_id)}
    return jwt.encode(claims, settings.github_private_key, algorithm="RS256")


def skew_seconds(answer: Answer, now: float) -> float | None:
    """GitHub's clock (the `Date` header) minus ours; None when the answer has no usable date."""
    raw = answer.headers.get("date")
    if not raw:
        return None
    try:
        return parsedate_to_datetime(raw).timestamp() - now
    except (TypeError, ValueError):
        return None


def github_checks(settings: Settings, api: Api, clock: Callable[[], float] = time.time,
                  known_repo: Callable[[str], bool] | None = None) -> list[Check]:
    """Every GitHub-side check, in order. `known_repo` says whether merge-hold tracks a repo (Redis);
    None skips that comparison (Redis unreachable)."""
    checks: list[Check] = []
    if not settings.has_app_credentials and settings.dry_run:
        # `merge-hold dev` without an App: nothing is posted, so there is nothing on GitHub to check.
        return [Check("app credentials", True, "none: a dry run (MERGE_HOLD_DRY_RUN), statuses are recorded, not "
                      "posted; the GitHub checks run once GITHUB_APP_ID and GITHUB_PRIVATE_KEY are set")]
    if not settings.has_app_credentials:
        return [Check("app credentials", False, "GITHUB_APP_ID and GITHUB_PRIVATE_KEY are not set "
                      "(dry run: statuses are recorded, not posted)",
                      "register the App (`merge-hold serve` then open /setup) and set both variables")]
    assert settings.github_app_id is not None
    before = clock()
    token = app_jwt(settings, before)
    app = api.call("GET", "/app", token)
    skew = skew_seconds(app, (before + clock()) / 2)
    if skew is None:
        checks.append(Check("clock", False, "GitHub's answer carried no Date header to compare clocks with",
                            "check GITHUB_API_URL points at GitHub's REST API"))
    elif abs(skew) > MAX_SKEW:
        checks.append(Check("clock", False, f"this clock is {-skew:+.0f} s off GitHub's; App JWTs will be refused",
                            "synchronise the clock (NTP)"))
    else:
        checks.append(Check("clock", True, f"within {abs(skew):.0f} s of GitHub's"))
    if app.status != 200 or not isinstance(app.body, dict):
        checks.append(Check("app credentials", False,
                            f"GET /app answered {app.status}: {app.message or app.body!r}",
                            "check GITHUB_APP_ID and the private key (download a new one from the App's "
                            "settings page if it was rotated)"))
        return checks
    checks.append(Check("app credentials", True, f"App {app.body.get('id')} ({app.body.get('slug')}) "
                                                 "accepts our JWT"))
    slug = str(app.body.get("slug", ""))
    if settings.app_slug == slug:
        checks.append(Check("app slug", True, f"MERGE_HOLD_APP_SLUG={slug}"))
    else:
        now_set = f"is {settings.app_slug!r}" if settings.app_slug else "is not set"
        checks.append(Check("app slug", False, f"MERGE_HOLD_APP_SLUG {now_set}; GitHub says {slug!r} "
                            "(our own events are told apart by it)", f"set MERGE_HOLD_APP_SLUG={slug}"))
    checks.append(Check("webhook secret", True, "GITHUB_WEBHOOK_SECRET is set") if settings.github_webhook_secret
                  else Check("webhook secret", False, "GITHUB_WEBHOOK_SECRET is not set: every delivery is refused",
                             "set it to the App's webhook secret"))
    checks += _app_settings(app.body, settings.freeze_mode)
    checks += _installations(settings, api, token, app.body, known_repo)
    return checks


def _app_settings(app: dict[str, Any], freeze_mode: str) -> list[Check]:
    lacking = readiness.missing_permissions(app.get("permissions") or {}, freeze_mode)
    events = readiness.missing_events(app.get("events") or [])
    return [
        Check("app permissions", not lacking, "missing " + ", ".join(lacking) if lacking else
              "cover every feature", "add them in the App's settings (Permissions & events); each "
              "installation then accepts them" if lacking else ""),
        Check("app events", not events, "not subscribed to " + ", ".join(events) if events else
              "cover design §4", "subscribe to them in the App's settings" if events else ""),
    ]


def _installations(settings: Settings, api: Api, token: str, app: dict[str, Any],
                   known_repo: Callable[[str], bool] | None) -> list[Check]:
    listed: list[dict[str, Any]] = []
    for page in api.pages("/app/installations", token):
        if page.status != 200:
            return [Check("installations", False, f"GET /app/installations answered {page.status}",
                          "check the App's credentials")]
        listed += page.body or []
    if not listed:
        return [Check("installations", False, "the App is installed nowhere",
                      f"install it: {app.get('html_url', 'the App page')}/installations/new")]
    checks = [Check("installations", True, f"{len(listed)}: " + ", ".join(
        str((i.get("account") or {}).get("login")) for i in listed))]
    for inst in listed:
        checks += _installation(settings, api, token, inst, app, known_repo)
    return checks


def _installation(settings: Settings, api: Api, token: str, inst: dict[str, Any], app: dict[str, Any],
                  known_repo: Callable[[str], bool] | None) -> list[Check]:
    account = str((inst.get("account") or {}).get("login"))
    checks: list[Check] = []
    accepted = inst.get("permissions") or {}
    if readiness.missing_permissions(accepted, settings.freeze_mode) and not readiness.missing_permissions(
            app.get("permissions") or {}, settings.freeze_mode):
        checks.append(Check(f"{account}: permissions", False, "the installation has not accepted the App's "
                            "current permissions", f"accept them at {inst.get('html_url')}"))
    minted = api.call("POST", f"/app/installations/{inst['id']}/access_tokens", token)
    if minted.status != 201:
        return [*checks, Check(f"{account}: token", False, f"minting a token answered {minted.status}",
                               "check the installation is not suspended")]
    access = str(minted.body["token"])
    repos: list[dict[str, Any]] = []
    for page in api.pages("/installation/repositories", access):
        if page.status != 200:
            return [*checks, Check(f"{account}: repositories", False, f"listing answered {page.status}", "")]
        repos += (page.body or {}).get("repositories") or []
    if not repos:
        checks.append(Check(f"{account}: repositories", False, "no repository selected",
                            f"select repositories at {inst.get('html_url')}"))
    if settings.freeze_mode == "ruleset" and (inst.get("account") or {}).get("type") == "Organization":
        checks.append(org_ruleset_check(api, access, account))
    for repo in repos:
        checks += repo_checks(api, access, repo, settings, app, known_repo)
    return checks


def org_ruleset_check(api: Api, access: str, org: str) -> Check:
    """In ruleset freeze mode: whether an org freeze can be one organisation ruleset (Organization
    administration, a plan with org rulesets), or goes to each repository's own."""
    answer = api.call("GET", f"/orgs/{quote(org)}/rulesets", access)
    if answer.status != 200 or not isinstance(answer.body, list):
        return Check(f"{org}: freeze mode", True, f"per-repo rulesets: org rulesets unavailable (GitHub answered "
                     f"{answer.status}: no Organization administration, or a plan without org rulesets); an org "
                     "freeze writes one ruleset per repository",
                     "grant Organization administration: read & write (GitHub Enterprise Cloud) for one write "
                     "per org freeze")
    ours = [r for r in answer.body if r.get("name") == RULESET_NAME]
    state = f"'{RULESET_NAME}' {ours[0].get('enforcement')} (id {ours[0].get('id')})" if ours else \
        f"'{RULESET_NAME}' not created yet: the first org freeze creates it"
    return Check(f"{org}: freeze mode", True, f"org ruleset: {state}; an org freeze is one write each way")


def repo_checks(api: Api, access: str, repo: dict[str, Any], settings: Settings, app: dict[str, Any],
                known_repo: Callable[[str], bool] | None) -> list[Check]:
    """One repo: tracked by merge-hold, its default branch requires our status, merge queue answered."""
    name, branch = str(repo["full_name"]), str(repo.get("default_branch") or "main")
    assert settings.github_app_id is not None
    checks: list[Check] = []
    if known_repo is not None and not known_repo(name):
        checks.append(Check(f"{name}: tracked", False, "merge-hold has no state for this repo yet",
                            f"run `merge-hold reconcile --repo {name} --rebuild`"))
    path = f"/repos/{name}"
    found_branch = api.call("GET", f"{path}/branches/{quote(branch, safe='')}", access)
    rules_answer = api.call("GET", f"{path}/rules/branches/{quote(branch, safe='')}?per_page=100", access)
    # The one reading of these answers, shared with the tamper watch (`core.gate`).
    reading = read_gate(branch, (found_branch.status, found_branch.body), (rules_answer.status, rules_answer.body),
                        settings.github_app_id)
    # A refusal leaves the finding built from what could be read, and says what would show the rest.
    checks.append(Check(f"{name}: gate", reading.finding.ok, reading.detail, reading.finding.fix))
    if reading.merge_queue:
        subscribed = "merge_group" in (app.get("events") or [])
        checks.append(Check(f"{name}: merge queue", subscribed,
                            "merge queue on; merge_group events " + ("answered" if subscribed else "not subscribed"),
                            "" if subscribed else "subscribe the App to merge_group (Merge queues: read)"))
    checks += [Check(*found) for found in deploy_checks(api, access, name, branch, settings.github_app_id)]
    checks += freeze_ruleset_checks(api, access, name, settings.freeze_mode)
    return checks


def freeze_ruleset_checks(api: Api, access: str, name: str, freeze_mode: str) -> list[Check]:
    """In ruleset freeze mode: merge-hold's own ruleset, and whether it can be written."""
    if freeze_mode != "ruleset":
        return []
    answer = api.call("GET", f"/repos/{name}/rulesets?includes_parents=false", access)
    if answer.status != 200 or not isinstance(answer.body, list):
        return [Check(f"{name}: freeze ruleset", False, f"rulesets cannot be read ({answer.status}): freezes of "
                      "this repo fall back to statuses (one write per PR, paced)",
                      "grant the App Administration: read & write")]
    ours = [r for r in answer.body if r.get("name") == RULESET_NAME]
    if not ours:
        return [Check(f"{name}: freeze ruleset", True, f"'{RULESET_NAME}' not created yet: the first freeze "
                      f"creates it; {PATHS_NOTE}")]
    return [Check(f"{name}: freeze ruleset", True, f"'{RULESET_NAME}' {ours[0].get('enforcement')} "
                  f"(id {ours[0].get('id')}); {PATHS_NOTE}")]
