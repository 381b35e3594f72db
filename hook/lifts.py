"""Lifting a hold is a person's act (design §6): what the guard decides about a tool call that would lift one.

A lift on a held PR is blocked like a merge (spec ``on_lift``, default ``block``): removing the hold
label, a comment or review whose body carries ``/unhold``, ``/hold cancel`` or ``/remove-hold``, an
approval where a changes-requested review holds (it lifts its author's hold), dismissing a review. On a
PR that is not held there is nothing to lift: allowed. A comment whose body the text does not show
(``--body "$(…)"``) on a held PR is ``on_undetermined``'s; a lift whose PR the text does not show (a
GraphQL node id, a comment id) is blocked when the repo has held PRs, as an undetermined merge is.
The hold label is the verdict record's ``hold_label`` (the repo's config), read in the same one lookup.
"""

from __future__ import annotations

from hook.judgement import (
    MAX_HOLDS_SHOWN,
    Judgement,
    expired,
    hold_line,
    how_to_lift,
    label_of,
    record_problem,
    unknown,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hook.detect.model import Merge
    from hook.spec import Spec
    from hook.verdicts.sources import PrAnswer, RepoAnswer

PERSON = ("Holds are lifted by people, not by agents: tell the user what you wanted to do and let them lift "
          "the hold themselves if they agree. Do not work around it (no other way of commenting, relabelling, "
          "dismissing or merging).")


def what(lift: str) -> str:
    if lift.startswith("label:"):
        name = lift[len("label:"):]
        return "removes the hold label" if name == "*" else f"removes the label `{name}`"
    return {"comment": "posts a comment or review that lifts holds",
            "comment?": "posts a comment or review whose text the guard cannot see",
            "review": "posts a review that lifts holds",
            "approve": "approves the PR, which lifts its reviewer's changes-requested hold",
            "dismiss": "dismisses a review",
            "label+": "adds labels to the PR (an exempt label lets it through room and freeze holds)",
            "uncomment": "deletes a comment (it may be the one that holds a PR)",
            "base": "changes the PR's base branch (a held PR may then merge where merge-hold is not required)",
            "update-branch": "updates the PR's branch from its base (a new head commit)",
            "click": "clicks a check run's button (merge-hold's Lift my hold, Request exemption) or asks for the "
                     "run again"}.get(lift, "lifts a hold")


def _lifts(lift: str, record: dict[str, Any], active: list[dict[str, Any]]) -> bool:
    """Whether the action lifts one of ``active`` (the PR is held)."""
    if lift.startswith("label:"):
        name = lift[len("label:"):].lower()
        labels = {label_of(h).lower() for h in active if h.get("source") == "label"}
        hold_label = record.get("hold_label")
        if isinstance(hold_label, str) and hold_label:
            labels.add(hold_label.lower())
        if name == "*":  # some label, or all of them: a lift when the hold label is on the PR
            return any(h.get("source") == "label" for h in active)
        return name in labels
    if lift == "approve":
        return any(h.get("source") == "review" for h in active)
    if lift == "label+":
        return any(h.get("source") in ("room", "freeze") for h in active)
    return True  # comment, comment?, review, dismiss, base, update-branch: on a held PR


def judge_lift(merge: Merge, answer: PrAnswer, spec: Spec, now_iso: str) -> Judgement:
    repo, lift = merge.repo or "", merge.lift or ""
    if not answer.managed:
        return Judgement(merge, "allow", "unmanaged", f"{repo} is not managed by merge-hold", pr=answer.number)
    if answer.number is None:
        if answer.problem:
            return unknown(merge, spec, answer.problem)
        return Judgement(merge, "allow", "no-pr", f"no PR of {repo} has head branch {merge.branch}")
    number = answer.number
    if answer.record is None and not answer.problem:
        # No verdict: an issue (issues and PRs share numbers), or a PR not tracked yet. Nothing is known
        # to be held, so nothing is known to be lifted; the status check gates the PR either way.
        return Judgement(merge, "allow", "lift-no-verdict", f"{repo}#{number} has no verdict record", pr=number)
    problem = answer.problem or record_problem(answer.record)
    if problem:
        return unknown(merge, spec, problem, number)
    record: dict[str, Any] = answer.record  # type: ignore[assignment]  # checked by record_problem
    active = [h for h in record.get("holds", []) if isinstance(h, dict) and not expired(h, now_iso)]
    target = f"{repo}#{number}"
    if not record["held"] or not active:
        return Judgement(merge, "allow", "lift-not-held", f"{target} is not held: {what(lift)}", pr=number)
    if not _lifts(lift, record, active):
        return Judgement(merge, "allow", "lift-none", f"{what(lift)}: lifts none of {target}'s holds", pr=number)
    if lift == "comment?" and spec.on_undetermined == "allow":
        return Judgement(merge, "allow", "undetermined", f"{what(lift)} on held {target}; on_undetermined is allow",
                         pr=number)
    reason = f"{what(lift)} on held {target}"
    lines = [f"merge-hold: {target} is on hold, and this command {what(lift)}. An agent must not lift a hold."]
    if lift == "comment?":
        lines[0] += (" (Its text is computed at run time, so it may carry `/unhold`; write the text in the "
                     "command itself if it does not lift the hold.)")
    for hold in active[:MAX_HOLDS_SHOWN]:
        lines.append(f"  - {hold_line(hold)}")
        lines.append(f"    lifted by a person: {how_to_lift(hold)}")
    lines.append(PERSON)
    return Judgement(merge, "block", "lift", reason, pr=number, message="\n".join(lines))


def judge_lift_undetermined(merge: Merge, repo: RepoAnswer | None, spec: Spec) -> Judgement:
    """A lift whose PR the text does not reveal (a node id, a comment id, a computed number)."""
    where = merge.repo or "an unknown repository"
    reason = f"{what(merge.lift or '')} on a PR of {where} the guard cannot identify"
    if spec.on_undetermined == "allow":
        return Judgement(merge, "allow", "undetermined", f"{reason}; on_undetermined is allow")
    if repo is not None and not repo.managed:
        return Judgement(merge, "allow", "unmanaged", f"{where} is not managed by merge-hold")
    if repo is not None and not repo.held and spec.on_undetermined == "block-if-any-held":
        return Judgement(merge, "allow", "undetermined-none-held", f"{reason}; none of its PRs is held")
    shown = ", ".join(f"#{n}" for n in (repo.held if repo else [])[:MAX_HOLDS_SHOWN])
    held = f" while {where} has PRs on hold ({shown})" if shown else ""
    return Judgement(merge, "block", "lift-undetermined", f"{reason}{held}; on_undetermined is {spec.on_undetermined}",
                     message=f"merge-hold: this command {what(merge.lift or '')} on a PR the guard cannot identify"
                             f"{held}. Blocked (on_undetermined: {spec.on_undetermined}). Name the PR in the "
                             f"command, or stop and ask the user. {PERSON}")
