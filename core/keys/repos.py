"""A repository's keys and its PRs': state, verdict records, posted statuses, room holds, merge
groups, deployments, indexes. All under the repo's hash tag (`core.keys.base.repo_prefix`)."""

from __future__ import annotations

from core.keys.base import PREFIX, repo_prefix


def repo_meta(repo: str) -> str:
    """JSON: installation id, default branch, parsed config or config error."""
    return f"{repo_prefix(repo)}:repo"


def managed(repo: str) -> str:
    """'1' while the App is installed on the repo; the hook tells managed from unmanaged by it."""
    return f"{repo_prefix(repo)}:managed"


def open_prs(repo: str) -> str:
    """Set of open PR numbers."""
    return f"{repo_prefix(repo)}:open"


def held_prs(repo: str) -> str:
    """Set of PR numbers whose verdict is held (the hook's `block-if-any-held` reads its size)."""
    return f"{repo_prefix(repo)}:held"


def held_heads(repo: str) -> str:
    """Hash: held PR number -> JSON ``{"base", "head_sha", "description"}``. The hook reads it in one ``HGETALL`` to
    judge a ``git push`` onto a base branch (does the pushed commit contain a held PR's head?)."""
    return f"{repo_prefix(repo)}:held-heads"


def pr_state(repo: str, number: int) -> str:
    """`core.prstate.PullState`, stored by `core.state_format`: compact JSON carrying its state version
    ``v``, bumped in the same EXEC as the state."""
    return f"{repo_prefix(repo)}:pr:{number}:state"


def verdict(repo: str, number: int) -> str:
    """The verdict record (`core.verdict.verdict_record`), stored by `core.verdict_format`: what the hook and the
    API read, in one GET. It carries its ``version`` (the fencing token of a status write) and the
    ``state_version`` it was computed from, and ``default_base`` (is ``base`` the repo's default branch?):
    when false the hook follows the stack below the PR through `head_index` before letting a merge through."""
    return f"{repo_prefix(repo)}:pr:{number}:verdict"


def verdict_version(repo: str, number: int) -> str:
    """The last verdict ``version`` of a *closed* PR (expires with its state tombstone), so that a
    reopened PR's versions keep increasing; an open PR's version is in its record. Earlier releases
    kept every PR's counter here: read once as a floor, deleted by the next verdict write."""
    return f"{repo_prefix(repo)}:pr:{number}:version"


def legacy_state_version(repo: str, number: int) -> str:
    """Earlier releases' counter of state writes (now ``v`` inside the state): read for a state still in
    the old format, deleted by its next write."""
    return f"{repo_prefix(repo)}:pr:{number}:sv"


def posted(repo: str, number: int) -> str:
    """JSON of the last status posted: (sha, state, description) — the economy check."""
    return f"{repo_prefix(repo)}:pr:{number}:posted"


def recompute_queued(repo: str, number: int) -> str:
    """Set in the same MULTI as the recompute job it stands for, deleted when that job starts."""
    return f"{repo_prefix(repo)}:pr:{number}:queued"


def recompute_lock(repo: str, number: int) -> str:
    """The PR's lock; its value names the worker holding it (`workers.publishing.locks`)."""
    return f"{repo_prefix(repo)}:pr:{number}:lock"


def recompute_lock_pattern() -> str:
    """SCAN pattern for every PR lock (the watchdog breaks a dead worker's)."""
    return f"{PREFIX}:{{*}}:pr:*:lock"


def head_index(repo: str, branch: str) -> str:
    """Head branch -> PR number. Same-repo heads by branch name, fork heads as ``owner:branch``."""
    return f"{repo_prefix(repo)}:head:{branch}"


def branch_freezes(repo: str) -> str:
    """JSON `core.branch_freezes` record: the repo's branch freezes (room holds on the repo, a branch glob or
    its org; freeze windows' occurrences over the next days), with holder, reason, from and until. Rewritten
    on every room hold, config and reconcile of the repo (`state.branch_freezes`); the hook reads it in its one
    lookup to judge a push onto a frozen branch and to tell a session what is frozen."""
    return f"{repo_prefix(repo)}:branch-freezes"


def room_holds(repo: str) -> str:
    """Hash: hold id -> JSON of a room or freeze hold scoped to this repo, a branch glob or one PR."""
    return f"{repo_prefix(repo)}:rooms"


def tree_results(repo: str, branch: str) -> str:
    """Hash: status context -> JSON of its latest result on the branch's head (the tree closer's
    `close_on_failure`); the branch is closed while a watched context there is red."""
    return f"{room_holds(repo)}:tree:{branch}"


def tree_lock(repo: str, branch: str) -> str:
    """Lock: one tree-closer update of the branch at a time (results read, compared and written)."""
    return f"{tree_results(repo, branch)}:lock"


def deployments_waiting(repo: str) -> str:
    """Hash: ``RUN_ID:ENVIRONMENT`` -> JSON of a deployment protection request merge-hold left waiting
    because a freeze covered it (run id, environment, ref, callback URL, requested time): approved, or
    rejected, when the freeze lifts (`workers.events.deployments`)."""
    return f"{repo_prefix(repo)}:deploys"


def deployment_answered(repo: str, run_id: int, environment: str) -> str:
    """Set once merge-hold approved or rejected a run's deployment to ``environment``: a redelivered
    request is not answered twice. Environment names may hold ``:``; nothing is parsed back out of it."""
    return f"{repo_prefix(repo)}:deploy:{run_id}:{environment}:answered"


def deployments_lock(repo: str) -> str:
    """Serialises the answers to one repo's deployment requests (an event and a re-check at once)."""
    return f"{repo_prefix(repo)}:deploys:lock"


