"""Sample GitHub webhook deliveries built in code, shaped like GitHub's own examples, and signed.

`merge-hold simulate` and the benchmarks send these to a running server. They are built here rather
than read from `tests/fixtures/` so that an installed copy (no tests folder) can still simulate; the
shapes follow GitHub's documented payloads (octokit/webhooks examples): full user and repository
objects with their API URLs, ``installation``, ``sender``, and the headers GitHub's Hookshot sends.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

API = "https://api.github.com"
WEB = "https://github.com"
DEFAULT_INSTALLATION = 1
USER_AGENT = "GitHub-Hookshot/merge-hold-simulate"


def _id(text: str) -> int:
    """A stable positive id for a name, so repeated runs describe the same user, repo and PR."""
    return zlib.crc32(text.encode()) % 90_000_000 + 1_000_000


def _node(kind: str, number: int) -> str:
    return kind + "_" + base64.b64encode(f"{kind}:{number}".encode()).decode().rstrip("=")


def iso(moment: datetime) -> str:
    """GitHub's timestamp form: ``2019-05-15T15:20:33Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def head_sha(repo: str, number: int, revision: int = 0) -> str:
    """A stable 40-hex head SHA per PR (and revision), so a later unhold lands on the same commit."""
    return hashlib.sha1(f"{repo.lower()}#{number}@{revision}".encode()).hexdigest()


def user(login: str, *, kind: str = "User") -> dict[str, Any]:
    uid = _id(f"user:{login.lower()}")
    url = f"{API}/users/{login}"
    return {
        "login": login, "id": uid, "node_id": _node("U", uid),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "",
        "url": url, "html_url": f"{WEB}/{login}", "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}", "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs", "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}", "received_events_url": f"{url}/received_events",
        "type": kind, "site_admin": False,
    }


def repository(full_name: str, *, default_branch: str = "main", private: bool = False) -> dict[str, Any]:
    owner, name = full_name.split("/", 1)
    rid = _id(f"repo:{full_name.lower()}")
    url = f"{API}/repos/{full_name}"
    templated = {
        "keys_url": "keys{/key_id}", "collaborators_url": "collaborators{/collaborator}",
        "issue_events_url": "issues/events{/number}", "branches_url": "branches{/branch}",
        "blobs_url": "git/blobs{/sha}", "git_tags_url": "git/tags{/sha}", "git_refs_url": "git/refs{/sha}",
        "trees_url": "git/trees{/sha}", "statuses_url": "statuses/{sha}", "commits_url": "commits{/sha}",
        "git_commits_url": "git/commits{/sha}", "comments_url": "comments{/number}",
        "issue_comment_url": "issues/comments{/number}", "contents_url": "contents/{+path}",
        "compare_url": "compare/{base}...{head}", "archive_url": "{archive_format}{/ref}",
        "issues_url": "issues{/number}", "pulls_url": "pulls{/number}", "milestones_url": "milestones{/number}",
        "notifications_url": "notifications{?since,all,participating}", "labels_url": "labels{/name}",
        "releases_url": "releases{/id}",
    }
    plain = ("forks", "teams", "hooks", "events", "assignees", "tags", "languages", "stargazers",
             "contributors", "subscribers", "subscription", "merges", "downloads", "deployments")
    repo: dict[str, Any] = {
        "id": rid, "node_id": _node("R", rid), "name": name, "full_name": full_name, "private": private,
        "owner": user(owner, kind="Organization"), "html_url": f"{WEB}/{full_name}", "description": None,
        "fork": False, "url": url,
    }
    repo.update({f"{word}_url": f"{url}/{word}" for word in plain})
    repo.update({key: f"{url}/{suffix}" for key, suffix in templated.items()})
    repo.update({
        "created_at": "2024-01-02T10:00:00Z", "updated_at": "2024-06-01T09:30:00Z",
        "pushed_at": "2024-06-01T09:30:00Z", "git_url": f"git://github.com/{full_name}.git",
        "ssh_url": f"git@github.com:{full_name}.git", "clone_url": f"{WEB}/{full_name}.git",
        "svn_url": f"{WEB}/{full_name}", "homepage": None, "size": 120, "stargazers_count": 0,
        "watchers_count": 0, "language": "Python", "has_issues": True, "has_projects": True,
        "has_downloads": True, "has_wiki": True, "has_pages": False, "forks_count": 0, "mirror_url": None,
        "archived": False, "disabled": False, "open_issues_count": 1, "license": None, "forks": 0,
        "open_issues": 1, "watchers": 0, "default_branch": default_branch, "is_template": False,
        "topics": [], "visibility": "private" if private else "public",
        "web_commit_signoff_required": False, "custom_properties": {},
    })
    return repo


