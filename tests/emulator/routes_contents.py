"""Repository contents: a file (real base64, real blob SHA), a directory listing, or 404."""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import quote

from tests.emulator.routes_pulls import full_name
from tests.emulator.state import Repo
from tests.emulator.wire import Request, Response, Route, not_found, route
from tests.emulator.world import World

DOCS = "https://docs.github.com/rest/repos/contents#get-repository-content"


def blob_sha(data: bytes) -> str:
    """Git's object id for a blob, which is what GitHub reports as a file's `sha`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _wrapped_base64(data: bytes) -> str:
    # GitHub wraps the base64 body at 60 characters, each line ending in a newline.
    text = base64.b64encode(data).decode()
    return "".join(text[i:i + 60] + "\n" for i in range(0, len(text), 60))


def _entry(req: Request, repo: Repo, ref: str, path: str, kind: str, data: bytes | None) -> dict[str, Any]:
    sha = blob_sha(data) if data is not None else blob_sha(f"tree {repo.full_name} {ref} {path}".encode())
    api = f"{req.base}/repos/{repo.full_name}"
    html = f"https://github.com/{repo.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{path}"
    git = f"{api}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
    self_url = f"{api}/contents/{quote(path)}?ref={quote(ref)}"
    return {
        "type": kind, "size": len(data) if data is not None else 0, "name": path.rsplit("/", 1)[-1],
        "path": path, "sha": sha, "url": self_url, "git_url": git, "html_url": html,
        "download_url": (f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{path}"
                         if kind == "file" else None),
        "_links": {"self": self_url, "git": git, "html": html},
    }


def get_contents(world: World, req: Request) -> Response:
    repo = world.require_repo(full_name(req))
    path = req.params.get("path", "").strip("/")
    ref = req.query.get("ref") or repo.default_branch
    text = repo.files.get((ref, path))
    if text is not None:
        data = text.encode()
        obj = _entry(req, repo, ref, path, "file", data)
        obj.update(encoding="base64", content=_wrapped_base64(data))
        return Response(200, obj)
    prefix = f"{path}/" if path else ""
    children: dict[str, bytes | None] = {}
    for (file_ref, file_path), file_text in repo.files.items():
        if file_ref != ref or not file_path.startswith(prefix):
            continue
        head, _, rest = file_path[len(prefix):].partition("/")
        children[head] = None if rest else file_text.encode()
    if not children:
        return not_found(DOCS)
    return Response(200, [_entry(req, repo, ref, prefix + name, "file" if data is not None else "dir", data)
                          for name, data in sorted(children.items())])


ROUTES: list[Route] = [
    route("GET", "/repos/{owner}/{repo}/contents", "token", get_contents),
    route("GET", "/repos/{owner}/{repo}/contents/{path+}", "token", get_contents),
]
