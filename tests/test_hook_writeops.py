"""GitHub's REST write operations, from GitHub's own description (tests/fixtures/github/write-operations.tsv,
see its README and licence beside it): the hook's table (hook/detect/writeops.py) is pinned to the fixture row
for row, and the WHOLE file is walked through each way an agent reaches the API — ``gh api`` with ``-X``,
``--method``, ``--method=``, implied POST from ``-f``/``-F``/``--input``, curl, wget, httpie, and Python's
``requests`` and ``urllib`` in ``python3 -c`` — pinning what the guard says of every row:

- ``merge``: a merge of acme/widgets (PR 5 where the path names it);
- ``gate``: an act that weakens the gate (``tampers``) or a lift of a hold on PR 5 (``lifts``);
- ``other``: nothing at all.

Code in ``python3 -c`` is read by heuristics, so there what is found is undetermined, and code that reaches
the network but names nothing the guard recognises is undetermined too (never a determined "no merge").
A GraphQL table pins the mutations likewise.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from hook.detect import writeops
from hook.detect.model import Detection
from hook.detect.prefilter import might_merge
from hook.detect.rest import CLICKS, LIFTS
from hook.detect.toolcall import detect
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "github" / "write-operations.tsv"
LINES = [line.split("\t") for line in FIXTURE.read_text().splitlines()
         if line and not line.startswith(("#", "class\t"))]
ROWS = [row for row in LINES if row[0] != "alias"]
ALIASES = [row for row in LINES if row[0] == "alias"]
VALUES = {"owner": "acme", "repo": "widgets", "pull_number": "5", "issue_number": "5", "branch": "main",
          "ref": "heads/main", "path": ".github/merge-hold.yml", "org": "acme", "installation_id": "42",
          "sha": "0123456789abcdef0123456789abcdef01234567", "name": "do-not-merge/hold"}
# one body for every row: what makes each gate row an act or a lift (a context, a name, a lifting body …)
BODY = {"body": "/unhold", "context": "merge-hold", "name": "merge-hold", "state": "success", "labels": "hold",
        "base": "develop", "event": "APPROVE", "archived": "true", "ref": "refs/heads/main", "head": "feature",
        "branch": "main", "sha": VALUES["sha"], "message": "m", "content": "eA=="}
API = "https://api.github.com"


def path_of(template: str) -> str:
    out = []
    for part in template.strip("/").split("/"):
        out.append(VALUES.get(part[1:-1], "7") if part.startswith("{") else part)
    return "/".join(out)


def clients(method: str, path: str) -> dict[str, str]:
    """The same request through every client the guard reads."""
    url = f"{API}/{path}"
    data = json.dumps(BODY)
    fields = " ".join(f"-f {k}={shlex.quote(v)}" for k, v in BODY.items())
    forms = {
        "gh -X": f"gh api -X {method} {path} {fields}",
        "gh --method": f"gh api --method {method} {path} {fields}",
        "gh --method=": f"gh api {path} --method={method} {fields}",
        "gh --input": f"gh api -X {method} {path} --input body.json",
        "curl": f"curl -sS -X {method} -H 'Authorization: token t' {url} -d {shlex.quote(data)}",
        "wget": f"wget -qO- --method={method} --body-data={shlex.quote(data)} {url}",
        "httpie": f"http {method} {url} " + " ".join(f"{k}={shlex.quote(v)}" for k, v in BODY.items()),
        "requests": "python3 -c " + shlex.quote(
            f"import requests; requests.{method.lower()}({url!r}, json={BODY!r})"),
        "urllib": "python3 -c " + shlex.quote(
            "import urllib.request as u; u.urlopen(u.Request(" + repr(url) + ", data=" + repr(data.encode())
            + f", method={method!r}))"),
    }
    if method == "POST":  # implied by fields, by --input, by curl's -d, by wget's --post-data
        forms["gh -f"] = f"gh api {path} {fields}"
        forms["gh -F"] = f"gh api {path} " + " ".join(f"-F {k}={shlex.quote(v)}" for k, v in BODY.items())
        forms["gh --input implied"] = f"gh api {path} --input body.json"
        forms["curl -d"] = f"curl -sS {url} -d {shlex.quote(data)}"
        forms["wget --post-data"] = f"wget -qO- --post-data={shlex.quote(data)} {url}"
    return forms


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("writeops")
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets.git\n')
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature\n")
    (repo / "body.json").write_text(json.dumps(BODY))
    (root / "home").mkdir()
    return repo


def read(command: str, cwd: Path) -> Detection:
    return detect("Bash", {"command": command}, cwd=str(cwd), env={"HOME": str(cwd.parent / "home"),
                                                                    "PATH": "/usr/bin:/bin"})


def test_the_table_is_the_fixture_s_merge_and_gate_rows() -> None:
    wanted = [(c, m, p, o, s) for c, m, p, o, s, _ in ROWS if c != "other"]
    table = [(c, m, p.replace("~", "/repos/{owner}/{repo}", 1), o, s) for c, m, p, o, s in writeops.OPERATIONS]
    assert table == wanted
    assert len(ROWS) == 267 and {c for c, *_ in ROWS} == {"merge", "gate", "other"}
    assert [(row[2], "/repos/{owner}/{repo}") for row in ALIASES] == list(writeops.ALIASES)


def test_every_gate_row_is_an_act_or_a_lift() -> None:
    """The lifts are the gate rows on one PR or its comments; every other gate row is an act."""
    gates = {o for c, _, _, o, _, _ in ROWS if c == "gate"}
    assert gates >= LIFTS | CLICKS


@pytest.mark.parametrize("row", [r for r in ROWS if r[0] != "other"], ids=lambda r: f"{r[1]} {r[2]}")
def test_the_prefilter_passes_every_merge_and_gate_path(row: list[str]) -> None:
    """With no body or flag that says merge: the path alone sends the call to the full reader."""
    assert might_merge(f"gh api -X {row[1]} {path_of(row[2])} --input body.json")
    assert might_merge(f"curl -X {row[1]} {API}/{path_of(row[2])} -d @body.json")


def expected(row: list[str]) -> str:
    cls, _, _, opid, _, _ = row
    if cls == "merge":
        return "merge"
    if cls == "gate":
        return "lift" if opid in LIFTS | CLICKS else "tamper"  # a rerequest: a click on a check run's button
    return "none"


def outcome(found: Detection) -> str:
    if found.merges and not found.tampers:
        return "merge"
    if found.tampers and not found.merges:
        return "tamper"
    if found.lifts and not found.merges and not found.tampers:
        return "lift"
    return "none" if not found.gated else "mixed"


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[1]} {r[2]}" for r in ROWS])
def test_every_row_through_every_client(row: list[str], checkout: Path) -> None:
    _, method, template, _, _, _ = row
    path = path_of(template)
    repo = "acme/widgets" if "/repos/{owner}/{repo}" in template else None
    want = expected(row)
    for client, command in clients(method, path).items():
        found = read(command, checkout)
        got = outcome(found)
        where = f"{client}: {command}\n{found}"
        if client in ("requests", "urllib"):  # program code: hints, all undetermined; never "no merge"
            assert found.gated and all(m.undetermined for m in found.gated), where
            if want == "merge":
                assert any(m.repo == repo for m in found.merges), where
            continue
        assert got == want, where
        items = {"merge": found.merges, "tamper": found.tampers, "lift": found.lifts}.get(want, ())
        assert all(m.repo == repo for m in items), where
        if want == "merge" and "{pull_number}" in template:
            assert [(m.pr, m.undetermined) for m in found.merges] == [(5, False)], where
        if want == "lift":
            assert all(m.pr == 5 for m in found.lifts if "number}" in template), where


BY_ID = "repositories/123456789"


BY_ID_ROWS = [r for r in ROWS if r[2].startswith("/repos/{owner}/{repo}") and (
    r[0] != "other" or r[2].endswith(("/pulls/{pull_number}", "/topics", "/actions/caches")))]


@pytest.mark.parametrize("row", BY_ID_ROWS, ids=[f"{r[1]} {r[2]}" for r in BY_ID_ROWS])
def test_every_row_by_repository_id(row: list[str], checkout: Path) -> None:
    """``/repositories/{id}/…`` is every operation again (the fixture's alias row) with the repository not in
    the text: a merge, a lift or an act — undetermined, in an unknown repository and in the current directory's
    (where gh would look) — never clean; an ``other`` row (a few kept as look-alikes) stays nothing."""
    _, method, template, _, _, _ = row
    path = BY_ID + path_of(template).removeprefix("repos/acme/widgets")
    want = expected(row)
    for client in ("gh -X", "gh --method=", "curl", "wget", "httpie"):
        command = clients(method, path)[client]
        found = read(command, checkout)
        where = f"{client}: {command}\n{found}"
        if want == "none":
            assert not found.gated, where
            continue
        assert outcome(found) == want, where
        assert found.gated and all(m.undetermined for m in found.gated), where
        assert {m.repo for m in found.gated} == {None, "acme/widgets"}, where


@pytest.mark.parametrize(("command", "want"), [
    # Agent Merge (REST API version 2026-03-10): PUT enrolls the PR, and GitHub's agent merges it
    ("gh api -X PUT agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    ("gh api --method PUT /agents/repos/acme/widgets/pulls/5/agent-merge -H 'X-GitHub-Api-Version: 2026-03-10'",
     "merge"),
    ("gh api -X PUT agents/repos/{owner}/{repo}/pulls/5/agent-merge --input body.json", "merge"),
    (f"curl -sS -X PUT -H 'X-GitHub-Api-Version: 2026-03-10' {API}/agents/repos/acme/widgets/pulls/5/agent-merge",
     "merge"),
    (f"curl -T body.json {API}/agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    (f"http PUT {API}/agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    ("xh put api.github.com/agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    ("https PUT api.github.com/agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    (f"wget -qO- --method=PUT {API}/agents/repos/acme/widgets/pulls/5/agent-merge", "merge"),
    # reading or disabling the enrollment lands nothing
    ("gh api agents/repos/acme/widgets/pulls/5/agent-merge", "none"),
    ("gh api -X DELETE agents/repos/acme/widgets/pulls/5/agent-merge", "none"),
    (f"curl -X DELETE {API}/agents/repos/acme/widgets/pulls/5/agent-merge", "none"),
    (f"http {API}/agents/repos/acme/widgets/pulls/5/agent-merge", "none"),
])
def test_agent_merge(command: str, want: str, checkout: Path) -> None:
    found = read(command, checkout)
    assert outcome(found) == want, found
    if want == "merge":
        assert [(m.repo, m.pr, m.undetermined) for m in found.merges] == [("acme/widgets", 5, False)], found


@pytest.mark.parametrize(("tool", "merges"), [
    ("mcp__github__enable_agent_merge", True), ("mcp__github__agent_merge", True),
    ("mcp__github__update_agent_merge", True), ("mcp__gh__putAgentMergeEnrollment", True),
    ("mcp__github__github_agent_merge_put_agent_merge_enrollment", True),
    ("mcp__github__github_agent_merge_get_agent_merge_enrollment", False),
    ("mcp__github__github_agent_merge_delete_agent_merge_enrollment", False),
    ("mcp__github__disable_agent_merge", False), ("mcp__github__get_agent_merge", False),
])
def test_agent_merge_through_mcp(tool: str, merges: bool) -> None:
    found = detect(tool, {"owner": "acme", "repo": "widgets", "pull_number": 5}, cwd=None, env={})
    assert [(m.repo, m.pr, m.undetermined) for m in found.merges] == ([("acme/widgets", 5, False)] if merges else [])


# --- GraphQL --------------------------------------------------------------------------------------------

def gql(document: str) -> str:
    return "gh api graphql -f query=" + shlex.quote(document)


GRAPHQL: list[tuple[str, str]] = [
    ('mutation { mergePullRequest(input: {pullRequestId: "PR_1"}) { clientMutationId } }', "merge"),
    ('mutation M($id: ID!) { a: enablePullRequestAutoMerge(input: {pullRequestId: $id}) { clientMutationId } }',
     "merge"),
    ('mutation { enqueuePullRequest(input: {pullRequestId: "PR_1"}) { mergeQueueEntry { id } } }', "merge"),
    ('mutation { mergeBranch(input: {repositoryId: "R", base: "main", head: "f"}) { clientMutationId } }', "merge"),
    ('mutation { updateRef(input: {refId: "REF", oid: "abc"}) { clientMutationId } }', "merge"),
    ('mutation { createCommitOnBranch(input: {branch: {branchName: "main"}}) { clientMutationId } }', "merge"),
    ('mutation { deleteBranchProtectionRule(input: {branchProtectionRuleId: "BPR"}) { clientMutationId } }',
     "tamper"),
    ('mutation { updateBranchProtectionRule(input: {branchProtectionRuleId: "BPR", requiresStatusChecks: false})'
     ' { clientMutationId } }', "tamper"),
    ('mutation { createBranchProtectionRule(input: {repositoryId: "R", pattern: "x"}) { clientMutationId } }',
     "tamper"),
    ('mutation { updateRepositoryRuleset(input: {repositoryRulesetId: "RS", enforcement: DISABLED}) '
     '{ ruleset { id } } }',
     "tamper"),
    ('mutation { deleteRepositoryRuleset(input: {repositoryRulesetId: "RS"}) { clientMutationId } }', "tamper"),
    ('mutation { createCheckRun(input: {repositoryId: "R", headSha: "abc", name: "merge-hold"}) { checkRun { id } } }',
     "tamper"),
    ('mutation { addLabelsToLabelable(input: {labelableId: "PR_1", labelIds: ["L"]}) { clientMutationId } }', "lift"),
    ('mutation { removeLabelsFromLabelable(input: {labelableId: "PR_1", labelIds: ["L"]}) { clientMutationId } }',
     "lift"),
    ('mutation { updatePullRequest(input: {pullRequestId: "PR_1", baseRefName: "dev"}) { clientMutationId } }',
     "lift"),
    ('mutation { addComment(input: {subjectId: "PR_1", body: "/unhold"}) { clientMutationId } }', "lift"),
    ('mutation { dismissPullRequestReview(input: {pullRequestReviewId: "R", message: "x"}) { clientMutationId } }',
     "lift"),
    # an unknown mutation that names a PR, a ref or a protection rule is undetermined; others are not
    ('mutation { frobnicatePullRequest(input: {pullRequestId: "PR_1"}) { clientMutationId } }', "undetermined"),
    ('mutation { renameThing(input: {refId: "REF"}) { clientMutationId } }', "undetermined"),
    ('mutation { zapRule(input: {branchProtectionRuleId: "BPR"}) { clientMutationId } }', "undetermined"),
    ('mutation { frobnicateWidget(input: {widgetId: "W"}) { clientMutationId } }', "none"),
    # known harmless, and look-alikes
    ('mutation { disablePullRequestAutoMerge(input: {pullRequestId: "PR_1"}) { clientMutationId } }', "none"),
    ('mutation { addReaction(input: {subjectId: "PR_1", content: HOORAY}) { clientMutationId } }', "none"),
    ('mutation { addComment(input: {subjectId: "PR_1", body: "merge after CI"}) { clientMutationId } }', "none"),
    ('mutation { createIssue(input: {repositoryId: "R", title: "mergePullRequest fails"}) { issue { id } } }', "none"),
    ('query { repository(owner: "acme", name: "widgets") { pullRequest(number: 5) { mergeable } } }', "none"),
    ('query { viewer { login } }', "none"),
]


@pytest.mark.parametrize(("document", "want"), GRAPHQL, ids=[d[:50] for d, _ in GRAPHQL])
def test_graphql_mutations(document: str, want: str, checkout: Path) -> None:
    found = read(gql(document), checkout)
    got = outcome(found)
    if want == "undetermined":
        assert found.merges and found.undetermined and not found.tampers, found
        return
    assert got == want, found
    if want == "merge":
        assert found.undetermined, found  # a node id: the target is not in the text


def test_a_mutation_in_a_curl_body_and_in_program_code(checkout: Path) -> None:
    body = json.dumps({"query": 'mutation { deleteBranchProtectionRule(input: {branchProtectionRuleId: "B"}) '
                                "{ clientMutationId } }"})
    assert outcome(read(f"curl -X POST {API}/graphql -d {shlex.quote(body)}", checkout)) == "tamper"
    code = f"import requests; requests.post('{API}/graphql', json={json.loads(body)!r})"
    assert read("python3 -c " + shlex.quote(code), checkout).tampers
