"""What the guard decides about each merge a tool call would perform, and what it tells the agent.

Pure: facts in (the detected merge, what the verdict source answered, the spec, the time), a
`Judgement` out. The rules (design §6):

- a PR on a repo merge-hold does not manage: allow, silently;
- held (at least one hold whose ``expires_at`` has not passed; the record may predate the expiry job):
  block, naming the PR, each holder and reason, how to lift each hold, and that the agent must stop and
  ask the user rather than work around it;
- free: allow;
- a managed repo's PR whose verdict is missing, stale (unknown ``schema``, ``error`` set, malformed) or
  unreachable: ``on_unknown``;
- a ``git push``: blocked when it writes new commits onto a frozen branch (`hook.freezes`), or writes the base
  branch of a held PR with a commit that contains the PR's head (`hook.pushes`); a write onto a branch through
  the API or an MCP tool: blocked when the branch is frozen;
- a lift of a hold on a held PR (label removal, ``/unhold`` comment, review dismissal): ``on_lift``
  (`hook.lifts`);
- an act that weakens the gate (forging ``merge-hold``, branch protection, rulesets, the App, the repo
  config): ``on_tamper``, by default blocked in a repo that has any hold (`hook.tampers`);
- a merge whose target the command does not reveal: ``on_undetermined``. With ``block-if-any-held`` it
  is blocked iff the repo has a held PR. When even the repository is unknown (no URL, ``-R``,
  ``GH_REPO`` or git remote), nothing can be looked up, so the case is an unknown verdict and
  ``on_unknown`` decides (default: block).
"""

from __future__ import annotations

from hook.freezes import judge_freeze
from hook.judgement import (
    MAX_HOLDS_SHOWN,
    Judgement,
    expired,
    held_message,
    hold_line,
    record_problem,
    unknown,
)
from hook.lifts import judge_lift, judge_lift_undetermined, what
from hook.pushes import judge_push
from hook.spec import Spec
from hook.tampers import judge_tamper
from hook.verdicts.sources import PrAnswer, PrQuery, RepoAnswer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hook.detect.model import Merge
    from hook.freezes import Branches, Files, Same
    from hook.pushes import Changes, Contains

class Plan:
    """The lookups a batch of merges needs: PR queries and repo queries, each merge's slot in them."""

    def __init__(self, merges: list[Merge], spec: Spec) -> None:
        self.merges = merges
        self.prs: list[PrQuery] = []
        self.repos: list[str] = []
        self.slots: list[tuple[str, int]] = []
        for merge in merges:
            kind = _lookup_kind(merge, spec)
            if kind == "pr":
                self.slots.append(("pr", len(self.prs)))
                self.prs.append(PrQuery(merge.repo or "", merge.pr, None))
            elif kind == "branch":
                self.slots.append(("pr", len(self.prs)))
                self.prs.append(PrQuery(merge.repo or "", None, merge.branch))
            elif kind == "repo":
                repo = (merge.repo or "").lower()
                if repo not in self.repos:
                    self.repos.append(repo)
                self.slots.append(("repo", self.repos.index(repo)))
            else:
                self.slots.append(("none", -1))

    @property
    def needs_lookup(self) -> bool:
        return bool(self.prs or self.repos)

    def merging(self) -> list[int]:
        """The PR queries of merges proper (not lifts): a stacked PR's merge merges the PRs below it too."""
        return [index for merge, (kind, index) in zip(self.merges, self.slots, strict=True)
                if kind == "pr" and not merge.lift and not merge.tamper]


def _lookup_kind(merge: Merge, spec: Spec) -> str:
    if merge.writes is not None:
        return "repo" if merge.repo is not None else "none"  # the repo's freezes
    if merge.tamper:
        return "repo" if spec.on_tamper == "block-if-any-held" and merge.repo is not None else "none"
    if merge.lift and spec.on_lift == "allow":
        return "none"
    if merge.repo is None:
        return "none"
    if merge.via == "git_push":
        return "repo"  # the held PRs' bases and heads, in the same one read
    if merge.lift and (merge.undetermined or (merge.pr is None and not merge.branch)):
        return "repo" if spec.on_undetermined != "allow" else "none"
    if merge.undetermined or (merge.pr is None and not merge.branch):
        return "repo" if spec.on_undetermined == "block-if-any-held" else "none"
    return "pr" if merge.pr is not None else "branch"


