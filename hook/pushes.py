"""The ``git push`` rule (design §6): a push whose target is the base branch of a held PR is blocked when
the pushed commit contains that PR's head, and allowed otherwise.

Pure but for one injected question, ``contains(gitdir, head_sha, commits)`` (`hook.local_git`
asks git): the held PRs' bases and heads come from the one repo read (`RepoAnswer.heads`). What the text
does not show (a computed source or target, an unknown directory) is ``on_undetermined``'s, and only
when a held PR has that base; a git that cannot tell is ``on_unknown``'s.
"""

from __future__ import annotations

from hook.judgement import STOP, Judgement, unknown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from hook.detect.model import Merge
    from hook.spec import Spec
    from hook.verdicts.sources import RepoAnswer

    Contains = Callable[[str, str, Sequence[str]], bool | None]
    Changes = Callable[[str, Sequence[str], Sequence[str]], bool | None]

CONFIG_PATHS = (".github/merge-hold.yml", ".github/merge-hold.yaml")


def stem(pattern: str, branch: str) -> str | None:
    """``release/*`` and ``release/1.2`` -> ``1.2``; None when the branch does not match."""
    prefix, _, suffix = pattern.partition("*")
    if len(branch) >= len(prefix) + len(suffix) and branch.startswith(prefix) and branch.endswith(suffix):
        return branch[len(prefix) : len(branch) - len(suffix)]
    return None


def written(merge: Merge, base: str) -> tuple[str, ...] | None:
    """The commits ``merge`` writes to ``base`` (None: it does not write ``base``)."""
    target = merge.push_target
    if target is None:
        return merge.commits
    if "*" not in target:
        return merge.commits if target == base else None
    part = stem(target, base)
    return None if part is None else tuple(c.replace("*", part, 1) for c in merge.commits[:1])


def judge_push(merge: Merge, repo: RepoAnswer, spec: Spec, contains: Contains, changes: Changes | None = None,
               default: str | None = None) -> Judgement:
    """The push rule, then the gate's own file: a push that sends a change to ``.github/merge-hold.yml`` onto
    a base branch (of a held PR, or the remote's default branch, ``default``) weakens the gate (``on_tamper``)."""
    judgement = _judge_push(merge, repo, spec, contains)
    if judgement.blocks or changes is None:
        return judgement
    return config_push(merge, repo, spec, changes, default) or judgement


def config_push(merge: Merge, repo: RepoAnswer, spec: Spec, changes: Changes, default: str | None) -> Judgement | None:
    """Blocked when the push writes a base branch with a commit, not yet on any remote branch, that changes
    merge-hold's configuration; None when it does not (or ``on_tamper`` lets it through)."""
    if spec.on_tamper == "allow" or not repo.managed or merge.undetermined or not merge.gitdir:
        return None
    if spec.on_tamper == "block-if-any-held" and not repo.held:
        return None
    bases = {base for base, _, _ in repo.heads.values()} | ({default} if default else set())
    written_bases = [b for b in sorted(bases) if written(merge, b) is not None]
    if not written_bases:
        return None
    commits = tuple(c for b in written_bases for c in (written(merge, b) or ()))
    found = changes(merge.gitdir, commits, CONFIG_PATHS)
    name, base = merge.repo or "", written_bases[0]
    if found is None:
        return unknown(merge, spec, f"git cannot tell whether the push changes {CONFIG_PATHS[0]}")
    if not found:
        return None
    act = f"Push a change to {CONFIG_PATHS[0]} onto {base}"
    held = ", ".join(f"#{n}" for n in repo.held[:10])
    from hook.tampers import PERSON

    message = (f"merge-hold: this push writes `{base}` of {name} with a commit that changes {CONFIG_PATHS[0]}, "
               f"merge-hold's configuration" + (f", while {name} has PRs on hold ({held})" if held else "")
               + f". That weakens the merge gate, so it is blocked (on_tamper: {spec.on_tamper}). {PERSON}")
    return Judgement(merge.replace(tamper=act), "block", "tamper", f"{act} in {name}; on_tamper is {spec.on_tamper}",
                     message=message)


def _judge_push(merge: Merge, repo: RepoAnswer, spec: Spec, contains: Contains) -> Judgement:
    name = merge.repo or ""
    where = f"`{merge.push_target}` of {name}" if merge.push_target else f"a branch of {name}"
    if not repo.managed:
        return Judgement(merge, "allow", "unmanaged", f"{name} is not managed by merge-hold")
    onto = [(n, base, sha, said) for n, (base, sha, said) in sorted(repo.heads.items())
            if written(merge, base) is not None]
    if not onto:
        return Judgement(merge, "allow", "push-no-held-base", f"the push writes no base branch of a held PR of {name}")
    numbers = ", ".join(f"#{n}" for n, _, _, _ in onto)
    if merge.undetermined or not merge.gitdir:
        why = merge.detail or "what it pushes is not in the text"
        reason = f"pushes to {where}, the base of held {numbers}; {why}"
        if spec.on_undetermined == "allow":
            return Judgement(merge, "allow", "undetermined", f"{reason}; on_undetermined is allow")
        return Judgement(merge, "block", "undetermined-held", f"{reason}; on_undetermined is {spec.on_undetermined}",
                         pr=onto[0][0],
                         message=(f"merge-hold: this push writes {where}, the base branch of {name} {numbers} "
                                  f"(on hold), and the guard cannot tell what it pushes ({why}). Blocked "
                                  f"(on_undetermined: {spec.on_undetermined}). Push a branch you name, from a "
                                  f"directory you name, or stop and ask the user. {STOP}"))
    for number, base, sha, said in onto:
        result = contains(merge.gitdir, sha, written(merge, base) or ())
        if result is None:
            return unknown(merge, spec, f"git cannot tell whether the push contains {name}#{number}'s head {sha[:12]}",
                           number)
        if result:
            message = "\n".join([
                f"merge-hold: {name}#{number} is on hold ({said or 'held'}). This push writes its base branch "
                f"`{base}` with a commit that contains the PR's head {sha[:12]}, which lands the PR. "
                "Do not push its branch onto its base branch.",
                STOP])
            return Judgement(merge, "block", "held", f"pushes {name}#{number}'s head {sha[:12]} onto {base}",
                             pr=number, message=message)
    return Judgement(merge, "allow", "push-not-containing",
                     f"the push to {where} contains no head of held {numbers}")