def installation(installation_id: int = DEFAULT_INSTALLATION) -> dict[str, Any]:
    return {"id": installation_id, "node_id": _node("I", installation_id)}


def pull_request(
    repo: str, number: int, *, author: str, at: datetime, sha: str | None = None, head_ref: str | None = None,
    base: str = "main", title: str | None = None, body: str = "", state: str = "open",
) -> dict[str, Any]:
    """A ``pull_request`` object as webhooks carry it (head and base with their repos)."""
    pid = _id(f"pull:{repo.lower()}#{number}")
    url = f"{API}/repos/{repo}/pulls/{number}"
    issue_url = f"{API}/repos/{repo}/issues/{number}"
    sha = sha or head_sha(repo, number)
    head_ref = head_ref or f"feature/pr-{number}"
    owner = repo.split("/", 1)[0]
    full_repo = repository(repo)
    return {
        "url": url, "id": pid, "node_id": _node("PR", pid), "html_url": f"{WEB}/{repo}/pull/{number}",
        "diff_url": f"{WEB}/{repo}/pull/{number}.diff", "patch_url": f"{WEB}/{repo}/pull/{number}.patch",
        "issue_url": issue_url, "number": number, "state": state, "locked": False,
        "title": title or f"Sample change #{number}", "user": user(author), "body": body,
        "created_at": iso(at), "updated_at": iso(at), "closed_at": None, "merged_at": None,
        "merge_commit_sha": None, "assignee": None, "assignees": [], "requested_reviewers": [],
        "requested_teams": [], "labels": [], "milestone": None, "draft": False,
        "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{API}/repos/{repo}/pulls/comments{{/number}}",
        "comments_url": f"{issue_url}/comments", "statuses_url": f"{API}/repos/{repo}/statuses/{sha}",
        "head": {"label": f"{owner}:{head_ref}", "ref": head_ref, "sha": sha, "user": user(owner),
                 "repo": full_repo},
        "base": {"label": f"{owner}:{base}", "ref": base, "sha": head_sha(repo, 0, revision=1),
                 "user": user(owner), "repo": full_repo},
        "_links": {"self": {"href": url}, "html": {"href": f"{WEB}/{repo}/pull/{number}"},
                   "issue": {"href": issue_url}, "comments": {"href": f"{issue_url}/comments"},
                   "review_comments": {"href": f"{url}/comments"},
                   "review_comment": {"href": f"{API}/repos/{repo}/pulls/comments{{/number}}"},
                   "commits": {"href": f"{url}/commits"},
                   "statuses": {"href": f"{API}/repos/{repo}/statuses/{sha}"}},
        "author_association": "MEMBER", "auto_merge": None, "active_lock_reason": None, "merged": False,
        "mergeable": None, "rebaseable": None, "mergeable_state": "unknown", "merged_by": None,
        "comments": 0, "review_comments": 0, "maintainer_can_modify": False, "commits": 1,
        "additions": 12, "deletions": 3, "changed_files": 2,
    }


def pull_request_event(
    repo: str, number: int, *, action: str = "opened", author: str = "octocat", at: datetime,
    installation_id: int = DEFAULT_INSTALLATION, **fields: Any,
) -> dict[str, Any]:
    """A ``pull_request`` delivery (``opened`` by default): tells the server the PR's head and base."""
    return {
        "action": action, "number": number,
        "pull_request": pull_request(repo, number, author=author, at=at, **fields),
        "repository": repository(repo), "organization": _organization(repo),
        "sender": user(author), "installation": installation(installation_id),
    }