def branch_heads(repo: str) -> str:
    """Hash: branch -> JSON `core.treecloser.Head`, for the branches a tree closer watches (from `push`
    events, or GitHub's answer when a head was unknown): a CI result counts only on its branch's head."""
    return f"{repo_prefix(repo)}:branch-heads"


def branch_heads_lock(repo: str) -> str:
    """Lock: one update of the repo's followed branch heads at a time."""
    return f"{branch_heads(repo)}:lock"


def org_room_holds(owner: str) -> str:
    """Hash: hold id -> JSON of a room hold on a whole org."""
    return f"{PREFIX}:{{{owner.lower()}}}:orgrooms"


def exemptions(repo: str) -> str:
    """Hash: PR number -> JSON exemption from room and freeze holds (`core.holds.Exemption`)."""
    return f"{repo_prefix(repo)}:exempt"


def changed_files(repo: str, number: int) -> str:
    """zlib-compressed JSON ``{"sha", "files" | null, "why", "tries", "retry"}``: the files the PR's head
    ``sha`` changes, read once per head for path-scoped holds (`workers.publishing.changed_files`), or
    why they are unknown and when to read again. Eight days' TTL; dropped when the PR closes."""
    return f"{repo_prefix(repo)}:pr:{number}:files"


def history(repo: str) -> str:
    """Stream of audit events for the repo (hold placed/lifted, status posted, forged status...)."""
    return f"{repo_prefix(repo)}:history"


def repo_dropped(repo: str) -> str:
    """Set when the App leaves the repo (for GitHub's 3-day redelivery window): late deliveries and
    in-flight recomputes of it write and post nothing. Deleted when the App is added to it again."""
    return f"{repo_prefix(repo)}:dropped"


def installation_repos(installation_id: int) -> str:
    """Set of repos an installation covers."""
    return f"{PREFIX}:inst:{installation_id}:repos"


def installation_token(installation_id: int) -> str:
    return f"{PREFIX}:inst:{installation_id}:token"


def installation_token_mint(installation_id: int) -> str:
    """Lock: one token mint per installation, whichever worker asks first; the others wait and reuse it."""
    return f"{installation_token(installation_id)}:mint"


def permission_cache(repo: str, login: str) -> str:
    return f"{repo_prefix(repo)}:perm:{login.lower()}"


def audited(repo: str, item: str) -> str:
    """Set NX once the outcomes of one comment or review (``comment:ID``, ``review:ID:ACTION``) are in
    the audit history, so that a redelivery under a new delivery id does not log them twice."""
    return f"{repo_prefix(repo)}:audited:{item}"


def answered(repo: str, comment_id: int | str) -> str:
    """Set NX before merge-hold answers a comment (reaction or reply): at most one answer per comment,
    whatever the redeliveries."""
    return f"{repo_prefix(repo)}:answered:{comment_id}"


def hold_for_waiters(repo: str, number: int) -> str:
    """Set: ``waiting-repo#N holder`` entries whose `/hold-for` waits on this PR or issue of ``repo``."""
    return f"{repo_prefix(repo)}:waiters:{number}"


def delivery_seen(guid: str) -> str:
    """Set NX per X-GitHub-Delivery: a duplicate delivery changes nothing."""
    return f"{PREFIX}:delivery:{guid}"


def forged_overwrite(repo: str, number: int) -> str:
    """``SHA:VERSION`` of the last verdict put back over a forged status: a forgery is overwritten once
    per verdict, so a forger re-posting forever (or a misread own status) cannot start a loop."""
    return f"{repo_prefix(repo)}:pr:{number}:forged"


def merge_groups(repo: str, number: int) -> str:
    """Hash: head SHA -> head ref of each merge group being checked with the PR in it (TTL'd), so that a
    hold placed meanwhile reaches the group's commit too."""
    return f"{repo_prefix(repo)}:pr:{number}:groups"


def group_since(repo: str, sha: str) -> str:
    """String: when a merge group's checks were first requested (ISO 8601): under `queue_on_freeze:
    drain` a freeze that began later does not stop it."""
    return f"{repo_prefix(repo)}:group:{sha}:since"


def group_posted(repo: str, sha: str) -> str:
    """JSON of the last status posted on a merge group's head SHA (the economy check for groups)."""
    return f"{repo_prefix(repo)}:group:{sha}:posted"


def group_lock(repo: str, sha: str) -> str:
    """Serialises the posts on one merge group's SHA, so the last post reads the newest verdict."""
    return f"{repo_prefix(repo)}:group:{sha}:lock"


def forged_group_overwrite(repo: str, sha: str) -> str:
    """The verdict version last put back over a forged status on a merge group's SHA (once per verdict,
    as `forged_overwrite` for a PR's head; TTL'd with the group)."""
    return f"{repo_prefix(repo)}:group:{sha}:forged"


def config_lock(repo: str) -> str:
    """Serialises config reloads of one repo: the last to write is the last to have read the branch."""
    return f"{repo_prefix(repo)}:config:lock"


HOOK_READ_PATTERNS = (f"{PREFIX}:{{*}}:pr:*:verdict", f"{PREFIX}:{{*}}:managed", f"{PREFIX}:{{*}}:head:*",
                      f"{PREFIX}:{{*}}:held", f"{PREFIX}:{{*}}:held-heads", f"{PREFIX}:{{*}}:branch-freezes")
"""The keys the agent hook reads, for any repo (`verdict`, `managed`, `head_index`, `held_prs`,
`held_heads`, `branch_freezes`): its Redis ACL user may read exactly these (`hook/tools/acl.py`)."""
