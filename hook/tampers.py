"""Weakening the gate is a person's act (design §6), like lifting a hold: what the guard decides about a tool
call that would forge the ``merge-hold`` status (or a check run of that name), change or delete branch
protection, its required checks or a ruleset, suspend or uninstall the App, write ``.github/merge-hold.yml``
(hook/detect/gate.py, hook/detect/graphql.py; a ``git push`` of it onto a base branch: `hook.pushes`).

Spec ``on_tamper``: ``block-if-any-held`` (default) blocks such an act in a repo that has any held PR (where
the repo is not known — an org ruleset, the App's installation, a GraphQL node — nothing can be looked up:
``on_unknown``); ``block`` blocks it anywhere; ``allow`` lets it through. A repo merge-hold does not manage
has no gate of merge-hold's to weaken.
"""

from __future__ import annotations

from hook.judgement import MAX_HOLDS_SHOWN, Judgement, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.model import Merge
    from hook.spec import Spec
    from hook.verdicts.sources import RepoAnswer

PERSON = ("Weakening the merge gate is a person's act, not an agent's: tell the user what you wanted to do and "
          "why, and let them do it themselves if they agree. Do not work around it (no other API call, client, "
          "push or tool to the same effect).")


def needs_lookup(merge: Merge, spec: Spec) -> bool:
    return spec.on_tamper == "block-if-any-held" and merge.repo is not None


def judge_tamper(merge: Merge, repo: RepoAnswer | None, spec: Spec) -> Judgement:
    """``repo``: the one read of the repo's held PRs (None when none was made)."""
    act, where = merge.tamper or "weakens the gate", merge.repo or "an unknown repository"
    if spec.on_tamper == "allow":
        return Judgement(merge, "allow", "tamper-allowed", f"{act} in {where}; on_tamper is allow")
    if spec.on_tamper == "block-if-any-held":
        if merge.repo is None:
            return unknown(merge, spec, f"{act}: the repository it affects is not in the command")
        if repo is None:
            return unknown(merge, spec, f"{act}: the holds of {where} were not read")
        if not repo.managed:
            return Judgement(merge, "allow", "unmanaged", f"{where} is not managed by merge-hold")
        if not repo.held:
            return Judgement(merge, "allow", "tamper-none-held", f"{act} in {where}; none of its PRs is held")
    held = repo.held if repo is not None else []
    shown = ", ".join(f"#{n}" for n in held[:MAX_HOLDS_SHOWN])
    more = f" (+{len(held) - MAX_HOLDS_SHOWN} more)" if len(held) > MAX_HOLDS_SHOWN else ""
    while_held = f" while {where} has PRs on hold ({shown}{more})" if shown else f" in {where}"
    reason = f"{act}{while_held}; on_tamper is {spec.on_tamper}"
    message = (f"merge-hold: this command would {_verb(act)}{while_held}. That weakens the merge gate, so it is "
               f"blocked (on_tamper: {spec.on_tamper}). {PERSON}")
    return Judgement(merge, "block", "tamper", reason, message=message)


def _verb(act: str) -> str:
    """GitHub's summary ("Delete branch protection") as the object of "would …": its first letter lowered."""
    return act[:1].lower() + act[1:] if act[1:2].islower() else act
