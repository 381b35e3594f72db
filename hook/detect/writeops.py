"""GitHub's REST write operations that can merge a pull request or weaken a merge gate, from GitHub's own
description (`tests/fixtures/github/write-operations.tsv`: the OpenAPI description of api.github.com,
MIT-licensed, each operation classed ``merge``, ``gate`` or ``other``), and which of them a request is.

The hook cannot read the fixture at run time, so its ``merge`` and ``gate`` rows are kept here as literals
(``~`` stands for ``/repos/{owner}/{repo}``); tests/test_hook_writeops.py pins them to the fixture row for
row and walks the whole file through every client the guard reads. What each row means to the guard is
hook/detect/rest.py's; any operation not listed (the fixture's ``other``, and every ``GET``) lands nothing
and weakens nothing.

A request is matched against the paths with ``{variable}`` segments (``{path}``, ``{ref}``, ``{branch}`` and
``{name}`` may span slashes); a segment only the run knows (``$PR``, ``"$REPO"``) matches a variable, and
*may* match a literal — such a match is not sure, and what it may be is undetermined.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

MERGE, GATE = "merge", "gate"

# (class, method, path, operationId, summary): the fixture's merge and gate rows, in its order
OPERATIONS: tuple[tuple[str, str, str, str, str], ...] = (
    ("gate", "DELETE", "/app/installations/{installation_id}", "apps/delete-installation",
     "Delete an installation for the authenticated app"),
    ("gate", "POST", "/app/installations/{installation_id}/access_tokens", "apps/create-installation-access-token",
     "Create an installation access token for an app"),
    ("gate", "PUT", "/app/installations/{installation_id}/suspended", "apps/suspend-installation",
     "Suspend an app installation"),
    ("gate", "PATCH", "/orgs/{org}/properties/schema",
     "orgs/custom-properties-for-repos-create-or-update-organization-definitions",
     "Create or update custom properties for an organization"),
    ("gate", "DELETE", "/orgs/{org}/properties/schema/{custom_property_name}",
     "orgs/custom-properties-for-repos-delete-organization-definition", "Remove a custom property for an organization"),
    ("gate", "PUT", "/orgs/{org}/properties/schema/{custom_property_name}",
     "orgs/custom-properties-for-repos-create-or-update-organization-definition",
     "Create or update a custom property for an organization"),
    ("gate", "PATCH", "/orgs/{org}/properties/values",
     "orgs/custom-properties-for-repos-create-or-update-organization-values",
     "Create or update custom property values for organization repositories"),
    ("gate", "POST", "/orgs/{org}/rulesets", "repos/create-org-ruleset", "Create an organization repository ruleset"),
    ("gate", "DELETE", "/orgs/{org}/rulesets/{ruleset_id}", "repos/delete-org-ruleset",
     "Delete an organization repository ruleset"),
    ("gate", "PUT", "/orgs/{org}/rulesets/{ruleset_id}", "repos/update-org-ruleset",
     "Update an organization repository ruleset"),
    ("gate", "DELETE", "~", "repos/delete", "Delete a repository"),
    ("gate", "PATCH", "~", "repos/update", "Update a repository"),
    ("gate", "POST", "~/actions/jobs/{job_id}/rerun", "actions/re-run-job-for-workflow-run",
     "Re-run a job from a workflow run"),
    ("gate", "PUT", "~/actions/permissions", "actions/set-github-actions-permissions-repository",
     "Set GitHub Actions permissions for a repository"),
    ("gate", "PUT", "~/actions/permissions/fork-pr-contributor-approval",
     "actions/set-fork-pr-contributor-approval-permissions-repository",
     "Set fork PR contributor approval permissions for a repository"),
    ("gate", "PUT", "~/actions/permissions/fork-pr-workflows-private-repos",
     "actions/set-private-repo-fork-pr-workflows-settings-repository",
     "Set private repo fork PR workflow settings for a repository"),
    ("gate", "PUT", "~/actions/permissions/workflow",
     "actions/set-github-actions-default-workflow-permissions-repository",
     "Set default workflow permissions for a repository"),
    ("gate", "POST", "~/actions/runners/generate-jitconfig", "actions/generate-runner-jitconfig-for-repo",
     "Create configuration for a just-in-time runner for a repository"),
    ("gate", "POST", "~/actions/runners/registration-token", "actions/create-registration-token-for-repo",
     "Create a registration token for a repository"),
    ("gate", "POST", "~/actions/runners/{runner_id}/labels", "actions/add-custom-labels-to-self-hosted-runner-for-repo",
     "Add custom labels to a self-hosted runner for a repository"),
    ("gate", "PUT", "~/actions/runners/{runner_id}/labels", "actions/set-custom-labels-for-self-hosted-runner-for-repo",
     "Set custom labels for a self-hosted runner for a repository"),
    ("gate", "POST", "~/actions/runs/{run_id}/approve", "actions/approve-workflow-run",
     "Approve a workflow run for a fork pull request"),
    ("gate", "POST", "~/actions/runs/{run_id}/deployment_protection_rule", "actions/review-custom-gates-for-run",
     "Review custom deployment protection rules for a workflow run"),
    ("gate", "POST", "~/actions/runs/{run_id}/pending_deployments", "actions/review-pending-deployments-for-run",
     "Review pending deployments for a workflow run"),
    ("gate", "POST", "~/actions/runs/{run_id}/rerun", "actions/re-run-workflow", "Re-run a workflow"),
    ("gate", "POST", "~/actions/runs/{run_id}/rerun-failed-jobs", "actions/re-run-workflow-failed-jobs",
     "Re-run failed jobs from a workflow run"),
    ("gate", "PUT", "~/actions/workflows/{workflow_id}/disable", "actions/disable-workflow", "Disable a workflow"),
    ("gate", "DELETE", "~/branches/{branch}/protection", "repos/delete-branch-protection", "Delete branch protection"),
    ("gate", "PUT", "~/branches/{branch}/protection", "repos/update-branch-protection", "Update branch protection"),
    ("gate", "DELETE", "~/branches/{branch}/protection/enforce_admins", "repos/delete-admin-branch-protection",
     "Delete admin branch protection"),
    ("gate", "POST", "~/branches/{branch}/protection/enforce_admins", "repos/set-admin-branch-protection",
     "Set admin branch protection"),
    ("gate", "DELETE", "~/branches/{branch}/protection/required_pull_request_reviews",
     "repos/delete-pull-request-review-protection", "Delete pull request review protection"),
    ("gate", "PATCH", "~/branches/{branch}/protection/required_pull_request_reviews",
     "repos/update-pull-request-review-protection", "Update pull request review protection"),
    ("gate", "DELETE", "~/branches/{branch}/protection/required_signatures", "repos/delete-commit-signature-protection",
     "Delete commit signature protection"),
    ("gate", "POST", "~/branches/{branch}/protection/required_signatures", "repos/create-commit-signature-protection",
     "Create commit signature protection"),
    ("gate", "DELETE", "~/branches/{branch}/protection/required_status_checks", "repos/remove-status-check-protection",
     "Remove status check protection"),
    ("gate", "PATCH", "~/branches/{branch}/protection/required_status_checks", "repos/update-status-check-protection",
     "Update status check protection"),
    ("gate", "DELETE", "~/branches/{branch}/protection/required_status_checks/contexts",
     "repos/remove-status-check-contexts", "Remove status check contexts"),
    ("gate", "POST", "~/branches/{branch}/protection/required_status_checks/contexts",
     "repos/add-status-check-contexts", "Add status check contexts"),
    ("gate", "PUT", "~/branches/{branch}/protection/required_status_checks/contexts", "repos/set-status-check-contexts",
     "Set status check contexts"),
    ("gate", "DELETE", "~/branches/{branch}/protection/restrictions", "repos/delete-access-restrictions",
     "Delete access restrictions"),
    ("gate", "DELETE", "~/branches/{branch}/protection/restrictions/apps", "repos/remove-app-access-restrictions",
     "Remove app access restrictions"),
    ("gate", "POST", "~/branches/{branch}/protection/restrictions/apps", "repos/add-app-access-restrictions",
     "Add app access restrictions"),
    ("gate", "PUT", "~/branches/{branch}/protection/restrictions/apps", "repos/set-app-access-restrictions",
     "Set app access restrictions"),
    ("gate", "DELETE", "~/branches/{branch}/protection/restrictions/teams", "repos/remove-team-access-restrictions",
     "Remove team access restrictions"),
    ("gate", "POST", "~/branches/{branch}/protection/restrictions/teams", "repos/add-team-access-restrictions",
     "Add team access restrictions"),
    ("gate", "PUT", "~/branches/{branch}/protection/restrictions/teams", "repos/set-team-access-restrictions",
     "Set team access restrictions"),
    ("gate", "DELETE", "~/branches/{branch}/protection/restrictions/users", "repos/remove-user-access-restrictions",
     "Remove user access restrictions"),
    ("gate", "POST", "~/branches/{branch}/protection/restrictions/users", "repos/add-user-access-restrictions",
     "Add user access restrictions"),
    ("gate", "PUT", "~/branches/{branch}/protection/restrictions/users", "repos/set-user-access-restrictions",
     "Set user access restrictions"),
    ("gate", "POST", "~/branches/{branch}/rename", "repos/rename-branch", "Rename a branch"),
    ("gate", "POST", "~/check-runs", "checks/create", "Create a check run"),
    ("gate", "PATCH", "~/check-runs/{check_run_id}", "checks/update", "Update a check run"),
    ("gate", "POST", "~/check-runs/{check_run_id}/rerequest", "checks/rerequest-run", "Rerequest a check run"),
    ("gate", "POST", "~/check-suites", "checks/create-suite", "Create a check suite"),
    ("gate", "PATCH", "~/check-suites/preferences", "checks/set-suites-preferences",
     "Update repository preferences for check suites"),
    ("gate", "POST", "~/check-suites/{check_suite_id}/rerequest", "checks/rerequest-suite", "Rerequest a check suite"),
    ("gate", "PATCH", "~/code-quality/setup", "code-quality/update-setup", "Update a code quality setup configuration"),
    ("gate", "PATCH", "~/code-scanning/ai-scan", "code-scanning/update-ai-scan-enablement",
     "Update AI Scan enablement for a repository"),
    ("gate", "PATCH", "~/code-scanning/alerts/{alert_number}", "code-scanning/update-alert",
     "Update a code scanning alert"),
    ("gate", "POST", "~/code-scanning/alerts/{alert_number}/autofix/commits", "code-scanning/commit-autofix",
     "Commit an autofix for a code scanning alert"),
    ("gate", "DELETE", "~/code-scanning/analyses/{analysis_id}", "code-scanning/delete-analysis",
     "Delete a code scanning analysis from a repository"),
    ("gate", "PATCH", "~/code-scanning/default-setup", "code-scanning/update-default-setup",
     "Update a code scanning default setup configuration"),
    ("gate", "POST", "~/code-scanning/sarifs", "code-scanning/upload-sarif", "Upload an analysis as SARIF data"),
    ("gate", "PUT", "~/collaborators/{username}", "repos/add-collaborator", "Add a repository collaborator"),
    ("gate", "DELETE", "~/contents/{path}", "repos/delete-file", "Delete a file"),
    ("gate", "PUT", "~/contents/{path}", "repos/create-or-update-file-contents", "Create or update file contents"),
    ("gate", "POST", "~/deployments", "repos/create-deployment", "Create a deployment"),
    ("gate", "DELETE", "~/deployments/{deployment_id}", "repos/delete-deployment", "Delete a deployment"),
    ("gate", "POST", "~/deployments/{deployment_id}/statuses", "repos/create-deployment-status",
     "Create a deployment status"),
    ("gate", "DELETE", "~/environments/{environment_name}", "repos/delete-an-environment", "Delete an environment"),
    ("gate", "PUT", "~/environments/{environment_name}", "repos/create-or-update-environment",
     "Create or update an environment"),
    ("gate", "POST", "~/environments/{environment_name}/deployment-branch-policies",
     "repos/create-deployment-branch-policy", "Create a deployment branch policy"),
    ("gate", "DELETE", "~/environments/{environment_name}/deployment-branch-policies/{branch_policy_id}",
     "repos/delete-deployment-branch-policy", "Delete a deployment branch policy"),
    ("gate", "PUT", "~/environments/{environment_name}/deployment-branch-policies/{branch_policy_id}",
     "repos/update-deployment-branch-policy", "Update a deployment branch policy"),
    ("gate", "POST", "~/environments/{environment_name}/deployment_protection_rules",
     "repos/create-deployment-protection-rule", "Create a custom deployment protection rule on an environment"),
    ("gate", "DELETE", "~/environments/{environment_name}/deployment_protection_rules/{protection_rule_id}",
     "repos/disable-deployment-protection-rule", "Disable a custom protection rule for an environment"),
    ("gate", "POST", "~/hooks", "repos/create-webhook", "Create a repository webhook"),
    ("gate", "DELETE", "~/hooks/{hook_id}", "repos/delete-webhook", "Delete a repository webhook"),
    ("gate", "PATCH", "~/hooks/{hook_id}", "repos/update-webhook", "Update a repository webhook"),
    ("gate", "PATCH", "~/hooks/{hook_id}/config", "repos/update-webhook-config-for-repo",
     "Update a webhook configuration for a repository"),
    ("gate", "POST", "~/hooks/{hook_id}/deliveries/{delivery_id}/attempts", "repos/redeliver-webhook-delivery",
     "Redeliver a delivery for a repository webhook"),
    ("gate", "PUT", "~/interaction-limits", "interactions/set-restrictions-for-repo",
     "Set interaction restrictions for a repository"),
    ("gate", "PATCH", "~/invitations/{invitation_id}", "repos/update-invitation", "Update a repository invitation"),
    ("gate", "DELETE", "~/issues/comments/{comment_id}", "issues/delete-comment", "Delete an issue comment"),
    ("gate", "PATCH", "~/issues/comments/{comment_id}", "issues/update-comment", "Update an issue comment"),
    ("gate", "PATCH", "~/issues/{issue_number}", "issues/update", "Update an issue"),
    ("gate", "POST", "~/issues/{issue_number}/comments", "issues/create-comment", "Create an issue comment"),
    ("gate", "DELETE", "~/issues/{issue_number}/labels", "issues/remove-all-labels", "Remove all labels from an issue"),
    ("gate", "POST", "~/issues/{issue_number}/labels", "issues/add-labels", "Add labels to an issue"),
    ("gate", "PUT", "~/issues/{issue_number}/labels", "issues/set-labels", "Set labels for an issue"),
    ("gate", "DELETE", "~/issues/{issue_number}/labels/{name}", "issues/remove-label", "Remove a label from an issue"),
    ("gate", "PUT", "~/issues/{issue_number}/lock", "issues/lock", "Lock an issue"),
    ("gate", "POST", "~/issues/{issue_number}/suggestions/{suggestion_id}/approve", "issues/approve-suggestion",
     "Approve an issue suggestion"),
    ("gate", "POST", "~/keys", "repos/create-deploy-key", "Create a deploy key"),
    ("gate", "DELETE", "~/labels/{name}", "issues/delete-label", "Delete a label"),
    ("gate", "PATCH", "~/labels/{name}", "issues/update-label", "Update a label"),
    ("gate", "PATCH", "~/properties/values", "repos/custom-properties-for-repos-create-or-update-repository-values",
     "Create or update custom property values for a repository"),
    ("gate", "DELETE", "~/pulls/comments/{comment_id}", "pulls/delete-review-comment",
     "Delete a review comment for a pull request"),
    ("gate", "PATCH", "~/pulls/comments/{comment_id}", "pulls/update-review-comment",
     "Update a review comment for a pull request"),
    ("gate", "PATCH", "~/pulls/{pull_number}", "pulls/update", "Update a pull request"),
    ("gate", "POST", "~/pulls/{pull_number}/comments", "pulls/create-review-comment",
     "Create a review comment for a pull request"),
    ("gate", "POST", "~/pulls/{pull_number}/comments/{comment_id}/replies", "pulls/create-reply-for-review-comment",
     "Create a reply for a review comment"),
    ("gate", "POST", "~/pulls/{pull_number}/reviews", "pulls/create-review", "Create a review for a pull request"),
    ("gate", "PUT", "~/pulls/{pull_number}/reviews/{review_id}", "pulls/update-review",
     "Update a review for a pull request"),
    ("gate", "PUT", "~/pulls/{pull_number}/reviews/{review_id}/dismissals", "pulls/dismiss-review",
     "Dismiss a review for a pull request"),
    ("gate", "POST", "~/pulls/{pull_number}/reviews/{review_id}/events", "pulls/submit-review",
     "Submit a review for a pull request"),
    ("gate", "PUT", "~/pulls/{pull_number}/update-branch", "pulls/update-branch", "Update a pull request branch"),
    ("gate", "POST", "~/rulesets", "repos/create-repo-ruleset", "Create a repository ruleset"),
    ("gate", "DELETE", "~/rulesets/{ruleset_id}", "repos/delete-repo-ruleset", "Delete a repository ruleset"),
    ("gate", "PUT", "~/rulesets/{ruleset_id}", "repos/update-repo-ruleset", "Update a repository ruleset"),
    ("gate", "POST", "~/secret-scanning/push-protection-bypasses", "secret-scanning/create-push-protection-bypass",
     "Create a push protection bypass"),
    ("gate", "POST", "~/stacks", "pull-request-stacks/create", "Create a pull request stack"),
    ("gate", "POST", "~/stacks/{stack_number}/add", "pull-request-stacks/add",
     "Add pull requests to a pull request stack"),
    ("gate", "POST", "~/statuses/{sha}", "repos/create-commit-status", "Create a commit status"),
    ("gate", "POST", "~/transfer", "repos/transfer", "Transfer a repository"),
    ("gate", "DELETE", "/user/installations/{installation_id}/repositories/{repository_id}",
     "apps/remove-repo-from-installation-for-authenticated-user", "Remove a repository from an app installation"),
    ("merge", "PUT", "/agents/repos/{owner}/{repo}/pulls/{pull_number}/agent-merge",
     "agent-merge/put-agent-merge-enrollment", "Update Agent Merge configuration for a pull request"),
    ("merge", "POST", "~/git/refs", "git/create-ref", "Create a reference"),
    ("merge", "PATCH", "~/git/refs/{ref}", "git/update-ref", "Update a reference"),
    ("merge", "POST", "~/merge-upstream", "repos/merge-upstream", "Sync a fork branch with the upstream repository"),
    ("merge", "POST", "~/merges", "repos/merge", "Merge a branch"),
    ("merge", "PUT", "~/pulls/{pull_number}/merge", "pulls/merge", "Merge a pull request"),
    ("merge", "PUT", "~/pulls/{pull_number}/merge-async", "pulls/merge-async", "Merge a pull request asynchronously"),
)
ALIASES: tuple[tuple[str, str], ...] = (("/repositories/{repository_id}", "/repos/{owner}/{repo}"),)
"""The fixture's ``alias`` rows: another address of every operation under the second path. A request by
repository id names no repository: `hook.detect.rest` reads it as the aliased path with the owner and the
name unknown."""
_SPANNING = frozenset({"{path}", "{ref}", "{branch}", "{name}"})
_PATTERNS = tuple(row[2].replace("~", "/repos/{owner}/{repo}", 1).strip("/").split("/") for row in OPERATIONS)


class Match:
    """A row a request may be: ``sure`` when every literal segment and the method are in the text;
    ``values`` the variables' text (``{"owner": "acme", "pull_number": "5"}``), DYN inside when computed."""

    __slots__ = ("method", "opid", "path", "summary", "sure", "values", "what")

    def __init__(self, row: tuple[str, str, str, str, str], sure: bool, values: dict[str, str]) -> None:
        self.what, self.method, self.path, self.opid, self.summary = row
        self.sure, self.values = sure, values

    def __repr__(self) -> str:
        return f"Match({self.opid!r}, sure={self.sure}, values={self.values!r})"


