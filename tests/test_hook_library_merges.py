"""Merges through a GitHub client library (issue 26 item 3): code handed to an interpreter — inline, on stdin, in a
file the command writes — that calls a client's merge is a merge of the PR it names, undetermined (program code
is read by heuristics, never modelled exactly); never clean because no ``gh`` or URL appears. Code that only
reads (a GraphQL query, a ``GET``) or talks to another host is clean (item 7).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.detect_rows import CLEAN, UND, judge, make_checkout


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path)


def q(code: str) -> str:
    return "'" + code.replace("'", "'\\''") + "'"


# (command, the repositories among the merges, the PR they name or None)
MERGES: list[tuple[str, set[str], int | None]] = [
    # PyGithub: PullRequest.merge(), PullRequest.enable_automerge()
    ("python3 -c " + q('from github import Github; Github("t").get_repo("acme/other").get_pull(7).merge()'),
     {"acme/other", "acme/widgets"}, 7),
    ("python3 - <<'EOF'\nimport os\nfrom github import Github, Auth\n"
     "g = Github(auth=Auth.Token(os.environ['GH_TOKEN']))\npr = g.get_repo('acme/other').get_pull(7)\n"
     "pr.merge(merge_method='squash')\nEOF", {"acme/other", "acme/widgets"}, 7),
    ("python3 -c " + q("import github; github.Github().get_repo('acme/other').get_pull(7).enable_automerge()"),
     {"acme/other", "acme/widgets"}, 7),
    ("cat > tool.py <<'EOF'\nfrom github import Github\nrepo = Github().get_repo('acme/other')\n"
     "repo.get_pull(int('7')).merge()\nEOF\npython3 tool.py", {"acme/other", "acme/widgets"}, None),
    ("printf 'from github import Github\\nGithub().get_repo(\"acme/other\").get_pull(7).merge()\\n' | python3",
     {"acme/other", "acme/widgets"}, 7),
    # github3.py, ghapi, githubkit
    ("python3 -c " + q("import github3; github3.login(token='t').pull_request('acme', 'other', 7).merge()"),
     {"acme/widgets"}, 7),
    ("python3 -c " + q("from ghapi.all import GhApi; GhApi(owner='acme', repo='other').pulls.merge(7)"),
     {"acme/other", "acme/widgets"}, 7),
    ("python3 -c " + q("from githubkit import GitHub; GitHub('t').rest.pulls.merge('acme', 'other', 7)"),
     {"acme/widgets"}, 7),
    # Octokit (ES modules: no require in sight), Octokit routes, mergePullRequest helpers
    ("node --input-type=module -e " + q('import { Octokit } from "@octokit/rest"; await new Octokit().pulls.merge('
                                        '{ owner: "acme", repo: "other", pull_number: 7 })'),
     {"acme/other", "acme/widgets"}, 7),
    ("node --input-type=module -e " + q('import { Octokit } from "octokit"; const o = new Octokit(); '
                                        'await o.rest.pulls.merge({ owner: "acme", repo: "other", pull_number: 7 })'),
     {"acme/other", "acme/widgets"}, 7),
    ("deno eval " + q('import { Octokit } from "npm:@octokit/rest"; await new Octokit().pulls.merge({owner: "acme", '
                      'repo: "widgets", pull_number: 7});'), {"acme/widgets"}, 7),
    # Ruby Octokit (the library loaded with -r: no require in the code)
    ("ruby -roctokit -e " + q('Octokit::Client.new(access_token: ENV["GH_TOKEN"]).merge_pull_request("acme/other", 7)'),
     {"acme/other", "acme/widgets"}, 7),
    ("ruby -r octokit -e " + q("Octokit.merge_pull_request('acme/other', 7, 'shipping it')"),
     {"acme/other", "acme/widgets"}, 7),
]

# code that reaches GitHub, or another host, and merges nothing
LOOK_ALIKES = [
    "python3 -c " + q('import requests; print(requests.post("https://api.github.com/graphql", '
                      'json={"query": "query { viewer { login } }"}).json())'),
    "python3 -c " + q('import requests; r = requests.post("https://api.github.com/graphql", json={"query": '
                      '"query { repository(owner: \\"acme\\", name: \\"widgets\\") { pullRequest(number: 7) '
                      '{ mergeable mergeStateStatus } } }"}); print(r.json())'),
    "node -e " + q('fetch("https://api.github.com/graphql", {method: "POST", body: JSON.stringify({query: '
                   '"{ viewer { login } }"})}).then(r => r.json()).then(console.log)'),
    "python3 -c " + q('import requests; print(requests.get("https://api.github.com/repos/acme/widgets/pulls/7")'
                      '.json()["mergeable"])'),
    "python3 -c " + q('import urllib.request, json; print(json.load(urllib.request.urlopen('
                      '"https://api.github.com/repos/acme/widgets/pulls/7"))["merged_at"])'),
    "node -e " + q('fetch("https://api.github.com/repos/acme/widgets/pulls/7").then(r => r.json())'
                   '.then(p => console.log(p.mergeable))'),
    "python3 -c " + q('import requests; requests.put("http://localhost:3000/repos/acme/widgets/pulls/7/merge")'),
    "node -e " + q('fetch("http://localhost:3000/api/repos/acme/widgets/pulls/7/merge", {method: "PUT"})'),
    "python3 -c " + q('import httpx; httpx.put("https://gitea.example.org/api/v1/repos/acme/widgets/pulls/7/merge")'),
]


@pytest.mark.parametrize(("command", "repos", "pr"), MERGES, ids=[c[:60] for c, _, _ in MERGES])
def test_a_merge_through_a_client_library_is_that_pr_s_merge(command: str, repos: set[str], pr: int | None,
                                                              checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == UND and found.merges, found
    assert repos <= {m.repo for m in found.merges}, found
    if pr is not None:
        assert pr in {m.pr for m in found.merges}, found


@pytest.mark.parametrize("command", LOOK_ALIKES, ids=[c[:60] for c in LOOK_ALIKES])
def test_code_that_reads_or_talks_to_another_host_is_clean(command: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == CLEAN, found


@pytest.mark.parametrize("command", [
    # network code that may reach GitHub without showing what it sends stays undetermined
    "python3 -c " + q('import requests, os; requests.put(os.environ["MERGE_URL"])'),
    "python3 -c " + q("import requests, sys; requests.put(sys.argv[1])") + " https://api.github.com/repos/a/b/pulls/1/merge",
    "echo https://api.github.com/repos/a/b/pulls/1/merge | python3 -c " + q("import requests, sys; "
                                                                             "requests.put(sys.stdin.read().strip())"),
    "python3 -c " + q('import requests; requests.post("https://api.github.com/graphql", '
                      'json={"query": open("q.graphql").read()}); print("mutation ahead")'),
    "python3 -c " + q('from github import Github; print([p.number for p in Github().get_repo("acme/widgets")'
                      '.get_pulls()])'),
], ids=["env-url", "argv-url", "stdin-url", "mutation-word", "client-library"])
def test_network_code_that_may_reach_github_unseen_is_undetermined(command: str, checkout: Path) -> None:
    """The bounds of the rule above (they hold on main too, and must keep holding): what is not shown is not
    clean."""
    got, found = judge(command, checkout)
    assert got == UND, found
