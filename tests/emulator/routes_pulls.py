"""Pull requests, their comments, reviews and labels, and single commits."""

from __future__ import annotations

import re
from datetime import datetime

from tests.emulator import shapes, shapes_pulls
from tests.emulator.state import Pull, iso
from tests.emulator.wire import Request, Response, Route, error, not_found, paginate, route
from tests.emulator.world import World

DOCS_PULLS = "https://docs.github.com/rest/pulls/pulls#list-pull-requests"
DOCS_COMMIT = "https://docs.github.com/rest/commits/commits#get-a-commit"
DOCS_FILES = "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files"
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


def full_name(req: Request) -> str:
    return f"{req.params['owner']}/{req.params['repo']}"


def resolve_ref(world: World, repo: str, ref: str) -> str | None:
    """The SHA a ref names: a SHA the emulator knows, an open pull's head branch, or any hex SHA."""
    if (repo.lower(), ref) in world.known_shas:
        return ref
    for pr in world.pulls.values():
        if pr.repo.lower() == repo.lower() and pr.head_ref == ref and pr.state == "open":
            return pr.head_sha
    return ref.lower() if _HEX.match(ref.lower()) else None


def list_pulls(world: World, req: Request) -> Response:
    repo = full_name(req).lower()
    state = req.query.get("state", "open")
    if state not in ("open", "closed", "all"):
        return error(422, "Validation Failed", DOCS_PULLS,
                     errors=[{"resource": "Issue", "field": "state", "code": "invalid"}])
    sort = req.query.get("sort", "created")
    # GitHub: newest first when sorting by creation (the default), oldest first otherwise.
    direction = req.query.get("direction", "desc" if sort == "created" else "asc")
    head, base = req.query.get("head"), req.query.get("base")
    found: list[Pull] = []
    for (name, _), pr in world.pulls.items():
        if name != repo or (state != "all" and pr.state != state) or (base and pr.base != base):
            continue
        owner = (pr.head_repo or pr.repo).split("/", 1)[0]
        if head is not None and head.lower() != f"{owner}:{pr.head_ref}".lower():
            continue
        found.append(pr)

    def key(pr: Pull) -> tuple[float, int]:
        return (pr.updated_at if sort == "updated" else pr.created_at, pr.seq)

    found.sort(key=key, reverse=direction == "desc")
    return paginate(req, found, lambda pr: shapes_pulls.pull(world, req.base, pr, full=False))


def get_pull(world: World, req: Request) -> Response:
    pr = world.pull(full_name(req), int(req.params["number"]))
    if pr is None:
        return not_found("https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
    return Response(200, shapes_pulls.pull(world, req.base, pr, full=True))


def _since(req: Request) -> float | None:
    raw = req.query.get("since")
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def issue_comments(world: World, req: Request) -> Response:
    repo, number = full_name(req).lower(), int(req.params["number"])
    since = _since(req)
    on_issue = [c for c in world.comments if c.repo.lower() == repo and c.number == number]
    if not on_issue and world.pull(repo, number) is None:
        return not_found()
    found = sorted((c for c in on_issue if since is None or c.updated_at >= since),
                   key=lambda c: (c.created_at, c.id))
    return paginate(req, found, lambda c: shapes_pulls.comment(req.base, c))


def reviews(world: World, req: Request) -> Response:
    if world.pull(full_name(req), int(req.params["number"])) is None:
        return not_found()
    repo, number = full_name(req).lower(), int(req.params["number"])
    found = sorted((r for r in world.reviews if r.repo.lower() == repo and r.number == number),
                   key=lambda r: (r.submitted_at, r.id))
    return paginate(req, found, lambda r: shapes_pulls.review(req.base, r))


MAX_FILES = 3000
"""GitHub: "Responses include a maximum of 3000 files" (30 per page by default, 100 at most)."""


def files(world: World, req: Request) -> Response:
    pr = world.pull(full_name(req), int(req.params["number"]))
    if pr is None:
        return not_found(DOCS_FILES)
    entries = world.pull_files.get((pr.repo.lower(), pr.head_sha), [])[:MAX_FILES]
    return paginate(req, entries, lambda e: shapes_pulls.diff_entry(req.base, pr.repo, pr.head_sha, e))


def labels(world: World, req: Request) -> Response:
    pr = world.pull(full_name(req), int(req.params["number"]))
    if pr is None:
        return not_found()
    return paginate(req, [shapes.label(req.base, pr.repo, name) for name in pr.labels])


def get_commit(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    sha = resolve_ref(world, repo.full_name, req.params["ref"])
    if sha is None:
        return error(422, f"No commit found for SHA: {req.params['ref']}", DOCS_COMMIT)
    api = f"{req.base}/repos/{repo.full_name}"
    when = iso(repo.created_at)
    person = {"name": "The Octocat", "email": "octocat@example.invalid", "date": when}
    tree = shapes.fake_sha(repo.full_name, "tree", sha)
    return Response(200, {
        "sha": sha, "node_id": shapes.node_id("Commit", int(sha[:7], 16)), "url": f"{api}/commits/{sha}",
        "html_url": f"https://github.com/{repo.full_name}/commit/{sha}",
        "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {"url": f"{api}/git/commits/{sha}", "author": person, "committer": person,
                   "message": "Emulated commit", "tree": {"url": f"{api}/git/trees/{tree}", "sha": tree},
                   "comment_count": 0,
                   "verification": {"verified": False, "reason": "unsigned", "signature": None,
                                    "payload": None, "verified_at": None}},
        "author": shapes.user(req.base, "octocat"), "committer": shapes.user(req.base, "octocat"),
        "parents": [], "stats": {"additions": 0, "deletions": 0, "total": 0}, "files": [],
    })


ROUTES: list[Route] = [
    route("GET", "/repos/{owner}/{repo}/pulls", "token", list_pulls),
    route("GET", "/repos/{owner}/{repo}/pulls/{number}", "token", get_pull),
    route("GET", "/repos/{owner}/{repo}/issues/{number}/comments", "token", issue_comments),
    route("GET", "/repos/{owner}/{repo}/pulls/{number}/reviews", "token", reviews),
    route("GET", "/repos/{owner}/{repo}/pulls/{number}/files", "token", files),
    route("GET", "/repos/{owner}/{repo}/issues/{number}/labels", "token", labels),
    route("GET", "/repos/{owner}/{repo}/commits/{ref}", "token", get_commit),
]
