"""What a REST request to GitHub means to the guard, shared by ``gh api``, curl, wget, httpie and program
code: the operation it is (hook/detect/writeops.py, from GitHub's own description), then

- a ``merge`` operation is a merge: ``PUT …/pulls/N/merge`` and ``…/merge-async`` (GitHub's recommended
  path; on a stacked PR it merges every PR below), ``POST …/merges``, ``POST …/merge-upstream``, creating
  or moving a branch ref — with the repo, PR or branch the path and body show;
- a ``gate`` operation is a lift of a hold (a comment or review that may carry ``/unhold``, labels, a
  dismissal: hook/detect/lift.py, judged per PR) or an act that weakens the gate (hook/detect/gate.py:
  forging ``merge-hold``, branch protection, rulesets, the App's installation, ``.github/merge-hold.yml``…);
- anything else (``GET``, ``update-branch`` aside, the fixture's ``other``) lands nothing.

A request whose method or path the text does not fully show may be any operation it fits: if one of them
merges, it is an undetermined merge; else if one weakens the gate, an undetermined act.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.detect.writeops import MERGE, Match, operations
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.syntax import Word

_BY_ID = DYN + "id"
"""The owner and the name of a repository addressed by its id: unknown (`repo_of` says None), yet one segment
each (a wholly computed segment may stand for two)."""
_ROOTS = (["repos"], ["repositories"], ["agents"], ["app"], ["orgs"], ["user"])
LIFTS = frozenset({
    "issues/create-comment", "issues/update-comment", "issues/delete-comment", "pulls/create-review",
    "pulls/update-review", "pulls/dismiss-review", "pulls/submit-review", "issues/remove-all-labels",
    "issues/add-labels", "issues/set-labels", "issues/remove-label", "issues/update", "pulls/create-review-comment",
    "pulls/create-reply-for-review-comment", "pulls/update-review-comment", "pulls/delete-review-comment",
    "pulls/update", "pulls/update-branch", "issues/approve-suggestion",
})
"""Gate operations on one PR (or its comments) that lift a hold, judged per PR (hook/detect/lift.py)."""
CLICKS = frozenset({"checks/rerequest-run", "checks/rerequest-suite"})
"""A check run (or suite) asked again: the API's nearest to a button on the Checks tab. An agent's attempt
to click one of merge-hold's (*Lift my hold*, *Request exemption*) is a lift, like its ``/unhold``."""
AGENT_MERGE = "agent-merge/put-agent-merge-enrollment"
"""Enrolls a PR in Agent Merge (API version 2026-03-10): GitHub's agent merges it once its checks pass."""


def rest(ctx: Ctx, via: str, method: str, host: str | None, segments: list[str],
         body: dict[str, str] | None, sha_word: Word | None = None) -> None:
    """A REST request: the merges, lifts and gate acts it performs, if any. ``body``: its JSON fields (None
    when not readable)."""
    if segments[:1] not in _ROOTS:
        start = next((k for k, s in enumerate(segments) if s in ("repos", "repositories")), None)
        if start is not None:  # "$API/repos/…": a computed base URL
            start -= 1 if start and segments[start - 1] == "agents" else 0
            segments = segments[start:]
    by_id = segments[:1] == ["repositories"] and len(segments) > 1
    if by_id:  # /repositories/{id}/…: the same operations, the repository not in the text (writeops.ALIASES)
        segments = ["repos", _BY_ID, _BY_ID, *segments[2:]]
    matches = operations(method, segments)
    if not matches and segments and segments[0].strip(DYN) == "" and len(segments) > 1:
        matches = _tails(method, segments)  # "$PR_URL/merge": the path's start is the run's
    if not matches:
        return
    before = len(ctx.merges)
    if not matches[0].sure:
        _maybe(ctx, via, host, matches, body)
    else:
        for match in matches:
            _sure(ctx, via, host, match, body, sha_word)
    if by_id and len(ctx.merges) > before:
        # which repository is the run's: each act is judged as one on an unknown repository, and as one on the
        # current directory's (where an agent's id most likely points)
        why = "a repository addressed by its id: the text does not say which"
        found = [m.replace(undetermined=True, detail=m.detail or why) for m in ctx.merges[before:]]
        ctx.merges[before:] = found
        here = ctx.repo() if ctx.cwd is not None else None
        if here is not None:
            for merge in found:
                ctx.add(merge.replace(repo=here[1], host=here[0]))


def _tails(method: str, segments: list[str]) -> list[Match]:
    """Operations whose path ends like ``segments`` after a wholly computed start: none is sure."""
    from hook.detect.writeops import OPERATIONS

    found = []
    for row in OPERATIONS:
        tail = row[2].strip("/").split("/")[-(len(segments) - 1) :]
        if len(tail) == len(segments) - 1 and (row[1] == method or DYN in method) and all(
                t.startswith("{") or t == s or DYN in s for t, s in zip(tail, segments[1:], strict=True)):
            found.append(Match(row, False, {}))
    return found


def clicks(opid: str, body: dict[str, str] | None) -> bool:
    """Whether the request "clicks" a check run's button: a rerequest, or a check run written with a
    ``requested_action`` (GitHub takes none: requested actions are clicked in its UI only)."""
    if opid in CLICKS:
        return True
    return opid in ("checks/create", "checks/update") and body is not None and any(
        "requested_action" in key.replace("-", "_").lower() for key in body)