def operations(method: str, segments: list[str]) -> list[Match]:
    """The merge and gate operations a request to ``segments`` (the URL's path, split) with ``method`` may be:
    the sure ones when there are any, else every possible one; [] for anything else (a ``GET``, an
    operation that is neither)."""
    found: list[Match] = []
    for row, pattern in zip(OPERATIONS, _PATTERNS, strict=True):
        if row[1] != method and DYN not in method:
            continue
        fits = _fit(pattern, 0, segments, 0)
        if fits:
            exact, values = next((f for f in fits if f[0]), fits[0])
            found.append(Match(row, exact and DYN not in method, values))
    return [m for m in found if m.sure] or found


def _fit(pattern: list[str], p: int, segments: list[str], s: int) -> list[tuple[bool, dict[str, str]]]:
    """Every way ``segments[s:]`` fits ``pattern[p:]``: (sure, the variables' values)."""
    if p == len(pattern):
        return [(True, {})] if s == len(segments) else []
    if s == len(segments):
        return []
    part, text = pattern[p], segments[s]
    out: list[tuple[bool, dict[str, str]]] = []
    variable = part.startswith("{")
    if variable:
        spans = range(1, len(segments) - s + 1) if part in _SPANNING else range(1, 2)
        for n in spans:
            for sure, values in _fit(pattern, p + 1, segments, s + n):
                out.append((sure, {part[1:-1]: "/".join(segments[s : s + n]), **values}))
    elif text == part:
        out += _fit(pattern, p + 1, segments, s + 1)
    elif DYN in text:  # computed: may be this literal
        out += [(False, values) for _, values in _fit(pattern, p + 1, segments, s + 1)]
    if text.strip(DYN) == "" and p + 1 < len(pattern):  # wholly computed: may stand for two segments ($REPO)
        taken = {pattern[p][1:-1]: DYN} if variable else {}
        for sure, values in _fit(pattern, p + 2, segments, s + 1):
            both = variable and pattern[p + 1].startswith("{")
            out.append((sure and both, {**taken, pattern[p + 1][1:-1]: DYN, **values} if both else values))
    return out
