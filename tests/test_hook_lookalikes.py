"""Look-alikes stay clean (issue 26 item 7): a merge-shaped *substring* in a harmless argument of a program the
guard does not read is no merge — words and path segments count (`hook.detect.shaped`), not substrings; a request
to a host that is not GitHub's is no GitHub act (`hook.detect.hosts`); a GraphQL query run from program code is
clean (`hook.detect.code`). Over-blocks stay under one in fifty look-alikes across the labelled corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hook.detect.shaped import merge_shaped
from tests import test_hook_library_merges, test_hook_programs
from tests.conftest import FIXTURES
from tests.detect_rows import CLEAN, DET, UND, judge, make_checkout

LOOK_ALIKES = [
    # fields and flags that contain a merge word (programs the guard does not know)
    "dasel -f pr.json '.merged_at'", "dasel -f pr.json -r json '.mergeable'",
    "mytool --filter .mergeable prs.json", "xq '.[] | select(.mergeStateStatus == \"CLEAN\") | .number' prs.yml",
    "hg log --no-merges -l 5", "tig --no-merges", "glab mr list --merged", "jtbl --fields merge_commit_sha,merged_by",
    "report --columns number,title,mergeable,merged_at,mergeStateStatus", "sqlite-utils rows prs.db merged",
    "git merged-branches", "make merged-report", "make landing-page", "claude -p 'list the mergeable PRs'",
    "gemini -p 'summarise merged_at for last week'", "emerge --sync", "graphql-codegen --config codegen.yml",
    "mytool ~/repos/project", "code2prompt ~/repos/merge-hold/src", "tree-sitter parse ~/repos/widgets/x.sh",
    "mytool --since merged --exclude-merges", "stats --no-merge-commits", "node dist/merge-sort.js",
    "./bench/mergesort --size 1000", "python3 tools/merge_conflicts_report.py",
    # another host than GitHub's
    "curl -X PUT http://localhost:3000/api/repos/acme/widgets/pulls/5/merge",
    "curl -X PUT localhost:3000/repos/acme/widgets/pulls/5/merge",
    "curl -sS -X PUT -H 'Authorization: token x' https://gitea.example.org/api/v1/repos/acme/widgets/pulls/5/merge",
    "http PUT :3000/api/repos/acme/widgets/pulls/5/merge", "xh put http://127.0.0.1:8080/repos/acme/widgets/pulls/5/merge",
    "wget --method=PUT -qO- http://localhost:3000/api/repos/acme/widgets/pulls/5/merge",
    "curl -X DELETE http://localhost:3000/repos/acme/widgets/branches/main/protection",
    "curl -d '{\"query\":\"mutation { mergePullRequest(input: {pullRequestId: \\\"x\\\"}) { clientMutationId } }\"}' "
    "http://localhost:4000/graphql",
    # program code: a GraphQL query, a GET, another host (more in tests/test_hook_library_merges.py)
    "python3 -c 'import requests; print(requests.post(\"https://api.github.com/graphql\", "
    "json={\"query\": \"query { viewer { login } }\"}).json())'",
    "ruby -rnet/http -rjson -e 'puts Net::HTTP.get(URI(\"https://api.github.com/repos/acme/widgets/pulls/5\"))'",
]

# the same shapes that do reach GitHub stay merges (they pass on main too: the bounds of the rules above)
STILL_MERGES: list[tuple[str, dict[str, str], str]] = [
    ("curl -X PUT https://ghe.corp.example/api/v3/repos/acme/widgets/pulls/5/merge", {}, DET),
    ("curl -X PUT https://api.octo.ghe.com/repos/acme/widgets/pulls/5/merge", {}, DET),
    ("curl -X PUT https://git.corp.example/repos/acme/widgets/pulls/5/merge", {"GH_HOST": "git.corp.example"}, DET),
    ("curl -X PUT \"$API/repos/acme/widgets/pulls/5/merge\"", {}, DET),
    ("curl -X PUT https://api.github.com/repos/acme/widgets/pulls/5/merge", {}, DET),
    ("mytool merge 5", {}, UND), ("mytool --merge-method squash 5", {}, UND), ("automerge 5", {}, UND),
    ("mytool $API/repos/acme/widgets/pulls/5", {}, UND), ("frobnicate repos/acme/widgets/pulls/5", {}, UND),
]


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path)


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_look_alikes_are_clean(command: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == CLEAN, found


@pytest.mark.parametrize(("command", "env", "want"), STILL_MERGES, ids=[c for c, _, _ in STILL_MERGES])
def test_what_reaches_github_stays_a_merge(command: str, env: dict[str, str], want: str, checkout: Path) -> None:
    got, found = judge(command, checkout, env)
    assert got == want, found


def test_the_checkout_s_own_host_and_gh_s_hosts_are_github(tmp_path: Path) -> None:
    repo = make_checkout(tmp_path, url="https://git.corp.example/acme/widgets.git")
    assert judge("curl -X PUT https://git.corp.example/repos/acme/widgets/pulls/5/merge", repo)[0] == DET
    config = tmp_path / "ghconfig"
    config.mkdir()
    (config / "hosts.yml").write_text("ghe.other.example:\n    user: bot\n    git_protocol: https\n")
    env = {"GH_CONFIG_DIR": str(config)}
    assert judge("curl -X PUT https://ghe.other.example/repos/acme/widgets/pulls/5/merge", repo, env)[0] == DET
    assert judge("curl -X PUT https://elsewhere.example/repos/acme/widgets/pulls/5/merge", repo, env)[0] == CLEAN


@pytest.mark.parametrize(("text", "shaped"), [
    ("merge", True), ("merge-async", True), ("mergePullRequest", True), ("merge_pull_request", True),
    ("merge-pr", True), ("automerge", True), ("--merge-method", True), ("enqueuePullRequest", True),
    ("updateRef", True), ("createCommitOnBranch", True), ("git merge feature", True), ("MERGE", True),
    ("$API/repos/acme/x/pulls/5", True), ("repos/acme/x", True), ("https://api.github.com/repos/a/b", True),
    ("mergeable", False), ("merged_at", False), ("--no-merges", False), ("mergeStateStatus", False),
    ("merge_commit_sha", False), ("merge-base", False), ("emerge", False), ("~/repos/project", False),
    ("/home/me/repos/x", False), ("graphql-codegen", False), ("landing-page", False), ("shipping.md", False),
])
def test_words_and_segments_not_substrings(text: str, shaped: bool) -> None:
    assert merge_shaped(text) is shaped


def labelled_look_alikes() -> list[str]:
    """Every look-alike the suite labels: this file's, the program table's, the client libraries', and the
    command corpus's rows that merge nothing (and whose effect it knows)."""
    corpus = [json.loads(line) for line in (FIXTURES / "commands" / "merge_commands.jsonl").read_text().splitlines()]
    known = [r["command"] for r in corpus if not r["is_merge"] and r["flags"].get("effect") != "unknown"
             and not r["command"].startswith("mcp__") and r["flags"].get("shell") != "powershell"]
    return [*LOOK_ALIKES, *test_hook_programs.LOOK_ALIKES, *test_hook_library_merges.LOOK_ALIKES, *known]


def test_over_blocks_stay_under_one_in_fifty(checkout: Path) -> None:
    """An over-block is a merge the guard would judge in a command that merges nothing (a push of a branch to
    its own name is checked against the held heads, and lifts and acts are a person's: neither counts)."""
    commands = labelled_look_alikes()
    blocked = [c for c in commands if judge(c, checkout)[1].merges]
    assert len(commands) >= 100
    assert len(blocked) * 50 <= len(commands), blocked
