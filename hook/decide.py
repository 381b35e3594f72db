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
- a ``git push`` of a PR's head branch: blocked only when that PR is held and the push writes its base;
- a merge whose target the command does not reveal: ``on_undetermined``. With ``block-if-any-held`` it
  is blocked iff the repo has a held PR. When even the repository is unknown (no URL, ``-R``,
  ``GH_REPO`` or git remote), nothing can be looked up, so the case is an unknown verdict and
  ``on_unknown`` decides (default: block).
"""

from __future__ import annotations

from hook.spec import Spec
from hook.verdicts.sources import PrAnswer, PrQuery, RepoAnswer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hook.detect.model import Merge

RECORD_SCHEMA = 1
"""The verdict record shape this guard understands (`core.verdict.RECORD_SCHEMA`, not imported: cost)."""
MAX_HOLDS_SHOWN = 10

STOP = (
    "Stop here and ask the user how to proceed. Do not work around the hold: no other merge command, "
    "API call, auto-merge, push to the base branch, or lifting the hold yourself."
)


class Judgement:
    __slots__ = ("code", "decision", "merge", "message", "pr", "reason", "repo")

    def __init__(self, merge: Merge, decision: str, code: str, reason: str, *,
                 pr: int | None = None, message: str = "") -> None:
        self.merge = merge
        self.decision = decision  # "allow" | "block"
        self.code = code
        self.reason = reason
        self.repo = merge.repo
        self.pr = pr if pr is not None else merge.pr
        self.message = message

    @property
    def blocks(self) -> bool:
        return self.decision == "block"


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


def _is_push_to_other_branch(merge: Merge) -> bool:
    return bool(merge.push_target) and merge.push_target != merge.branch


def _lookup_kind(merge: Merge, spec: Spec) -> str:
    if merge.repo is None:
        return "none"
    if merge.via == "git_push":
        if merge.undetermined or not merge.branch:
            return "repo" if spec.on_undetermined == "block-if-any-held" else "none"
        return "branch" if _is_push_to_other_branch(merge) else "none"
    if merge.undetermined or (merge.pr is None and not merge.branch):
        return "repo" if spec.on_undetermined == "block-if-any-held" else "none"
    return "pr" if merge.pr is not None else "branch"


def judge_all(plan: Plan, spec: Spec, answers: tuple[list[PrAnswer], list[RepoAnswer]] | None,
              unreachable: str | None, now_iso: str) -> list[Judgement]:
    """``answers`` is None when no lookup was needed or it failed (``unreachable`` says why)."""
    out = []
    for merge, (kind, index) in zip(plan.merges, plan.slots, strict=True):
        if kind != "none" and unreachable is not None:
            out.append(_unknown(merge, spec, f"verdict source unreachable: {unreachable}"))
        elif kind == "pr" and answers is not None:
            out.append(judge_pr(merge, answers[0][index], spec, now_iso))
        elif kind == "repo" and answers is not None:
            out.append(judge_undetermined(merge, answers[1][index], spec))
        else:
            out.append(judge_without_lookup(merge, spec))
    return out


def judge_without_lookup(merge: Merge, spec: Spec) -> Judgement:
    if merge.via == "git_push" and merge.repo and merge.branch and not merge.undetermined:
        return Judgement(merge, "allow", "push-not-to-base", "the push does not write another branch")
    if merge.repo is None:
        if spec.on_undetermined == "block-if-any-held":
            return _unknown(merge, spec, "the repository cannot be determined from the command or cwd")
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


def _unknown(merge: Merge, spec: Spec, why: str, pr: int | None = None) -> Judgement:
    number = pr if pr is not None else merge.pr
    target = f"{merge.repo}#{number}" if merge.repo and number else (merge.repo or "the target PR")
    reason = f"cannot establish whether {target} is held ({why}); on_unknown is {spec.on_unknown}"
    if spec.on_unknown == "allow":
        return Judgement(merge, "allow", "unknown", reason, pr=number)
    message = (f"merge-hold: cannot establish whether {target} is on hold ({why}), so this merge is blocked "
               "(on_unknown: block). Stop and ask the user; do not retry the merge another way. "
               "The PR's required `merge-hold` status check on GitHub still decides.")
    return Judgement(merge, "block", "unknown", reason, pr=number, message=message)


def _expired(hold: dict[str, Any], now_iso: str) -> bool:
    expires = hold.get("expires_at")
    if not isinstance(expires, str) or not expires:
        return False
    if len(expires) == len(now_iso) and expires.endswith("Z"):
        return expires <= now_iso  # both `%Y-%m-%dT%H:%M:%SZ`: lexical order is time order
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        now = datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
    except ValueError:
        return False  # unreadable expiry: the hold still counts
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= now


def _record_problem(record: object) -> str | None:
    if not isinstance(record, dict):
        return "the verdict record is not an object"
    if record.get("schema") != RECORD_SCHEMA:
        return f"the verdict record has unknown schema {record.get('schema')!r}"
    if record.get("error"):
        return f"the server could not establish the verdict: {record['error']}"
    if not isinstance(record.get("held"), bool) or not isinstance(record.get("holds", []), list):
        return "the verdict record is malformed"
    if record["held"] is False and record.get("holds"):
        return "the verdict record is inconsistent (free, with holds)"
    return None


def judge_pr(merge: Merge, answer: PrAnswer, spec: Spec, now_iso: str) -> Judgement:
    repo = merge.repo or ""
    if not answer.managed:
        return Judgement(merge, "allow", "unmanaged", f"{repo} is not managed by merge-hold", pr=answer.number)
    if answer.number is None:
        if merge.via == "git_push":
            return Judgement(merge, "allow", "no-pr", f"no PR of {repo} has head branch {merge.branch}")
        return _unknown(merge, spec, answer.problem or f"no PR of {repo} has head branch {merge.branch}")
    number = answer.number
    if answer.problem:
        return _unknown(merge, spec, answer.problem, number)
    if answer.record is None:
        return _unknown(merge, spec, "no verdict is recorded for it", number)
    problem = _record_problem(answer.record)
    if problem:
        return _unknown(merge, spec, problem, number)
    record: dict[str, Any] = answer.record  # type: ignore[assignment]  # checked by _record_problem
    if merge.via == "git_push" and record.get("base") != merge.push_target:
        return Judgement(merge, "allow", "push-not-to-base",
                         f"pushes to {merge.push_target}, not to {repo}#{number}'s base", pr=number)
    if not record["held"]:
        return Judgement(merge, "allow", "free", f"{repo}#{number} has no holds", pr=number)
    holds = [h for h in record.get("holds", []) if isinstance(h, dict)]
    active = [h for h in holds if not _expired(h, now_iso)]
    if holds and not active:
        return Judgement(merge, "allow", "expired", f"every hold on {repo}#{number} has expired", pr=number)
    summary = "; ".join(_hold_line(h) for h in active[:3]) or "held"
    return Judgement(merge, "block", "held", f"{repo}#{number} is held: {summary}", pr=number,
                     message=held_message(f"{repo}#{number}", active, record, push=merge.via == "git_push"))


def _holder(hold: dict[str, Any]) -> str:
    holder = str(hold.get("holder") or "")
    return holder if not holder or holder.startswith("@") else f"@{holder}"


def _hold_line(hold: dict[str, Any]) -> str:
    source = str(hold.get("source") or "hold")
    reason = str(hold.get("reason") or "no reason given")
    who = _holder(hold)
    if source == "label":
        return f"label `{_label(hold)}`"
    if source == "freeze":
        name = _freeze_name(hold)
        return reason if name in reason else f"freeze `{name}`: {reason}"
    if source == "room":
        room = f" in {hold['origin']}" if hold.get("origin") else ""
        return f"{who or 'a chat user'} (room hold on {hold.get('scope')}{room}): {reason}"
    return f"{who or 'someone'} ({source}): {reason}"


def _freeze_name(hold: dict[str, Any]) -> str:
    origin = str(hold.get("origin") or "")
    return str(hold.get("holder") or origin.removeprefix("schedule:") or hold.get("id") or "window")


def _label(hold: dict[str, Any]) -> str:
    ident = str(hold.get("id") or "")
    return ident.partition(":")[2] if ident.startswith("label:") else str(hold.get("reason") or "the hold label")


def how_to_lift(hold: dict[str, Any]) -> str:
    source = hold.get("source")
    who = _holder(hold) or "the holder"
    if source == "comment":
        return (f"{who} comments `/unhold` on the PR (or a maintainer comments `/unhold {who}`)"
                + (f"; it also expires at {hold['expires_at']}" if hold.get("expires_at") else ""))
    if source == "review":
        return f"{who} approves the PR, or the changes-requested review is dismissed"
    if source == "label":
        return f"remove the label `{_label(hold)}` from the PR"
    if source == "room":
        room = f" ({hold['origin']})" if hold.get("origin") else ""
        return (f"someone allowed to lift it runs `/unhold {hold.get('scope') or 'TARGET'}` in the chat room{room}"
                + (f"; it also expires at {hold['expires_at']}" if hold.get("expires_at") else ""))
    if source == "freeze":
        until = f" ({hold['expires_at']})" if hold.get("expires_at") else ""
        return f"wait until the freeze window `{_freeze_name(hold)}` ends{until}"
    return "ask the holder"


def held_message(target: str, holds: list[dict[str, Any]], record: dict[str, Any], *, push: bool) -> str:
    action = "push its branch onto its base branch" if push else "merge it"
    lines = [f"merge-hold: {target} is on hold. Do not {action}."]
    for hold in holds[:MAX_HOLDS_SHOWN]:
        lines.append(f"  - {_hold_line(hold)}")
        lines.append(f"    to lift: {how_to_lift(hold)}")
    if len(holds) > MAX_HOLDS_SHOWN:
        lines.append(f"  (+{len(holds) - MAX_HOLDS_SHOWN} more holds)")
    if not holds:
        lines.append(f"  - {record.get('description') or 'held'}")
    lines.append(STOP)
    return "\n".join(lines)
