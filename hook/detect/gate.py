"""Acts that weaken the merge gate (design §6: like lifting a hold, a person's act): the ``gate`` operations of
GitHub's REST API that are not a lift on one PR (hook/detect/writeops.py) — forging the ``merge-hold`` status
or a check run of that name, changing or deleting branch protection, its required checks or a ruleset,
suspending or uninstalling the App, writing ``.github/merge-hold.yml`` through the contents API, and the
fixture's conservative rest (re-running workflows, webhooks, deploy keys, collaborators, environments …).

Each is a Merge with ``tamper``: the act in GitHub's own words (the operation's summary), with what the
text shows of it (the branch, the status context, the file). ``hook.tampers`` judges it (spec ``on_tamper``).
A contents write of any other file, and a settings change of the description or homepage only, weaken nothing.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.detect.writeops import Match

CONFIG_FILES = frozenset({".github/merge-hold.yml", ".github/merge-hold.yaml"})
"""The repo config merge-hold reads (`.github/merge-hold.yml`): who may hold and lift, freezes, the label."""
GATE_CONTEXTS = ("merge-hold",)
"""Status contexts and check-run names that are merge-hold's own (``merge-hold``, ``merge-hold/freeze``)."""
HARMLESS_SETTINGS = frozenset({"description", "homepage", "has_issues", "has_projects", "has_wiki",
                               "has_discussions", "is_template", "topics"})
"""Repository settings that change nothing the gate relies on (``PATCH /repos/{o}/{r}``, ``gh repo edit``)."""


def rest_gate(ctx: Ctx, via: str, host: str | None, repo: str | None, match: Match,
              body: dict[str, str] | None) -> None:
    act = _act(match, body)
    if act is None:
        return
    where = match.values.get("org") or match.values.get("installation_id")
    detail = f"{match.method} {match.path}" + (f" ({where})" if where and DYN not in where else "")
    ctx.add(Merge(via=via, repo=repo, host=host, tamper=act, detail=detail))


def _act(match: Match, body: dict[str, str] | None) -> str | None:
    opid, values, fields = match.opid, match.values, body or {}
    if opid == "repos/create-commit-status":
        context = fields.get("context", "default") if body is not None else None  # GitHub's default context
        return _named("status", context, "Create a commit status")
    if opid in ("checks/create", "checks/update"):
        return _named("check run", fields.get("name") if body is not None else None, match.summary)
    if opid in ("repos/create-or-update-file-contents", "repos/delete-file"):
        path = _decoded(values.get("path", DYN))
        if DYN in path:
            return f"{match.summary} (a file the text does not name: it may be .github/merge-hold.yml)"
        if path.lower() in CONFIG_FILES:
            return f"{'Delete' if opid == 'repos/delete-file' else 'Write'} {path}, merge-hold's configuration"
        return None  # any other file: the gate's configuration is not in it
    if opid == "repos/update" and body is not None and set(fields) <= HARMLESS_SETTINGS:
        return None
    branch = values.get("branch")
    return match.summary + (f" (branch {branch})" if branch and DYN not in branch else "")


def _named(noun: str, name: str | None, summary: str) -> str:
    if name is None or DYN in name:
        return f"{summary} (its name is not in the text: it may be merge-hold)"
    if name.lower().startswith(GATE_CONTEXTS):
        return f"Forge the {name} {noun}"
    return f"{summary} ({name})"


def _decoded(segment: str) -> str:
    if "%" not in segment:
        return segment
    from urllib.parse import unquote

    return unquote(segment)
