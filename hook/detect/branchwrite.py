"""Writes onto a branch other than ``git push`` (design §6, a push into a freeze): GitHub's REST operations that
make a commit on a branch or move a branch — the contents API (``PUT``/``DELETE /repos/{o}/{r}/contents/{path}``,
``branch`` in the body, the default branch without it), a ref created or updated (``git/refs``), a branch merged
through the API (``POST …/merges``, ``…/merge-upstream``) — and the MCP tools that do the same
(github-mcp-server's ``push_files``, ``create_or_update_file``, ``delete_file``: ``branch``).

Each is a `Merge` with ``writes``: the branch (``""``: the default branch), ``undetermined`` when the text does
not show it. Not a merge by itself: the guard checks it against the repo's freezes (`hook.freezes`), beside
whatever else the same call is (a ref update that lands a PR is also a merge; a write of
``.github/merge-hold.yml`` also weakens the gate).
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hook.detect.context import Ctx
    from hook.detect.writeops import Match

BODY_FIELD = {"repos/create-or-update-file-contents": "branch", "repos/delete-file": "branch", "repos/merge": "base",
              "repos/merge-upstream": "branch", "git/create-ref": "ref"}
"""REST operations that write onto the branch their body names (absent: the default branch)."""
REF_UPDATE = "git/update-ref"
"""``PATCH /repos/{o}/{r}/git/refs/{ref}``: the branch is in the path."""
MCP_TOOLS = ("push_files", "create_or_update_file", "delete_file")
"""MCP tools that commit onto ``branch`` (hook/detect/mcp.py ``TAMPER_TOOLS``: the matcher already sends them)."""


def rest_write(ctx: Ctx, via: str, host: str | None, repo: str | None, match: Match,
               body: Mapping[str, str] | None) -> None:
    branch: str | None
    if match.opid == REF_UPDATE:
        ref = match.values.get("ref", DYN)
        if DYN not in ref and not ref.startswith("heads/"):
            return  # a tag
        branch = ref.removeprefix("heads/")
    elif match.opid in BODY_FIELD:
        branch = None if body is None else body.get(BODY_FIELD[match.opid], "")
        if match.opid == "git/create-ref" and branch is not None and DYN not in branch:
            if not branch.startswith("refs/heads/"):
                return  # a tag, or a ref GitHub refuses
            branch = branch.removeprefix("refs/heads/")
    else:
        return
    unknown = branch is None or DYN in branch
    ctx.add(Merge(via=via, repo=repo, host=host, writes="" if unknown else branch, undetermined=unknown,
                  detail=match.summary))


def mcp_write(tool: str, tool_input: Mapping[str, Any], repo: str | None, detail: str) -> list[Merge]:
    """``tool``: the MCP tool's own name, normalised (hook/detect/mcp.py)."""
    if tool not in {t.replace("_", "") for t in MCP_TOOLS}:
        return []
    branch = tool_input.get("branch")
    if branch is None or branch == "":
        return [Merge(via="mcp", repo=repo, writes="", detail=detail)]
    if not isinstance(branch, str):
        return [Merge(via="mcp", repo=repo, writes="", undetermined=True, detail=detail)]
    return [Merge(via="mcp", repo=repo, writes=branch.removeprefix("refs/heads/"), detail=detail)]
