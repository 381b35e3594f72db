"""The workers' window on GitHub: PyGithub with GitHub App auth, or a dry-run stand-in.

Everything the workers ask of GitHub goes through `GitHubGateway`, so the rules (in `core/`) never see
HTTP, and dry-run mode (no App credentials) swaps in `DryRunGateway`, which records the statuses it
would post instead of posting them.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives import serialization
from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
from redis import Redis
from urllib3.exceptions import MaxRetryError

from core import keys
from core.permissions import Permission
from state import store

log = logging.getLogger(__name__)

TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
LOCAL_TOKEN_SECONDS = 300.0
"""How long a worker keeps an installation token in memory before it looks in Redis again."""
"""Installation tokens live an hour; one is reused by every worker until five minutes before it expires,
so an installation costs at most about one mint an hour (design §7)."""

RETRIED_STATUSES = (403, 429, 500, 502, 503, 504)
"""GitHub's rate limits (403 secondary, 429) and server errors; PyGithub's `GithubRetry` waits as
`retry-after` says. Anything left after its attempts fails the job, and rq retries the job later."""


class NotFound(Exception):
    """The PR, file or installation does not exist (or is not visible to the App)."""


class GitHubGateway(Protocol):
    def post_status(self, repo: str, sha: str, payload: dict[str, Any]) -> None: ...
    def get_pull(self, repo: str, number: int) -> dict[str, Any]: ...
    def list_open_pulls(self, repo: str) -> Iterator[dict[str, Any]]: ...
    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None: ...
    def permission(self, repo: str, login: str) -> Permission: ...
    def installation_for(self, repo: str) -> int: ...
    def installation_repos(self, installation_id: int) -> list[dict[str, Any]]: ...
    def list_comments(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    def pull_files(self, repo: str, number: int, limit: int) -> list[dict[str, Any]]: ...
    def app_slug(self) -> str | None: ...
    def failed_deliveries(self, since: datetime) -> list[dict[str, Any]]: ...
    def redeliver(self, delivery_id: int) -> None: ...
    def react(self, repo: str, comment_id: int, content: str) -> None: ...
    def reply(self, repo: str, number: int, body: str) -> None: ...
    def get_issue(self, repo: str, number: int) -> dict[str, Any]: ...
    def branch_head(self, repo: str, branch: str) -> str | None: ...
    def get_answer(self, repo: str, path: str, params: dict[str, Any] | None = None) -> tuple[int, Any]: ...
    def send(self, repo: str, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]: ...
    def review_deployment(self, repo: str, run_id: int, body: dict[str, Any]) -> bool: ...


class _Retry(GithubRetry):
    """PyGithub's retry, except that when its attempts run out on a rate limit the error keeps GitHub's
    last ``Retry-After`` (``MaxRetryError.retry_after``): requests' ``RetryError`` drops the response,
    and without it the writers would pause a whole default minute where GitHub asked for a second."""

    def increment(self, method: Any = None, url: Any = None, response: Any = None, error: Any = None,
                  _pool: Any = None, _stacktrace: Any = None) -> Any:
        try:
            return super().increment(method, url, response, error, _pool, _stacktrace)
        except MaxRetryError as exc:
            if response is not None and response.status in (403, 429):
                exc.retry_after = response.headers.get("Retry-After")  # type: ignore[attr-defined]
            raise


def _retry() -> GithubRetry:
    return _Retry(
        total=3,
        backoff_factor=0.5,
        status_forcelist=list(RETRIED_STATUSES),  # GithubRetry appends 403 with `+ [403]`
        secondary_rate_wait=5,
        max_rate_limit_wait=120,
    )


class AppGateway:
    """GitHub App auth with PyJWT (through PyGithub's `AppAuth`); installation tokens cached in Redis."""

    def __init__(self, *, api_url: str, app_id: int, private_key: str, redis: Redis) -> None:
        self.api_url = api_url
        self.redis = redis
        # The PEM is parsed once: PyJWT would otherwise load and validate the RSA key (~40 ms) for
        # every JWT, and the workers sign one per token mint and per App-level call.
        key = serialization.load_pem_private_key(private_key.encode(), password=None)
        self._app_auth = Auth.AppAuth(
            app_id, sign_func=lambda payload: jwt.encode(payload, key=key, algorithm="RS256"))  # type: ignore[arg-type]
        self._integration = GithubIntegration(
            base_url=api_url, auth=self._app_auth, retry=_retry(),
            seconds_between_requests=None, seconds_between_writes=None,
        )
        self._installation_by_repo: dict[str, int] = {}
        self._clients: dict[str, tuple[str, Github]] = {}
        self._tokens: dict[int, tuple[str, float]] = {}

    # --- auth ------------------------------------------------------------------------------------

    def _token(self, installation_id: int) -> str:
        # Held in this process too, until its Redis copy would lapse (at most LOCAL_TOKEN_SECONDS): a
        # Redis round trip per GitHub call was a tenth of a delivery's cost at 50 deliveries/s.
        held = self._tokens.get(installation_id)
        if held is not None and time.monotonic() < held[1]:
            return held[0]
        key = keys.installation_token(installation_id)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(key)
            pipe.pttl(key)
            cached, ttl_ms = pipe.execute()
        if cached:
            token: str = json.loads(cached)["token"]
            self._hold_token(installation_id, token, int(ttl_ms) / 1000)
            return token
        # One mint per installation, whichever worker gets here first; the others wait and reuse it.
        mint = keys.installation_token_mint(installation_id)
        with self.redis.lock(mint, timeout=30, blocking_timeout=30, sleep=0.02):
            cached = self.redis.get(key)
            if cached:
                token = json.loads(cached)["token"]
                return token
            return self._mint(installation_id, key)

    def _mint(self, installation_id: int, key: str) -> str:
        auth = self._integration.get_access_token(installation_id)
        expires = auth.expires_at or datetime.now(UTC) + timedelta(hours=1)
        ttl = int((expires - datetime.now(UTC) - TOKEN_REFRESH_MARGIN).total_seconds())
        if ttl > 0:
            # With what the installation accepted (GitHub says it with the token): the check runs read it.
            self.redis.set(key, json.dumps({"token": auth.token, "permissions": auth.permissions}), ex=ttl)
            self._hold_token(installation_id, auth.token, ttl)
        return auth.token

    def _hold_token(self, installation_id: int, token: str, seconds: float) -> None:
        if seconds > 0:
            self._tokens[installation_id] = (token, time.monotonic() + min(seconds, LOCAL_TOKEN_SECONDS))

    def _client(self, repo: str) -> Github:
        token = self._token(self.installation_for(repo))
        held = self._clients.get(repo)
        if held is not None and held[0] == token:
            return held[1]
        # PyGithub's own pauses between requests (0.25 s) and writes (1 s) would cap a worker at one
        # status a second; fan-outs pace writes themselves (workers/publishing/pacing.py), so they are off here.
        client = Github(
            base_url=self.api_url, auth=Auth.Token(token), lazy=True, retry=_retry(), per_page=100,
            seconds_between_requests=None, seconds_between_writes=None, timeout=15,
        )
        self._clients[repo] = (token, client)
        return client

    def _request(self, repo: str, method: str, path: str, **kwargs: Any) -> Any:
        requester = self._client(repo).requester
        try:
            _headers, data = requester.requestJsonAndCheck(method, path, **kwargs)
        except GithubException as exc:
            if exc.status == 404:
                raise NotFound(path) from exc
            raise
        return data

    def _paginate(self, repo: str, path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Follow GitHub's `Link: rel="next"` headers, 100 per page."""
        requester = self._client(repo).requester
        url: str | None = path
        query: dict[str, Any] | None = {**params, "per_page": 100}
        while url:
            try:
                headers, data = requester.requestJsonAndCheck("GET", url, parameters=query)
            except GithubException as exc:
                if exc.status == 404:
                    raise NotFound(path) from exc
                raise
            items = data["repositories"] if isinstance(data, dict) and "repositories" in data else data
            yield from items
            url, query = _next_link(headers.get("link", "")), None

    # --- the gateway ---------------------------------------------------------------------------

    def installation_for(self, repo: str) -> int:
        found = self._installation_by_repo.get(repo.lower())
        if found is None:
            meta = store.load_repo(self.redis, repo)
            if meta is not None and meta.installation_id:
                found = int(meta.installation_id)
        if found is None:
            owner, name = repo.split("/", 1)
            try:
                found = int(self._integration.get_repo_installation(owner, name).id)
            except GithubException as exc:
                if exc.status == 404:
                    raise NotFound(f"no installation for {repo}") from exc
                raise
            self._installation_by_repo[repo.lower()] = found
        return found

    def remember_installation(self, repo: str, installation_id: int) -> None:
        self._installation_by_repo[repo.lower()] = installation_id

    def post_status(self, repo: str, sha: str, payload: dict[str, Any]) -> None:
        commit = self._client(repo).get_repo(repo).get_commit(sha)
        commit.create_status(**payload)

    def get_pull(self, repo: str, number: int) -> dict[str, Any]:
        data: dict[str, Any] = self._request(repo, "GET", f"/repos/{repo}/pulls/{number}")
        return data

    def list_open_pulls(self, repo: str) -> Iterator[dict[str, Any]]:
        return self._paginate(repo, f"/repos/{repo}/pulls", {"state": "open"})

    def get_file(self, repo: str, path: str, ref: str | None = None) -> str | None:
        params = {"ref": ref} if ref else None
        try:
            data = self._request(repo, "GET", f"/repos/{repo}/contents/{path}", parameters=params)
        except NotFound:
            return None
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        import base64

        return base64.b64decode(data.get("content", "")).decode("utf-8", errors="replace")

    def branch_head(self, repo: str, branch: str) -> str | None:
        """The branch's head commit (`GET /repos/{o}/{r}/branches/{b}`, Contents: read); NotFound when
        the branch does not exist."""
        data = self._request(repo, "GET", f"/repos/{repo}/branches/{branch}")
        sha = (data.get("commit") or {}).get("sha") if isinstance(data, dict) else None
        if not isinstance(sha, str) or not sha:
            raise NotFound(f"/repos/{repo}/branches/{branch}: no head commit")
        return sha

    def permission(self, repo: str, login: str) -> Permission:
        try:
            data = self._request(repo, "GET", f"/repos/{repo}/collaborators/{login}/permission")
        except NotFound:
            return Permission.NONE
        return Permission.parse(data.get("role_name") or data.get("permission"))

    def installation_repos(self, installation_id: int) -> list[dict[str, Any]]:
        token = self._token(installation_id)
        client = Github(base_url=self.api_url, auth=Auth.Token(token), lazy=True, retry=_retry(),
                        per_page=100, seconds_between_requests=None, seconds_between_writes=None)
        repos: list[dict[str, Any]] = []
        url: str | None = "/installation/repositories"
        query: dict[str, Any] | None = {"per_page": 100}
        while url:
            headers, data = client.requester.requestJsonAndCheck("GET", url, parameters=query)
            repos += data.get("repositories", [])
            url, query = _next_link(headers.get("link", "")), None
        for item in repos:
            self.remember_installation(item["full_name"], installation_id)
        return repos

    def list_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        try:
            return list(self._paginate(repo, f"/repos/{repo}/issues/{number}/comments", {}))
        except NotFound:
            return []

    def list_reviews(self, repo: str, number: int) -> list[dict[str, Any]]:
        try:
            return list(self._paginate(repo, f"/repos/{repo}/pulls/{number}/reviews", {}))
        except NotFound:
            return []

    def pull_files(self, repo: str, number: int, limit: int) -> list[dict[str, Any]]:
        """The files the PR's head changes (`GET /pulls/{n}/files`, 100 a page), at most ``limit``: GitHub
        lists no more than 3,000, so a caller reads a list that long as possibly cut. NotFound when the PR
        (or the App's access to it) is gone; GitHub's other refusals raise."""
        found: list[dict[str, Any]] = []
        for entry in self._paginate(repo, f"/repos/{repo}/pulls/{number}/files", {}):
            found.append(entry)
            if len(found) >= limit:
                break
        return found

    def app_slug(self) -> str | None:
        slug: str | None = self._integration.get_app().slug
        return slug

    def fetch_app_slug(self, timeout: float) -> str | None:
        """`GET /app` on a client of its own (safe from another thread), without retries: the start-up
        slug check must not hang on a slow GitHub."""
        client = Github(base_url=self.api_url, auth=self._app_auth, retry=None, timeout=max(1, int(timeout)),
                        seconds_between_requests=None, seconds_between_writes=None)
        _headers, data = client.requester.requestJsonAndCheck("GET", "/app")
        slug = data.get("slug") if isinstance(data, dict) else None
        return str(slug) if slug else None

    def _app_client(self) -> Github:
        # App-level endpoints (JWT): PyGithub signs with PyJWT through `AppAuth`.
        return Github(base_url=self.api_url, auth=self._app_auth, retry=_retry(), per_page=100,
                      seconds_between_requests=None, seconds_between_writes=None)

    def failed_deliveries(self, since: datetime) -> list[dict[str, Any]]:
        """Deliveries since ``since`` whose every attempt failed (GitHub keeps them three days)."""
        requester = self._app_client().requester
        url: str | None = "/app/hook/deliveries"
        query: dict[str, Any] | None = {"per_page": 100}
        outcome: dict[str, list[dict[str, Any]]] = {}
        while url:
            headers, data = requester.requestJsonAndCheck("GET", url, parameters=query)
            for item in data:
                delivered = datetime.fromisoformat(str(item["delivered_at"]).replace("Z", "+00:00"))
                if delivered < since:
                    url = None
                    break
                outcome.setdefault(str(item["guid"]), []).append(item)
            else:
                url, query = _next_link(headers.get("link", "")), None
        return [
            max(attempts, key=lambda a: str(a["delivered_at"]))
            for attempts in outcome.values()
            if not any(200 <= int(a.get("status_code") or 0) < 300 for a in attempts)
        ]

    def redeliver(self, delivery_id: int) -> None:
        self._app_client().requester.requestJsonAndCheck("POST", f"/app/hook/deliveries/{delivery_id}/attempts")

    # --- answers on the PR (workers/events/feedback.py); both need Issues: write ------------------------

    def react(self, repo: str, comment_id: int, content: str) -> None:
        self._request(repo, "POST", f"/repos/{repo}/issues/comments/{comment_id}/reactions",
                      input={"content": content})

    def reply(self, repo: str, number: int, body: str) -> None:
        self._request(repo, "POST", f"/repos/{repo}/issues/{number}/comments", input={"body": body})

    def get_issue(self, repo: str, number: int) -> dict[str, Any]:
        """An issue or a PR (as GitHub's issues API shows PRs: with `pull_request.merged_at`)."""
        data: dict[str, Any] = self._request(repo, "GET", f"/repos/{repo}/issues/{number}")
        return data

    def get_answer(self, repo: str, path: str, params: dict[str, Any] | None = None) -> tuple[int, Any]:
        """(status, parsed body) of one GET whose refusal is a finding, not an error (the tamper watch's
        reads, `core.gate`): 401/403/404/410/422 come back as answers; GitHub down still raises."""
        requester = self._client(repo).requester
        try:
            _headers, data = requester.requestJsonAndCheck("GET", path, parameters=params)
        except GithubException as exc:
            if exc.status in REFUSALS:
                return exc.status, exc.data
            raise
        return 200, data

    def send(self, repo: str, method: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """(status, parsed body) of one write whose refusal the caller decides on (a ruleset write: a
        missing permission means "fall back", a stale id "create it"). A rate limit still raises, for
        the pacer to pause on, and so does GitHub being down."""
        requester = self._client(repo).requester
        try:
            _headers, data = requester.requestJsonAndCheck(method, path, input=body)
        except GithubException as exc:
            limited = "retry-after" in {str(k).lower() for k in (exc.headers or {})} or \
                "rate limit" in str((exc.data or {}).get("message", "") if isinstance(exc.data, dict) else "").lower()
            if exc.status in REFUSALS and not limited:
                return exc.status, exc.data
            raise
        return 200, data


    def review_deployment(self, repo: str, run_id: int, body: dict[str, Any]) -> bool:
        """Answer a deployment protection request (Deployments: write): ``state`` approves or rejects, no
        ``state`` posts a status report. False when nothing is pending to answer (reviewed already, run
        gone): GitHub's 422/404, which a second answer after a lost acknowledgement gets."""
        try:
            self._request(repo, "POST", f"/repos/{repo}/actions/runs/{run_id}/deployment_protection_rule",
                          input=body)
        except NotFound:
            return False
        except GithubException as exc:
            if exc.status == 422:
                return False
            raise
        return True


REFUSALS = (401, 403, 404, 410, 422)


def _next_link(link_header: str) -> str | None:
    for part in link_header.split(","):
        section = part.split(";")
        if len(section) >= 2 and 'rel="next"' in section[1]:
            return section[0].strip().strip("<>")
    return None