def repo_of(values: dict[str, str]) -> str | None:
    owner, name = values.get("owner"), values.get("repo")
    if owner is None or name is None or DYN in owner + name:
        return None
    return f"{owner}/{name}"


def number(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and len(text) <= 9 else None


def _sure(ctx: Ctx, via: str, host: str | None, match: Match, body: dict[str, str] | None,
          sha_word: Word | None) -> None:
    repo = repo_of(match.values)
    from hook.detect.branchwrite import rest_write

    rest_write(ctx, via, host, repo, match, body)  # a commit onto a branch: checked against its freezes
    if match.what == MERGE:
        _merge(ctx, via, host, repo, match, body, sha_word)
    elif match.opid in LIFTS:
        from hook.detect.lift import rest_lift

        rest_lift(ctx, via, match.opid, host, repo, match.values, body)
    elif clicks(match.opid, body):
        ctx.add(Merge(via=via, repo=repo, host=host, lift="click", undetermined=True,
                      detail="a check run's id does not name its PR"))
    else:
        from hook.detect.gate import rest_gate

        rest_gate(ctx, via, host, repo, match, body)


def _merge(ctx: Ctx, via: str, host: str | None, repo: str | None, match: Match, body: dict[str, str] | None,
           sha_word: Word | None) -> None:
    opid, values, fields = match.opid, match.values, body or {}
    if opid in ("pulls/merge", "pulls/merge-async", AGENT_MERGE):
        pr = number(values.get("pull_number"))
        why = "PR number computed at run time" if pr is None else ""
        if opid == "pulls/merge-async":
            why = why or "merge-async: merges in the background (on a stack, every PR below it too)"
        elif opid == AGENT_MERGE:
            why = why or "Agent Merge: GitHub's agent merges the PR once its checks pass"
        ctx.add(Merge(via=via, repo=repo, host=host, pr=pr, undetermined=pr is None or repo is None,
                      detail=why if pr is None else ""))
    elif opid == "git/update-ref":
        ref = values.get("ref", "")
        if DYN not in ref and not ref.startswith("heads/"):
            return  # a tag (`tags/v1`) lands no pull request
        base = ref.removeprefix("heads/")
        pr = pr_from_head_sha(sha_word)
        ctx.add(Merge(via=via, repo=repo, host=host, pr=pr, push_target=None if DYN in base else base,
                      undetermined=pr is None or repo is None or DYN in base,
                      detail="moves a branch; a PR whose head it reaches is marked merged"))
    elif opid == "repos/merge":
        head, into = fields.get("head"), fields.get("base")
        known = head is not None and into is not None and DYN not in head + into
        ctx.add(Merge(via=via, repo=repo, host=host, branch=head if known else None,
                      push_target=into if known else None, undetermined=not known or repo is None,
                      detail="merges a branch into a base branch"))
    else:  # git/create-ref, repos/merge-upstream: a branch gets commits the text does not name
        named = fields.get("branch") if opid == "repos/merge-upstream" else fields.get("ref", "")
        target = (named or "").removeprefix("refs/heads/") or None
        ctx.add(Merge(via=via, repo=repo, host=host, push_target=None if target is None or DYN in target else target,
                      undetermined=True, detail=f"{match.summary}: lands commits the text does not name"))


def _maybe(ctx: Ctx, via: str, host: str | None, matches: list[Match], body: dict[str, str] | None) -> None:
    """A request that may be one of ``matches`` (its method or a path segment is the run's)."""
    merges = [m for m in matches if m.what == MERGE]
    if merges:
        values = merges[0].values
        pr = number(values.get("pull_number")) if all(m.opid.startswith("pulls/merge") or m.opid == AGENT_MERGE
                                                        for m in merges) else None
        ctx.add(Merge(via=via, repo=repo_of(values), host=host, pr=pr, undetermined=True,
                      detail=f"may be {merges[0].summary.lower()} (the request is computed at run time)"))
        return
    acts = [m for m in matches if m.opid not in LIFTS]
    if acts:
        ctx.add(Merge(via=via, repo=repo_of(acts[0].values), host=host, undetermined=True,
                      tamper=f"{acts[0].summary} (maybe: the request is computed at run time)"))
        return
    text = None if body is None else body.get("body", "")
    if text is None or DYN in text or "/unhold" in text or "hold cancel" in text or "/remove-hold" in text:
        ctx.add(Merge(via=via, repo=repo_of(matches[0].values), host=host, lift="comment?", undetermined=True,
                      detail="a comment, review or label change on a PR the text does not name"))


def pr_from_head_sha(word: Word | None) -> int | None:
    """``sha=$(gh pr view 5 --json headRefOid ...)`` names PR 5."""
    from hook.shell.syntax import Command

    if word is None:
        return None
    for part in word.parts:
        for event in part.inner or []:
            if not isinstance(event, Command):
                continue
            texts = [w.literal() for w in event.words]
            if texts[:3] == ["gh", "pr", "view"] and any("headRefOid" in (t or "") for t in texts):
                for text in texts[3:]:
                    digits = (text or "").lstrip("#")
                    if digits.isdigit():
                        return int(digits)
    return None