def judge_all(plan: Plan, spec: Spec, answers: tuple[list[PrAnswer], list[RepoAnswer]] | None,
              unreachable: str | None, now_iso: str, contains: Contains | None = None,
              changes: Changes | None = None, same: Same | None = None,
              branches: Branches | None = None, files: Files | None = None) -> list[Judgement]:
    """``answers`` is None when no lookup was needed or it failed (``unreachable`` says why).
    ``contains`` answers the push rule's ancestry question and ``changes`` whether a push sends a change to
    the repo config (default for both: the local git, `hook.local_git`; a ``contains`` given alone
    leaves the config question out); ``same``, ``branches`` and ``files`` the freeze rule's (is what a push
    sends already the remote's branch; the local branches; the files a push changes, for a freeze by path)."""
    if same is None or branches is None or files is None:
        from hook.local_git import already_there, changed_files, local_branches

        same, branches, files = same or already_there, branches or local_branches, files or changed_files
    out = []
    for merge, (kind, index) in zip(plan.merges, plan.slots, strict=True):
        if kind != "none" and unreachable is not None:
            out.append(unknown(merge, spec, f"verdict source unreachable: {unreachable}"))
        elif kind == "pr" and answers is not None:
            judge = judge_lift if merge.lift else judge_pr
            out.append(judge(merge, answers[0][index], spec, now_iso))
        elif kind == "repo" and answers is not None and merge.writes is not None:
            free = Judgement(merge, "allow", "not-frozen", f"the branch it writes in {merge.repo} is not frozen")
            out.append(judge_freeze(merge, answers[1][index], spec, now_iso, same, branches, files) or free)
        elif merge.writes is not None:
            out.append(judge_write_without_repo(merge, spec))
        elif merge.tamper:
            out.append(judge_tamper(merge, answers[1][index] if kind == "repo" and answers is not None else None,
                                    spec))
        elif kind == "repo" and answers is not None and merge.via == "git_push":
            if contains is None:
                from hook.local_git import changes as git_changes
                from hook.local_git import contains as git_contains

                contains, changes = git_contains, changes or git_changes
            pushed = judge_push(merge, answers[1][index], spec, contains, changes,
                                _default_branch(merge) if changes is not None else None)
            frozen = None if pushed.blocks else judge_freeze(merge, answers[1][index], spec, now_iso, same, branches,
                                                             files)
            out.append(frozen if frozen is not None and frozen.blocks else pushed)
        elif kind == "repo" and answers is not None:
            judge_repo = judge_lift_undetermined if merge.lift else judge_undetermined
            out.append(judge_repo(merge, answers[1][index], spec))
        else:
            out.append(judge_without_lookup(merge, spec))
    return out


def _default_branch(merge: Merge) -> str | None:
    """The remote's default branch as the local clone recorded it (``refs/remotes/origin/HEAD``): a base too."""
    if not merge.gitdir:
        return None
    from hook.detect.gitrepo import default_branch

    return default_branch(merge.gitdir)


def judge_write_without_repo(merge: Merge, spec: Spec) -> Judgement:
    """A write onto a branch of a repository the text does not name: its freezes cannot be read."""
    what = f"writes onto a branch ({merge.detail or merge.via}) of a repository the guard cannot identify"
    if spec.on_undetermined == "allow":
        return Judgement(merge, "allow", "undetermined", f"{what}; on_undetermined is allow")
    return unknown(merge, spec, f"it {what}, whose freezes cannot be read")


def judge_without_lookup(merge: Merge, spec: Spec) -> Judgement:
    if merge.lift and spec.on_lift == "allow":
        return Judgement(merge, "allow", "lift-allowed", f"{what(merge.lift)}; on_lift is allow")
    if merge.lift:
        return judge_lift_undetermined(merge, None, spec)
    if merge.repo is None:
        if spec.on_undetermined == "block-if-any-held":
            return unknown(merge, spec, "the repository cannot be determined from the command or cwd")
        return judge_undetermined(merge, None, spec)
    return judge_undetermined(merge, None, spec)


