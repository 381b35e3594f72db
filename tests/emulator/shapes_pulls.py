"""Pull requests, issue comments and reviews in GitHub's documented REST shapes."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from tests.emulator.shapes import fake_sha, fork, label, node_id, repository, user
from tests.emulator.state import Comment, Pull, Review, iso
from tests.emulator.world import World

FULL_ONLY = {"merged": False, "mergeable": True, "rebaseable": True, "mergeable_state": "clean",
             "merged_by": None, "comments": 0, "review_comments": 0, "maintainer_can_modify": False,
             "commits": 1, "additions": 1, "deletions": 0, "changed_files": 1}
"""Keys only GET /pulls/{n} carries (the list gives "Pull Request Simple")."""


def _owner_type(world: World, login: str) -> str:
    for inst in world.installations.values():
        if inst.account_login.lower() == login.lower():
            return inst.account_type
    return "User"


def repo_object(world: World, base: str, full_name: str) -> dict[str, Any]:
    found = world.require_repo(full_name)
    return repository(base, found, _owner_type(world, found.owner))


def pull(world: World, base: str, pr: Pull, *, full: bool) -> dict[str, Any]:
    repo = world.require_repo(pr.repo)
    api = f"{base}/repos/{repo.full_name}"
    html = f"https://github.com/{repo.full_name}/pull/{pr.number}"
    base_repo = repo_object(world, base, repo.full_name)
    if pr.head_repo is None or pr.head_repo.lower() == repo.full_name.lower():
        head_repo = base_repo
    elif world.repo(pr.head_repo) is not None:
        head_repo = repo_object(world, base, pr.head_repo)
    else:
        head_repo = fork(base, pr.head_repo, repo.default_branch)
    head_owner = head_repo["owner"]["login"]
    obj: dict[str, Any] = {
        "url": f"{api}/pulls/{pr.number}", "id": pr.id, "node_id": node_id("PullRequest", pr.id),
        "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{pr.number}", "number": pr.number,
        "state": pr.state, "locked": False, "title": pr.title, "user": user(base, pr.user), "body": pr.body,
        "created_at": iso(pr.created_at), "updated_at": iso(pr.updated_at),
        "closed_at": iso(pr.closed_at) if pr.closed_at is not None else None,
        "merged_at": iso(pr.merged_at) if pr.merged_at is not None else None,
        "merge_commit_sha": fake_sha(repo.full_name, "merge", str(pr.number), pr.head_sha),
        "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
        "labels": [label(base, repo.full_name, name) for name in pr.labels], "milestone": None,
        "commits_url": f"{api}/pulls/{pr.number}/commits",
        "review_comments_url": f"{api}/pulls/{pr.number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{pr.number}/comments",
        "statuses_url": f"{api}/statuses/{pr.head_sha}",
        "head": {"label": f"{head_owner}:{pr.head_ref}", "ref": pr.head_ref, "sha": pr.head_sha,
                 "user": head_repo["owner"], "repo": head_repo},
        "base": {"label": f"{repo.owner}:{pr.base}", "ref": pr.base, "sha": fake_sha(repo.full_name, pr.base),
                 "user": base_repo["owner"], "repo": base_repo},
        "_links": {
            "self": {"href": f"{api}/pulls/{pr.number}"}, "html": {"href": html},
            "issue": {"href": f"{api}/issues/{pr.number}"},
            "comments": {"href": f"{api}/issues/{pr.number}/comments"},
            "review_comments": {"href": f"{api}/pulls/{pr.number}/comments"},
            "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{api}/pulls/{pr.number}/commits"},
            "statuses": {"href": f"{api}/statuses/{pr.head_sha}"},
        },
        "author_association": world.association(repo, pr.user), "auto_merge": None,
        "active_lock_reason": None, "draft": pr.draft,
    }
    if full:
        comments = sum(1 for c in world.comments if c.repo == pr.repo and c.number == pr.number)
        files = world.pull_files.get((repo.full_name.lower(), pr.head_sha))
        obj.update(FULL_ONLY, merged=pr.merged_at is not None, comments=comments,
                   changed_files=len(files) if files is not None else FULL_ONLY["changed_files"],
                   mergeable_state="draft" if pr.draft else "clean",
                   merged_by=user(base, pr.merged_by) if pr.merged_by and pr.merged_at is not None else None)
    return obj


def diff_entry(base: str, repo: str, head_sha: str, entry: dict[str, Any]) -> dict[str, Any]:
    """One "Diff Entry" of `GET /pulls/{n}/files` (GitHub's documented example, per file)."""
    name = str(entry["filename"])
    status = str(entry.get("status") or ("renamed" if entry.get("previous_filename") else "modified"))
    additions, deletions = int(entry.get("additions", 1)), int(entry.get("deletions", 0 if status == "added" else 1))
    path = quote(name)
    out: dict[str, Any] = {
        "sha": fake_sha(repo, "blob", head_sha, name), "filename": name, "status": status,
        "additions": additions, "deletions": deletions, "changes": additions + deletions,
        "blob_url": f"https://github.com/{repo}/blob/{head_sha}/{path}",
        "raw_url": f"https://github.com/{repo}/raw/{head_sha}/{path}",
        "contents_url": f"{base}/repos/{repo}/contents/{path}?ref={head_sha}",
        "patch": f"@@ -1,{deletions} +1,{additions} @@",
    }
    if entry.get("previous_filename"):
        out["previous_filename"] = str(entry["previous_filename"])
    return out


def comment(base: str, c: Comment) -> dict[str, Any]:
    api = f"{base}/repos/{c.repo}"
    return {
        "url": f"{api}/issues/comments/{c.id}",
        "html_url": f"https://github.com/{c.repo}/pull/{c.number}#issuecomment-{c.id}",
        "issue_url": f"{api}/issues/{c.number}", "id": c.id, "node_id": node_id("IssueComment", c.id),
        "user": user(base, c.user), "created_at": iso(c.created_at), "updated_at": iso(c.updated_at),
        "author_association": c.author_association, "body": c.body, "performed_via_github_app": None,
        "reactions": {"url": f"{api}/issues/comments/{c.id}/reactions", "total_count": 0, "+1": 0, "-1": 0,
                      "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0},
    }


def review(base: str, r: Review) -> dict[str, Any]:
    html = f"https://github.com/{r.repo}/pull/{r.number}#pullrequestreview-{r.id}"
    pull_url = f"{base}/repos/{r.repo}/pulls/{r.number}"
    return {
        "id": r.id, "node_id": node_id("PullRequestReview", r.id), "user": user(base, r.user),
        "body": r.body, "state": r.state, "html_url": html, "pull_request_url": pull_url,
        "author_association": r.author_association,
        "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
        "submitted_at": iso(r.submitted_at), "commit_id": r.commit_id,
    }