def issue_comment_event(
    repo: str, number: int, *, body: str, commenter: str, at: datetime, comment_id: int,
    association: str = "MEMBER", pr_author: str = "octocat", installation_id: int = DEFAULT_INSTALLATION,
) -> dict[str, Any]:
    """An ``issue_comment`` ``created`` delivery on a PR (the issue carries ``pull_request``).

    ``comment_id`` orders comments made in the same second (GitHub's ids grow with time)."""
    issue_url = f"{API}/repos/{repo}/issues/{number}"
    pr = pull_request(repo, number, author=pr_author, at=at)
    comment = {
        "url": f"{API}/repos/{repo}/issues/comments/{comment_id}",
        "html_url": f"{WEB}/{repo}/pull/{number}#issuecomment-{comment_id}", "issue_url": issue_url,
        "id": comment_id, "node_id": _node("IC", comment_id), "user": user(commenter),
        "created_at": iso(at), "updated_at": iso(at), "author_association": association, "body": body,
        "reactions": _reactions(f"{API}/repos/{repo}/issues/comments/{comment_id}/reactions"),
        "performed_via_github_app": None,
    }
    issue = {
        "url": issue_url, "repository_url": f"{API}/repos/{repo}", "labels_url": f"{issue_url}/labels{{/name}}",
        "comments_url": f"{issue_url}/comments", "events_url": f"{issue_url}/events",
        "html_url": pr["html_url"], "id": pr["id"], "node_id": pr["node_id"], "number": number,
        "title": pr["title"], "user": pr["user"], "labels": [], "state": "open", "locked": False,
        "assignee": None, "assignees": [], "milestone": None, "comments": 1, "created_at": pr["created_at"],
        "updated_at": iso(at), "closed_at": None, "author_association": "MEMBER", "active_lock_reason": None,
        "draft": False, "body": pr["body"], "reactions": _reactions(f"{issue_url}/reactions"),
        "pull_request": {"url": pr["url"], "html_url": pr["html_url"], "diff_url": pr["diff_url"],
                         "patch_url": pr["patch_url"], "merged_at": None},
    }
    return {
        "action": "created", "issue": issue, "comment": comment, "repository": repository(repo),
        "organization": _organization(repo), "sender": user(commenter),
        "installation": installation(installation_id),
    }


def _reactions(url: str) -> dict[str, Any]:
    return {"url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0,
            "rocket": 0, "eyes": 0}


def _organization(repo: str) -> dict[str, Any]:
    login = repo.split("/", 1)[0]
    oid = _id(f"user:{login.lower()}")
    url = f"{API}/orgs/{login}"
    return {"login": login, "id": oid, "node_id": _node("O", oid), "url": url, "repos_url": f"{url}/repos",
            "events_url": f"{url}/events", "hooks_url": f"{url}/hooks", "issues_url": f"{url}/issues",
            "members_url": f"{url}/members{{/member}}", "public_members_url": f"{url}/public_members{{/member}}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{oid}?v=4", "description": ""}


FILLER = ("This change keeps the release train moving: it updates the migration plan, documents the "
          "rollback, and adds a test for the edge case found in review. ")


def fill_to(payload: dict[str, Any], size: int) -> dict[str, Any]:
    """Grow the PR (or comment) body so the encoded payload is about ``size`` bytes — large PR
    descriptions are what make real deliveries big."""
    holder = payload.get("pull_request") or payload.get("comment")
    if not isinstance(holder, dict):
        raise ValueError("fill_to needs a pull_request or issue_comment payload")
    missing = size - len(encode(payload))
    if missing > 0:
        holder["body"] = (holder.get("body") or "") + (FILLER * (missing // len(FILLER) + 1))[:missing]
    return payload


def encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def signature(secret: str, body: bytes) -> str:
    """``X-Hub-Signature-256``: HMAC-SHA256 of the exact body, hex, prefixed ``sha256=``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Delivery:
    event: str
    delivery_id: str
    body: bytes

    def headers(self, secret: str) -> dict[str, str]:
        """The headers GitHub sends with a delivery (GitHub also sends the legacy SHA-1 signature)."""
        return {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-GitHub-Event": self.event,
            "X-GitHub-Delivery": self.delivery_id,
            "X-GitHub-Hook-ID": "1",
            "X-GitHub-Hook-Installation-Target-Type": "integration",
            "X-GitHub-Hook-Installation-Target-ID": "1",
            "X-Hub-Signature": "sha1=" + hmac.new(secret.encode(), self.body, hashlib.sha1).hexdigest(),
            "X-Hub-Signature-256": signature(secret, self.body),
        }


def delivery(event: str, payload: dict[str, Any], delivery_id: str | None = None) -> Delivery:
    """One delivery with a fresh GUID (GitHub's X-GitHub-Delivery) unless one is given (a redelivery)."""
    return Delivery(event, delivery_id or str(uuid.uuid4()), encode(payload))
