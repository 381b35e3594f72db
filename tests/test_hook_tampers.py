"""Weakening the gate is a person's act (issue 15 item 3, design §6): the guard, run as Claude Code runs it,
blocks an agent's act that weakens the gate — forging the ``merge-hold`` status or a check run of that name,
changing or deleting branch protection, its required checks or a ruleset, suspending or uninstalling the App,
writing ``.github/merge-hold.yml`` through the contents API or pushing a commit that changes it onto a base
branch — in a repo that has any hold (spec ``on_tamper``, default ``block-if-any-held``), with a reason that
names the act and says a person must do it; the same acts go through where nothing is held, and harmless
look-alikes always do. Verdicts in a real Redis, pushes against a real git checkout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.hook_support import git_checkout, hold, payload, record, run_guard, store, write_spec

HELD, QUIET = "acme/widgets", "acme/quiet"
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture()
def world(redis_client: redis.Redis, redis_url: str, tmp_path: Path) -> dict[str, Any]:
    """acme/widgets: #5 held (base main); acme/quiet: managed, nothing held. The checkout is acme/widgets."""
    store(redis_client, HELD, 5, record(HELD, 5, [hold("comment", "alice", "waiting for the migration")]))
    store(redis_client, QUIET, 9, record(QUIET, 9, []))
    checkout = git_checkout(tmp_path / "widgets", branch="main")
    return {"redis": redis_client, "url": redis_url, "tmp": tmp_path, "cwd": str(checkout)}


def guard(world: dict[str, Any], command: str, **spec: Any) -> subprocess.CompletedProcess[str]:
    return run_guard(write_spec(world["tmp"], world["url"], **spec), payload(command, cwd=world["cwd"]))


ACTS = [
    ("gh api -X POST repos/{repo}/statuses/" + SHA + " -f state=success -f context=merge-hold", "merge-hold status"),
    ("curl -X POST -H 'Authorization: token t' https://api.github.com/repos/{repo}/statuses/" + SHA
     + " -d '{\"state\":\"success\",\"context\":\"merge-hold\"}'", "merge-hold status"),
    ("gh api repos/{repo}/check-runs -f name=merge-hold -f head_sha=" + SHA + " -f conclusion=success",
     "merge-hold check run"),
    ("gh api -X DELETE repos/{repo}/branches/main/protection", "Delete branch protection"),
    ("gh api --method DELETE repos/{repo}/branches/main/protection/required_status_checks",
     "Remove status check protection"),
    ("gh api -X DELETE repos/{repo}/branches/main/protection/required_status_checks/contexts "
     "-f 'contexts[]=merge-hold'", "Remove status check contexts"),
    ("gh api -X PUT repos/{repo}/rulesets/42 -f enforcement=disabled", "Update a repository ruleset"),
    ("gh api --method=DELETE repos/{repo}/rulesets/42", "Delete a repository ruleset"),
    ("gh api -X PUT repos/{repo}/contents/.github/merge-hold.yml -f message=x -f content=eA==",
     ".github/merge-hold.yml"),
    ("gh api -X DELETE repos/{repo}/contents/.github/merge-hold.yml -f message=x -f sha=abc",
     ".github/merge-hold.yml"),
    ("http PATCH https://api.github.com/repos/{repo} archived:=true", "Update a repository"),
    # gh's own commands for the same acts (hook/detect/ghadmin.py): the hold label goes (or is renamed) on every
    # PR at once; the default branch, the repository itself, its name
    ("gh label delete do-not-merge/hold --yes -R {repo}", "Delete a label"),
    ("GH_REPO={repo} gh label edit do-not-merge/hold --name waiting", "Update a label (rename to waiting)"),
    ("gh -R {repo} label delete Do-Not-Merge/Hold --yes", "Delete a label"),
    ("gh repo edit {repo} --default-branch develop", "Update a repository (--default-branch develop)"),
    ("gh repo edit {repo} --description x --enable-auto-merge", "Update a repository (--enable-auto-merge)"),
    ("gh repo delete {repo} --yes", "Delete a repository"),
    ("gh repo archive {repo} -y", "Archive a repository"),
    ("gh repo rename widgets2 -R {repo} --yes", "Rename a repository"),
]


@pytest.mark.parametrize(("command", "act"), ACTS, ids=[a for _, a in ACTS])
def test_an_act_that_weakens_the_gate_is_blocked_where_something_is_held(world: dict[str, Any], command: str,
                                                                         act: str) -> None:
    done = guard(world, command.replace("{repo}", HELD))
    assert done.returncode == 2, done.stderr
    assert act.lower() in done.stderr.lower() and "person" in done.stderr and "#5" in done.stderr, done.stderr
    quiet = guard(world, command.replace("{repo}", QUIET))
    assert quiet.returncode == 0, quiet.stderr  # nothing held there: nothing to protect


