"""GitHub's GraphQL mutations, for every client that reaches ``/graphql`` (``gh api graphql``, curl, program
code): one table of what each mutation does to the gate, and a reader of the mutations a document holds.

- ``merge``: lands a pull request or commits on a branch — ``mergePullRequest``, ``enablePullRequestAutoMerge``,
  ``enqueuePullRequest`` (the merge queue), ``mergeBranch``, ``updateRef(s)``, ``createRef``,
  ``createCommitOnBranch``; their targets are node ids, so each is an undetermined merge;
- ``gate``: weakens the gate (a person's act, hook/detect/gate.py): branch protection rules and rulesets
  (create, update, delete), repository settings, check runs and suites, deployments, locks;
- ``lift``: lifts a hold on a PR named by node id (hook/detect/lift.py reads comment bodies): labels added,
  removed or replaced, a base changed, a comment deleted or hidden, a review dismissed, the branch updated;
- ``other``: known to land nothing and weaken nothing (reactions, issues, project items, review requests…).

Any other mutation whose text names a pull request, a ref, a commit, a branch, a label, a check, a status, a
protection rule or a ruleset may do either: an undetermined merge.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx

MERGE, GATE, LIFT, OTHER = "merge", "gate", "lift", "other"
MUTATIONS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("mergePullRequest", "enablePullRequestAutoMerge", "enqueuePullRequest", "mergeBranch",
                     "updateRef", "updateRefs", "createRef", "createCommitOnBranch"),
                    (MERGE, "lands a pull request or commits on a branch")),
    "createBranchProtectionRule": (GATE, "Create a branch protection rule"),
    "updateBranchProtectionRule": (GATE, "Update a branch protection rule"),
    "deleteBranchProtectionRule": (GATE, "Delete a branch protection rule"),
    "createRepositoryRuleset": (GATE, "Create a repository ruleset"),
    "updateRepositoryRuleset": (GATE, "Update a repository ruleset"),
    "deleteRepositoryRuleset": (GATE, "Delete a repository ruleset"),
    "updateRepository": (GATE, "Update a repository's settings"),
    "archiveRepository": (GATE, "Archive a repository"),
    "updateRepositoryWebCommitSignoffSetting": (GATE, "Update a repository's web commit sign-off setting"),
    "createCheckRun": (GATE, "Create a check run (it may be merge-hold)"),
    "updateCheckRun": (GATE, "Update a check run (it may be merge-hold)"),
    "createCheckSuite": (GATE, "Create a check suite"),
    # The nearest the API comes to a button on the Checks tab: merge-hold's run asked again (a click, a lift).
    "rerequestCheckSuite": (LIFT, "click"),
    "updateCheckSuitePreferences": (GATE, "Update check suite preferences"),
    "createDeployment": (GATE, "Create a deployment"),
    "createDeploymentStatus": (GATE, "Create a deployment status"),
    "deleteDeployment": (GATE, "Delete a deployment"),
    "approveDeployments": (GATE, "Approve pending deployments"),
    "rejectDeployments": (GATE, "Reject pending deployments"),
    "updateEnvironment": (GATE, "Update an environment's protection"),
    "deleteEnvironment": (GATE, "Delete an environment"),
    "lockLockable": (GATE, "Lock an issue or pull request (no one else may comment /hold)"),
    "setRepositoryInteractionLimit": (GATE, "Limit who may comment on a repository"),
    "updateTeamsRepository": (GATE, "Change teams' permissions on a repository"),
    "updateLabel": (GATE, "Rename or change a label (the hold label on every PR)"),
    "deleteLabel": (GATE, "Delete a label (the hold label on every PR)"),
    "addLabelsToLabelable": (LIFT, "label+"),
    "removeLabelsFromLabelable": (LIFT, "label:*"),
    "clearLabelsFromLabelable": (LIFT, "label:*"),
    "dismissPullRequestReview": (LIFT, "dismiss"),
    "deleteIssueComment": (LIFT, "uncomment"),
    "deletePullRequestReviewComment": (LIFT, "uncomment"),
    "minimizeComment": (LIFT, "uncomment"),
    "updatePullRequestBranch": (LIFT, "update-branch"),
    **dict.fromkeys(("addComment", "addPullRequestReview", "submitPullRequestReview", "updateIssueComment",
                     "updatePullRequestReview", "addPullRequestReviewComment", "addPullRequestReviewThread",
                     "addPullRequestReviewThreadReply", "updatePullRequestReviewComment", "updatePullRequest",
                     "updateIssue"),
                    (LIFT, "")),  # read by hook.detect.lift (a body that lifts; labels; a base)
    **dict.fromkeys(("addReaction", "removeReaction", "addStar", "removeStar", "createIssue", "closeIssue",
                     "reopenIssue", "deleteIssue", "createPullRequest", "closePullRequest", "reopenPullRequest",
                     "markPullRequestReadyForReview", "convertPullRequestToDraft", "requestReviews",
                     "requestReviewsByLogin", "disablePullRequestAutoMerge", "dequeuePullRequest",
                     "addAssigneesToAssignable", "removeAssigneesFromAssignable", "addProjectV2ItemById",
                     "addProjectV2DraftIssue", "updateProjectV2ItemFieldValue", "updateProjectV2ItemPosition",
                     "deleteProjectV2Item", "archiveProjectV2Item", "resolveReviewThread", "unresolveReviewThread",
                     "deletePullRequestReview", "createDiscussion", "updateDiscussion", "deleteDiscussion",
                     "addDiscussionComment", "updateDiscussionComment", "deleteDiscussionComment",
                     "markDiscussionCommentAsAnswer", "revertPullRequest", "createLabel", "pinIssue", "unpinIssue",
                     "transferIssue", "followUser", "unfollowUser", "updateSubscription", "markFileAsViewed",
                     "unmarkFileAsViewed", "linkRepositoryToProject", "unlinkRepositoryFromProject",
                     "createProjectV2", "updateProjectV2", "copyProjectV2", "deleteProjectV2", "createLinkedBranch",
                     "deleteLinkedBranch", "addUpvote", "removeUpvote", "changeUserStatus", "createRepository",
                     "cloneTemplateRepository", "deleteRef", "unminimizeComment", "pinIssueComment",
                     "unpinIssueComment", "unlockLockable"),
                    (OTHER, "lands nothing and weakens nothing")),
}
"""Mutation name -> (what it does to the gate, why; for ``lift`` the lift it is, as `hook.detect.model.LIFTS`)."""
_TARGETS = ("pullrequest", "ref", "commit", "branch", "label", "check", "status", "protection", "rule", "merge",
            "oid")


def graphql(ctx: Ctx, via: str, method: str, text: str | None, host: str | None = None,
            variables: str = "") -> None:
    """A request to the GraphQL endpoint: its mutations as merges, acts and lifts; a body not in the text
    may hold any mutation (undetermined)."""
    if method not in ("POST", DYN) and DYN not in method:
        return
    from hook.detect.lift import graphql_lift

    graphql_lift(ctx, via, text, host, variables)
    if text is None or (DYN in text and not merge_mutations(text)):
        # an unseen document may hold any mutation; a visible query with a computed piece does not
        if text is None or "mutation" in text or not ("query" in text or "{" in text):
            ctx.add(Merge(via=via, host=host, undetermined=True, detail="GraphQL body not visible"))
        return
    if "mutation" not in text:
        return
    text, variables = _document(text, variables)
    both = f"{text}\n{variables}"
    fields = mutations(text)
    named = [f for f, _ in fields] if fields else merge_mutations(text)  # unreadable: the merge names it shows
    if {"createCheckRun", "updateCheckRun"} & set(named) and "requestedaction" in both.lower().replace("_", ""):
        # A check run's requested action "clicked" through the API: a button of merge-hold's run is a lift.
        ctx.add(Merge(via=via, host=host, lift="click", undetermined=True, detail="a check run's node id names no PR"))
        named = [n for n in named if n not in ("createCheckRun", "updateCheckRun")]
    for name in dict.fromkeys(named):
        kind, why = MUTATIONS.get(name, ("", ""))
        if kind == MERGE:
            ctx.add(Merge(via=via, host=host, undetermined=True, detail=f"{name}: target is a node id"))
        elif kind == GATE:
            ctx.add(Merge(via=via, host=host, undetermined=True, tamper=f"{why} ({name})",
                          detail=f"{name}: its subject is a node id"))
        elif kind == LIFT and why:
            ctx.add(Merge(via=via, host=host, lift=why, undetermined=True, detail=f"{name}: its subject is a node id"))
        elif kind == LIFT and name in ("updatePullRequest", "updateIssue"):
            args = dict(fields).get(name, "").lower() + variables.lower()
            for marker, lift in (("labelids", "label:*"), ("baserefname", "base")):
                if marker in args or DYN in args:
                    ctx.add(Merge(via=via, host=host, lift=lift, undetermined=True,
                                  detail=f"{name}: its subject is a node id"))
        elif not kind:
            seen = (name + dict(fields).get(name, "")).lower()
            if any(target in seen for target in _TARGETS) or DYN in seen:
                ctx.add(Merge(via=via, host=host, undetermined=True,
                              detail=f"{name}: a mutation the guard does not know, on a pull request, ref or rule"))
    if not fields and not merge_mutations(text) and "mutation" in both.lower():
        ctx.add(Merge(via=via, host=host, undetermined=True, detail="a mutation the guard cannot read"))


def _document(text: str, variables: str) -> tuple[str, str]:
    """A JSON request body (``{"query": "mutation …", "variables": {…}}``, curl's ``-d``) -> its document and
    variables; any other text is the document itself."""
    stripped = text.lstrip()
    if not stripped.startswith("{") or '"query"' not in stripped or DYN in stripped:
        return text, variables
    import json

    try:
        data = json.loads(stripped, strict=False)
    except ValueError:
        return text, variables
    if not isinstance(data, dict) or not isinstance(data.get("query"), str):
        return text, variables
    return data["query"], f"{variables}\n{json.dumps(data.get('variables'))}"


def merge_mutations(text: str) -> list[str]:
    """Merge mutations named in a GraphQL document (``disablePullRequestAutoMerge`` is not one): found by name,
    wherever the document spells it, so a document the reader cannot parse still shows them."""
    if "mutation" not in text:
        return []
    found = []
    for name, (kind, _) in MUTATIONS.items():
        if kind != MERGE:
            continue
        at = text.find(name)
        while at >= 0:
            before = text[at - 1] if at else " "
            after = text[at + len(name) : at + len(name) + 1] or " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                found.append(name)
                break
            at = text.find(name, at + 1)
    return found


def mutations(text: str) -> list[tuple[str, str]]:
    """The top-level fields of each ``mutation`` operation in a document, with their arguments' text:
    ``mutation M($id: ID!) { a: mergePullRequest(input: {pullRequestId: $id}) { clientMutationId } }`` ->
    ``[("mergePullRequest", "input: {pullRequestId: $id}")]``. Strings and comments are skipped."""
    out: list[tuple[str, str]] = []
    i, n, depth, in_mutation, pending = 0, len(text), 0, False, False
    while i < n:
        c = text[i]
        if c == "#":
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c == "{":
            depth += 1
            if depth == 1:
                in_mutation, pending = pending, False
            i += 1
            continue
        if c == "}":
            depth = max(depth - 1, 0)
            i += 1
            continue
        if c == "(" and depth == 0:  # variable definitions
            i = _skip_parens(text, i)
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if depth == 0:
                if word == "mutation":
                    pending = True
                elif word in ("query", "subscription", "fragment"):
                    pending = False
            elif depth == 1 and in_mutation:
                k = j
                while k < n and text[k] in " \t\r\n,":
                    k += 1
                if k < n and text[k] == ":":  # an alias: the field's name follows
                    i = k + 1
                    continue
                args = ""
                if k < n and text[k] == "(":
                    end = _skip_parens(text, k)
                    args, j = text[k + 1 : end - 1], end
                out.append((word, args))
            i = j
            continue
        i += 1
    return out


def _skip_string(text: str, i: int) -> int:
    if text.startswith('"""', i):
        end = text.find('"""', i + 3)
        return len(text) if end < 0 else end + 3
    j = i + 1
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _skip_parens(text: str, i: int) -> int:
    """The index after the ``)`` matching ``text[i] == "("``, strings skipped."""
    level, j = 0, i
    while j < len(text):
        c = text[j]
        if c == '"':
            j = _skip_string(text, j)
            continue
        if c == "(":
            level += 1
        elif c == ")":
            level -= 1
            if level == 0:
                return j + 1
        j += 1
    return len(text)
