"""MCP tools that merge: ``mcp__<server>__merge_pull_request`` (github/github-mcp-server) and the
plugin form ``mcp__plugin_<plugin>_<server>__merge_pull_request``, with ``owner``, ``repo`` and
``pullNumber`` (or ``pull_number``). Other servers' spellings of merge, auto-merge and enqueue are
recognised by the tool's last name segment.
"""

from __future__ import annotations

from hook.detect.model import Merge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# the tool name's last segment, lower-cased with "_" and "-" removed
_MERGE_TOOLS = frozenset({"mergepullrequest", "mergepr", "mergepull", "enablepullrequestautomerge",
                          "enableautomerge", "enqueuepullrequest", "addtomergequeue", "prmerge"})
_NUMBER_KEYS = ("pullNumber", "pull_number", "pullRequestNumber", "pr_number", "prNumber", "number", "pr")


def is_merge_tool(tool_name: str) -> bool:
    last = tool_name.rsplit("__", 1)[-1]
    return last.replace("_", "").replace("-", "").lower() in _MERGE_TOOLS


def detect_mcp(tool_name: str, tool_input: Mapping[str, Any]) -> list[Merge]:
    if not tool_name.startswith("mcp__") or not is_merge_tool(tool_name):
        return []
    owner, name = tool_input.get("owner"), tool_input.get("repo")
    if isinstance(name, str) and "/" in name and not owner:  # some servers take "owner/name"
        owner, name = name.split("/", 1)
    repo = f"{owner}/{name}" if isinstance(owner, str) and isinstance(name, str) and owner and name else None
    pr = None
    for key in _NUMBER_KEYS:
        value = tool_input.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("#").isdigit()):
            pr = int(str(value).strip().lstrip("#"))
            break
    return [Merge(via="mcp", repo=repo, pr=pr, undetermined=repo is None or pr is None,
                  detail=tool_name.rsplit("__", 1)[-1])]
