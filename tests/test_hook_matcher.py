"""Every MCP tool the detector gates reaches the guard (issue #8 item 5): the Claude Code matcher in the
settings block and in the plugin's ``hooks.json`` is derived from the detector's one tool list
(`hook.detect.mcp`: merge, auto-merge, enqueue, and the tools that lift a hold), and matches exactly the
names the detector accepts. Claude Code reads a matcher with regex characters as an unanchored
JavaScript regex; the derived one uses only syntax Python's `re` reads the same way."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hook.detect.mcp import LIFT_TOOLS, MERGE_TOOLS, claude_matcher, detect_mcp, is_gated_tool
from hook.detect.prefilter import SHELL_TOOLS
from hook.tools.claude_settings import GUARD_MATCHERS, SHELL_MATCHER, block_for

PLUGIN_HOOKS = Path(__file__).resolve().parent.parent / "hook" / "plugin" / "hooks" / "hooks.json"


def spellings(name: str) -> list[str]:
    words = name.split("_")
    camel = words[0] + "".join(w.title() for w in words[1:])
    return [name, camel, camel[0].upper() + camel[1:], "-".join(words), name.upper()]


def matches(name: str) -> bool:
    return re.search(claude_matcher(), name) is not None


@pytest.mark.parametrize("tool", [*MERGE_TOOLS, *LIFT_TOOLS])
def test_every_spelling_of_every_tool_is_matched_and_gated(tool: str) -> None:
    for spelled in spellings(tool):
        for name in (f"mcp__github__{spelled}", f"mcp__plugin_github_github__{spelled}", f"mcp__a__b__{spelled}"):
            assert is_gated_tool(name), name
            assert matches(name), name


@pytest.mark.parametrize("name", [
    "mcp__github__merge_pull_request", "mcp__github__enable_pull_request_auto_merge",
    "mcp__gh__enqueuePullRequest", "mcp__github__add_issue_comment", "mcp__github__update_issue",
    "mcp__github__update_pull_request_branch", "mcp__github__get_pull_request", "mcp__github__merge_pull_requests",
    "mcp__github__list_merge_queue", "mcp__github__disable_auto_merge", "mcp__github__merge_pull_request_x",
    "mcp__github__xmerge_pull_request", "mcp__github__merge__pull_request", "mcp__github__merge_pull_request__x",
    "merge_pull_request", "Bash", "mcp__merge_pull_request", "mcp____merge_pr", "mcp__x__merge_PR",
    "mcp__x__MeRgE_pR", "mcp__x__merge--pr", "mcp__x__merge_p_r", "mcp__x__remove_issue_label",
    "mcp__x__dismiss_pull_request_review", "mcp__x__pull_request_review_write", "mcp__x__create_pull_request",
])
def test_the_matcher_accepts_exactly_what_the_detector_gates(name: str) -> None:
    assert matches(name) == is_gated_tool(name), name


def test_settings_and_plugin_carry_the_derived_matchers(tmp_path: Path) -> None:
    assert (SHELL_MATCHER, claude_matcher()) == GUARD_MATCHERS
    assert set(SHELL_MATCHER.split("|")) == set(SHELL_TOOLS)
    block = block_for(str(tmp_path / "spec.json"))
    assert [g["matcher"] for g in block["hooks"]["PreToolUse"]] == list(GUARD_MATCHERS)
    plugin = json.loads(PLUGIN_HOOKS.read_text())["hooks"]["PreToolUse"]
    assert [g["matcher"] for g in plugin] == list(GUARD_MATCHERS)


@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("mcp__github__merge_pull_request", {"owner": "o", "repo": "r", "pullNumber": 5}, (5, None)),
    ("mcp__github__enable_pull_request_auto_merge", {"owner": "o", "repo": "r", "pull_number": 6}, (6, None)),
    ("mcp__github__add_issue_comment", {"owner": "o", "repo": "r", "issue_number": 5, "body": "/unhold"},
     (5, "comment")),
    ("mcp__github__add_issue_comment", {"owner": "o", "repo": "r", "issue_number": 5, "body": "thanks"}, None),
    ("mcp__github__create_and_submit_pull_request_review",
     {"owner": "o", "repo": "r", "pullNumber": 5, "body": "", "event": "APPROVE"}, (5, "approve")),
    ("mcp__github__pull_request_review_write",
     {"method": "create", "owner": "o", "repo": "r", "pullNumber": 5, "body": "/hold cancel", "event": "COMMENT"},
     (5, "review")),
    ("mcp__github__update_issue", {"owner": "o", "repo": "r", "issue_number": 5, "labels": ["bug"]}, (5, "label:*")),
    ("mcp__github__update_issue", {"owner": "o", "repo": "r", "issue_number": 5, "title": "x"}, None),
    ("mcp__github__remove_issue_label", {"owner": "o", "repo": "r", "issue_number": 5, "label": "do-not-merge/hold"},
     (5, "label:do-not-merge/hold")),
])
def test_mcp_lift_and_merge_tools_are_read(tool: str, tool_input: dict[str, object],
                                           expected: tuple[int, str | None] | None) -> None:
    found = detect_mcp(tool, tool_input)
    if expected is None:
        assert found == []
    else:
        assert [(m.repo, m.pr, m.lift) for m in found] == [("o/r", *expected)]