def judge_undetermined(merge: Merge, repo: RepoAnswer | None, spec: Spec) -> Judgement:
    where = merge.repo or "an unknown repository"
    what = f"a pull request in {where} that the guard cannot identify"
    hint = (f"Name the PR explicitly (e.g. `gh pr merge NUMBER -R {merge.repo or 'OWNER/REPO'}`) so the "
            "guard can check it, or stop and ask the user.")
    if spec.on_undetermined == "allow":
        return Judgement(merge, "allow", "undetermined", f"merges {what}; on_undetermined is allow")
    if spec.on_undetermined == "block" or repo is None:
        reason = f"merges {what}; on_undetermined is block"
        return Judgement(merge, "block", "undetermined", reason,
                         message=f"merge-hold: this command merges {what}. Blocked (on_undetermined: block). "
                                 + hint)
    if not repo.managed:
        return Judgement(merge, "allow", "unmanaged", f"{where} is not managed by merge-hold")
    if not repo.held:
        return Judgement(merge, "allow", "undetermined-none-held", f"merges {what}; none of its PRs is held")
    shown = ", ".join(f"#{n}" for n in repo.held[:MAX_HOLDS_SHOWN])
    more = f" (+{len(repo.held) - MAX_HOLDS_SHOWN} more)" if len(repo.held) > MAX_HOLDS_SHOWN else ""
    reason = f"merges {what} while {where} has held PRs: {shown}{more}"
    return Judgement(merge, "block", "undetermined-held", reason,
                     message=f"merge-hold: this command merges {what}, and {where} has PRs on hold: "
                             f"{shown}{more}. Blocked (on_undetermined: block-if-any-held). " + hint)


def judge_pr(merge: Merge, answer: PrAnswer, spec: Spec, now_iso: str) -> Judgement:
    repo = merge.repo or ""
    if not answer.managed:
        return Judgement(merge, "allow", "unmanaged", f"{repo} is not managed by merge-hold", pr=answer.number)
    if answer.number is None:
        return unknown(merge, spec, answer.problem or f"no PR of {repo} has head branch {merge.branch}")
    number = answer.number
    if answer.problem:
        return unknown(merge, spec, answer.problem, number)
    if answer.record is None:
        return unknown(merge, spec, "no verdict is recorded for it", number)
    problem = record_problem(answer.record)
    if problem:
        return unknown(merge, spec, problem, number)
    record: dict[str, Any] = answer.record  # type: ignore[assignment]  # checked by _record_problem
    if not record["held"]:
        free = Judgement(merge, "allow", "free", f"{repo}#{number} has no holds", pr=number)
        return _stack(merge, answer, spec, now_iso) or free
    holds = [h for h in record.get("holds", []) if isinstance(h, dict)]
    active = [h for h in holds if not expired(h, now_iso)]
    if holds and not active:
        return Judgement(merge, "allow", "expired", f"every hold on {repo}#{number} has expired", pr=number)
    summary = "; ".join(hold_line(h) for h in active[:3]) or "held"
    return Judgement(merge, "block", "held", f"{repo}#{number} is held: {summary}", pr=number,
                     message=held_message(f"{repo}#{number}", active, record, push=False))


def _stack(merge: Merge, answer: PrAnswer, spec: Spec, now_iso: str) -> Judgement | None:
    """A free PR stacked on held ones: merging it merges them too (`hook.verdicts.stacks`)."""
    repo, number = merge.repo or "", answer.number
    for below, record in answer.below:
        problem = record_problem(record)
        if problem:
            return unknown(merge, spec, f"#{below}, stacked below it: {problem}", number)
        holds = [h for h in record.get("holds", []) if isinstance(h, dict)] if isinstance(record, dict) else []
        active = [h for h in holds if not expired(h, now_iso)]
        if isinstance(record, dict) and record.get("held") and (active or not holds):
            target = f"{repo}#{below}"
            message = held_message(target, active, record, push=False).replace(
                f"merge-hold: {target} is on hold.",
                f"merge-hold: {repo}#{number} is stacked on {target}, which is on hold: merging #{number} merges "
                f"#{below} too.", 1)
            summary = "; ".join(hold_line(h) for h in active[:3]) or "held"
            return Judgement(merge, "block", "held-below", f"{repo}#{number} is stacked on held {target}: {summary}",
                             pr=number, message=message)
    if answer.stack_problem:
        return unknown(merge, spec, f"the PRs below it cannot be read: {answer.stack_problem}", number)
    return None
