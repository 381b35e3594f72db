"""MCP tools that merge, lift a hold or weaken the gate: ``mcp__<server>__merge_pull_request``
(github/github-mcp-server)
and the plugin form ``mcp__plugin_<plugin>_<server>__merge_pull_request``, with ``owner``, ``repo`` and
``pullNumber`` (or ``pull_number``). Other servers' spellings of merge, auto-merge and enqueue are
recognised by the tool's last name segment, compared without ``_``/``-`` and case.

`MERGE_TOOLS` and `LIFT_TOOLS` are the one list: the guard's check, and the Claude Code matcher and
the plugin's ``hooks.json`` that send these tools to the guard (`claude_matcher`, pinned by a test), are
derived from it, so a tool the detector knows cannot miss the guard.
"""

from __future__ import annotations

from hook.detect.model import Merge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MERGE_TOOLS = ("merge_pull_request", "merge_pr", "merge_pull", "pr_merge", "enable_pull_request_auto_merge",
               "enable_auto_merge", "enqueue_pull_request", "add_to_merge_queue", "agent_merge", "enable_agent_merge",
               "update_agent_merge", "put_agent_merge_enrollment", "github_agent_merge_put_agent_merge_enrollment")
"""Tools that merge a PR, turn on its auto-merge, put it in the merge queue, or enroll it in Agent Merge (``PUT
/agents/repos/{owner}/{repo}/pulls/{pull_number}/agent-merge``: GitHub's agent merges it once its checks pass;
reading or disabling the enrollment is no merge)."""
LIFT_TOOLS = {
    "add_issue_comment": "comment",  # github-mcp-server: owner, repo, issue_number, body
    "create_and_submit_pull_request_review": "review",  # body, event
    "submit_pending_pull_request_review": "review",
    "pull_request_review_write": "review",  # method, body, event
    "update_issue": "labels",  # labels: replaces the set
    "issue_write": "labels",
    "remove_issue_label": "label",
    "remove_label": "label",
    "dismiss_pull_request_review": "dismiss",
    "update_pull_request": "base",  # base: a held PR may then merge where merge-hold is not required
}
"""Tools that may lift a hold (design §6: a person's act), and how."""
TAMPER_TOOLS = {
    "create_or_update_file": "path",  # github-mcp-server: owner, repo, path, content, branch
    "delete_file": "path",
    "push_files": "files",  # files: [{path, content}], branch
}
"""Tools that may weaken the gate (design §6): writing ``.github/merge-hold.yml``."""
_NUMBER_KEYS = ("pullNumber", "pull_number", "pullRequestNumber", "pr_number", "prNumber", "issue_number",
                "issueNumber", "number", "pr")


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


_MERGES = frozenset(_norm(n) for n in MERGE_TOOLS)
_LIFTS = {_norm(n): kind for n, kind in LIFT_TOOLS.items()}
_TAMPERS = {_norm(n): kind for n, kind in TAMPER_TOOLS.items()}


def _last(tool_name: str) -> str:
    """The tool's own name (after the last ``__``), normalised; "" unless it is letters and digits with
    single ``_``/``-`` between them (the language `claude_matcher` matches, so the two stay equal)."""
    if tool_name.count("__") < 2:
        return ""
    last = tool_name.rsplit("__", 1)[-1]
    if last[:1] in "_-" or last[-1:] in "_-" or any(p in last for p in ("--", "_-", "-_")):
        return ""
    return _norm(last)


def is_merge_tool(tool_name: str) -> bool:
    return _last(tool_name) in _MERGES


def is_gated_tool(tool_name: str) -> bool:
    """Whether the guard must look at this MCP tool call (it may merge or lift a hold)."""
    last = _last(tool_name)
    return tool_name.startswith("mcp__") and (last in _MERGES or last in _LIFTS or last in _TAMPERS)


def claude_matcher() -> str:
    """The Claude Code matcher (an unanchored JavaScript regex) for every tool `is_gated_tool` accepts:
    each name's letters in either case, ``_`` or ``-`` allowed between them, after the last ``__``."""
    def pattern(name: str) -> str:
        return "[_-]?".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in _norm(name))

    names = sorted({*MERGE_TOOLS, *LIFT_TOOLS, *TAMPER_TOOLS}, key=_norm)
    return "^mcp__.*__(?:" + "|".join(pattern(n) for n in names) + ")$"


def _repo_and_number(tool_input: Mapping[str, Any]) -> tuple[str | None, int | None]:
    owner, name = tool_input.get("owner"), tool_input.get("repo")
    if isinstance(name, str) and "/" in name and not owner:  # some servers take "owner/name"
        owner, name = name.split("/", 1)
    repo = f"{owner}/{name}" if isinstance(owner, str) and isinstance(name, str) and owner and name else None
    for key in _NUMBER_KEYS:
        value = tool_input.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("#").isdigit()):
            return repo, int(str(value).strip().lstrip("#"))
    return repo, None


def _lift(kind: str, tool_input: Mapping[str, Any]) -> str | None:
    from hook.detect.lift import body_lift

    if kind == "dismiss":
        return "dismiss"
    if kind == "label":
        label = tool_input.get("label") or tool_input.get("name")
        return f"label:{label}" if isinstance(label, str) and label else "label:*"
    if kind == "labels":
        return "label:*" if "labels" in tool_input else None
    if kind == "base":
        return "base" if "base" in tool_input else None
    event = tool_input.get("event")
    if isinstance(event, str) and event.upper() == "APPROVE":
        return "approve"
    body = tool_input.get("body")
    if body is None or body == "":
        return None
    return body_lift(body if isinstance(body, str) else None, kind)


def detect_mcp(tool_name: str, tool_input: Mapping[str, Any]) -> list[Merge]:
    if not is_gated_tool(tool_name):
        return []
    repo, pr = _repo_and_number(tool_input)
    detail = tool_name.rsplit("__", 1)[-1]
    if _last(tool_name) in _TAMPERS:
        from hook.detect.branchwrite import mcp_write  # a commit onto a branch: checked against its freezes

        return [*_tamper(_TAMPERS[_last(tool_name)], tool_input, repo, detail),
                *mcp_write(_last(tool_name), tool_input, repo, detail)]
    kind = _LIFTS.get(_last(tool_name))
    if kind is None:
        return [Merge(via="mcp", repo=repo, pr=pr, undetermined=repo is None or pr is None, detail=detail)]
    lift = _lift(kind, tool_input)
    if lift is None:
        return []
    return [Merge(via="mcp", repo=repo, pr=pr, lift=lift, undetermined=repo is None or pr is None, detail=detail)]


def _tamper(kind: str, tool_input: Mapping[str, Any], repo: str | None, detail: str) -> list[Merge]:
    """A file write that touches ``.github/merge-hold.yml`` (or whose paths are not readable)."""
    from hook.detect.gate import CONFIG_FILES

    entries = tool_input.get("files") if kind == "files" else [tool_input]
    paths = [e.get("path") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else [None]
    if not paths or any(not isinstance(p, str) for p in paths):
        act = "Write files whose paths are not readable (one may be .github/merge-hold.yml)"
    elif any(p.lstrip("/").lower() in CONFIG_FILES for p in paths if isinstance(p, str)):
        verb = "Delete" if detail.endswith("delete_file") else "Write"
        act = f"{verb} .github/merge-hold.yml, merge-hold's configuration"
    else:
        return []
    return [Merge(via="mcp", repo=repo, tamper=act, detail=detail)]

