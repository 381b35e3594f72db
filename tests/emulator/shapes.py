"""JSON objects in GitHub's documented shapes: users, repositories, installations, the App, labels.

API URLs inside the objects point at the emulator itself (`base`, the scheme://host:port the request
came to), because PyGithub follows them (lazy completion, `Link` pages) and refuses other hosts.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import zlib
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from tests.emulator.identity import APP_ID, BOT_USER_ID, rest_fixture
from tests.emulator.state import Installation, Repo, iso


def node_id(kind: str, number: int) -> str:
    """The legacy global node id format, e.g. MDQ6VXNlcjE= for User 1."""
    return base64.b64encode(f"{len(kind):02d}:{kind}{number}".encode()).decode()


def user_id(login: str) -> int:
    if login.endswith("[bot]"):
        return BOT_USER_ID if login.startswith("merge-hold") else 41_000_000 + zlib.crc32(login.encode()) % 10**6
    return 1000 + zlib.crc32(login.lower().encode()) % 10**7


def fake_sha(*parts: str) -> str:
    """A stable 40-hex SHA for things the emulator does not model (base branch tips, trees)."""
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


def user(base: str, login: str, kind: str | None = None) -> dict[str, Any]:
    number = user_id(login)
    kind = kind or ("Bot" if login.endswith("[bot]") else "User")
    api = f"{base}/users/{quote(login)}"
    html = (f"https://github.com/apps/{login.removesuffix('[bot]')}" if kind == "Bot"
            else f"https://github.com/{login}")
    return {
        "login": login, "id": number, "node_id": node_id(kind, number),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{number}?v=4", "gravatar_id": "",
        "url": api, "html_url": html, "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}", "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs", "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}", "received_events_url": f"{api}/received_events",
        "type": kind, "site_admin": False,
    }


def repository(base: str, repo: Repo, owner_type: str) -> dict[str, Any]:
    return copy.deepcopy(_repository(base, repo.full_name, repo.id, repo.private, repo.default_branch,
                                     owner_type, iso(repo.created_at), fork=False))


def fork(base: str, full_name: str, default_branch: str) -> dict[str, Any]:
    """A head repository the emulator was not told about (a contributor's fork)."""
    number = 500_000_000 + zlib.crc32(full_name.lower().encode()) % 10**8
    return copy.deepcopy(_repository(base, full_name, number, False, default_branch, "User",
                                     "2020-01-01T00:00:00Z", fork=True))


@lru_cache(maxsize=512)
def _repository(base: str, full_name: str, number: int, private: bool, default_branch: str,
                owner_type: str, created_at: str, *, fork: bool) -> dict[str, Any]:
    # The documented example repository (installation-access-token.201.json), with its names and
    # host swapped: every URL field GitHub documents is there, pointing at this repo on this host.
    template = dict(rest_fixture("installation-access-token.201.json")["repositories"][0])
    template.pop("owner")
    text = json.dumps(template).replace("https://api.github.com", base).replace("octocat/Hello-World", full_name)
    obj: dict[str, Any] = json.loads(text)
    owner, name = full_name.split("/", 1)
    obj.update({
        "id": number, "node_id": node_id("Repository", number), "name": name, "full_name": full_name,
        "owner": user(base, owner, owner_type), "private": private,
        "visibility": "private" if private else "public", "fork": fork, "default_branch": default_branch,
        "description": None, "homepage": None, "mirror_url": None, "created_at": created_at,
        "updated_at": created_at, "pushed_at": created_at, "archived": False, "disabled": False,
        "is_template": False, "template_repository": None, "topics": [], "forks_count": 0, "forks": 0,
        "stargazers_count": 0, "watchers_count": 0, "watchers": 0, "open_issues_count": 0,
        "open_issues": 0, "custom_properties": {}, "web_commit_signoff_required": False,
    })
    return obj


def installation(base: str, inst: Installation, slug: str) -> dict[str, Any]:
    account = user(base, inst.account_login, inst.account_type)
    html = (f"https://github.com/organizations/{inst.account_login}/settings/installations/{inst.id}"
            if inst.account_type == "Organization" else f"https://github.com/settings/installations/{inst.id}")
    return {
        "id": inst.id, "account": account, "repository_selection": "selected",
        "access_tokens_url": f"{base}/app/installations/{inst.id}/access_tokens",
        "repositories_url": f"{base}/installation/repositories", "html_url": html, "app_id": APP_ID,
        "client_id": "Iv1.0000000000000000", "target_id": account["id"], "target_type": inst.account_type,
        "permissions": dict(inst.permissions), "events": list(inst.events),
        "created_at": iso(inst.created_at), "updated_at": iso(inst.created_at),
        "single_file_name": None, "has_multiple_single_files": False, "single_file_paths": [],
        "app_slug": slug, "suspended_at": None, "suspended_by": None,
    }


def app(base: str, slug: str, installations_count: int, permissions: dict[str, str] | None = None,
        events: list[str] | None = None) -> dict[str, Any]:
    return {
        "id": APP_ID, "slug": slug, "node_id": node_id("Integration", APP_ID),
        "client_id": "Iv1.0000000000000000", "owner": user(base, "merge-hold-dev", "Organization"),
        "name": slug, "description": "merge-hold test App (emulated)",
        "external_url": "https://example.invalid/merge-hold", "html_url": f"https://github.com/apps/{slug}",
        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
        "permissions": dict(permissions) if permissions is not None else {
            "metadata": "read", "contents": "read", "pull_requests": "read", "issues": "read",
            "statuses": "write"},
        "events": list(events) if events is not None else [
            "issue_comment", "pull_request", "pull_request_review", "push", "status"],
        "installations_count": installations_count,
    }


def label(base: str, full_name: str, name: str) -> dict[str, Any]:
    number = 200_000_000 + zlib.crc32(f"{full_name.lower()}\0{name}".encode()) % 10**8
    return {"id": number, "node_id": node_id("Label", number),
            "url": f"{base}/repos/{full_name}/labels/{quote(name)}", "name": name,
            "color": "ededed", "default": False, "description": None}