@pytest.mark.parametrize("command", [
    "gh api -X PATCH /app/installations/42/suspended",  # not a write GitHub has (PUT suspends)
    "gh api repos/acme/widgets/branches/main/protection",  # reading protection
    "gh api repos/acme/widgets/commits/" + SHA + "/statuses",  # reading statuses
    "gh api -X POST repos/acme/widgets/statuses/" + SHA + " -f state=success -f context=ci/build-x",
    "gh api -X PUT repos/acme/widgets/contents/README.md -f message=x -f content=eA==",
    "gh api -X PATCH repos/acme/widgets -f description=widgets",
    "gh api -X POST repos/acme/widgets/issues -f title='merge-hold: protect main'",
    # gh's own commands that change nothing the gate relies on, and text that only names them
    "gh label delete bug --yes", "gh label edit do-not-merge/hold --color ff0000 -d 'held'", "gh label list",
    "gh label create foo", "gh label create do-not-merge/hold", "gh repo view", "gh repo clone acme/widgets",
    "gh repo edit acme/widgets --description x --add-topic y", "gh repo edit --help", "gh repo delete --help",
    "gh repo unarchive acme/widgets --yes", "echo 'gh repo delete acme/widgets --yes'",
    "git commit -m 'gh label delete do-not-merge/hold'", "grep -rn 'gh repo archive' docs",
])
def test_look_alikes_go_through(world: dict[str, Any], command: str) -> None:
    done = guard(world, command)
    if "ci/build-x" in command:  # any commit status is a gate row: blocked where something is held
        assert done.returncode == 2 and "commit status (ci/build-x)" in done.stderr, done.stderr
    else:
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", [
    "gh api -X PUT /app/installations/42/suspended",
    "gh api -X DELETE /app/installations/42",
    "gh api -X DELETE /user/installations/42/repositories/7",
    "gh api -X DELETE orgs/acme/rulesets/3",
    "gh api graphql -f query='mutation { deleteBranchProtectionRule(input: {branchProtectionRuleId: \"B\"}) "
    "{ clientMutationId } }'",
])
def test_an_act_whose_repository_is_not_in_the_text_is_on_unknown(world: dict[str, Any], command: str) -> None:
    assert guard(world, command).returncode == 2
    assert guard(world, command, on_unknown="allow").returncode == 0


@pytest.mark.parametrize(("on_tamper", "held", "quiet"), [("block-if-any-held", 2, 0), ("block", 2, 2),
                                                          ("allow", 0, 0)])
def test_on_tamper(world: dict[str, Any], on_tamper: str, held: int, quiet: int) -> None:
    command = "gh api -X DELETE repos/{repo}/branches/main/protection"
    assert guard(world, command.replace("{repo}", HELD), on_tamper=on_tamper).returncode == held
    assert guard(world, command.replace("{repo}", QUIET), on_tamper=on_tamper).returncode == quiet


def test_an_unknown_on_tamper_value_fails_safe_like_every_spec_key(world: dict[str, Any]) -> None:
    done = guard(world, "gh api -X DELETE repos/acme/widgets/branches/main/protection", on_tamper="sometimes")
    assert done.returncode == 1 and "on_tamper must be one of" in done.stderr, done.stderr


def _commit(checkout: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(text)
    quiet = {"check": True, "capture_output": True}
    subprocess.run(["git", "-C", str(checkout), "add", "-A"], **quiet)  # type: ignore[call-overload]
    subprocess.run(["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm",
                    message], **quiet)  # type: ignore[call-overload]


def test_pushing_a_change_to_the_config_onto_a_base_branch_is_blocked(world: dict[str, Any]) -> None:
    checkout = Path(world["cwd"])
    _commit(checkout, {"README.md": "x\n"}, "one")
    subprocess.run(["git", "-C", str(checkout), "update-ref", "refs/remotes/origin/main", "HEAD"], check=True)
    _commit(checkout, {"src/app.py": "print(1)\n"}, "code")
    assert guard(world, "git push origin HEAD:main").returncode == 0  # no config change in what it sends
    _commit(checkout, {".github/merge-hold.yml": "review_holds: false\n"}, "relax the gate")
    done = guard(world, "git push origin HEAD:main")
    assert done.returncode == 2 and ".github/merge-hold.yml" in done.stderr and "person" in done.stderr, done.stderr
    assert guard(world, "git push origin HEAD:feature/relax").returncode == 0  # a branch no PR is based on
    assert guard(world, "git push origin HEAD:main", on_tamper="allow").returncode == 0


def test_explain_reports_tampers_beside_merges_and_lifts(world: dict[str, Any]) -> None:
    data = payload("gh api -X DELETE repos/acme/widgets/branches/main/protection && gh pr merge 5 && "
                   "gh pr edit 5 --remove-label do-not-merge/hold", cwd=world["cwd"])
    done = subprocess.run([sys.executable, "-m", "merge_hold.cli", "hook", "explain"], input=json.dumps(data),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["tampers"] == [{"via": "gh_api_rest", "repo": HELD, "act": "Delete branch protection (branch main)"}]
    assert [m["pr"] for m in out["merges"]] == [5] and [m["pr"] for m in out["lifts"]] == [5]


@pytest.mark.parametrize(("tool_input", "code"), [
    ({"owner": "acme", "repo": "widgets", "path": ".github/merge-hold.yml", "content": "x", "branch": "main"}, 2),
    ({"owner": "acme", "repo": "widgets", "path": "README.md", "content": "x", "branch": "main"}, 0),
    ({"owner": "acme", "repo": "quiet", "path": ".github/merge-hold.yml", "content": "x"}, 0),
])
def test_mcp_file_writes_of_the_config(world: dict[str, Any], tool_input: dict[str, Any], code: int) -> None:
    data = payload(json.dumps(tool_input), cwd=world["cwd"], tool_name="mcp__github__create_or_update_file")
    done = run_guard(write_spec(world["tmp"], world["url"]), data)
    assert done.returncode == code, done.stderr
    files = {"owner": "acme", "repo": "widgets", "branch": "main",
             "files": [{"path": "src/a.py", "content": "x"}, {"path": ".github/merge-hold.yml", "content": "y"}]}
    pushed = run_guard(write_spec(world["tmp"], world["url"]),
                       payload(json.dumps(files), cwd=world["cwd"], tool_name="mcp__github__push_files"))
    assert pushed.returncode == 2, pushed.stderr
