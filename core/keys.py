"""Redis key names: the one place they are spelled.

Every key of a repository shares the hash tag ``{owner/repo}`` so that the state could move to a
Redis Cluster without a migration (multi-key transactions stay within one slot). Org-wide keys use
``{owner}``. The agent hook reads only ``verdict``, ``managed``, ``head`` and ``held`` keys; its
Redis ACL user is restricted to exactly those patterns (see ``hook/acl.py``).
"""

from __future__ import annotations

PREFIX = "mh"


def _repo(repo: str) -> str:
    return f"{PREFIX}:{{{repo.lower()}}}"


def repo_meta(repo: str) -> str:
    """JSON: installation id, default branch, parsed config or config error."""
    return f"{_repo(repo)}:repo"


def managed(repo: str) -> str:
    """'1' while the App is installed on the repo; the hook tells managed from unmanaged by it."""
    return f"{_repo(repo)}:managed"


def open_prs(repo: str) -> str:
    """Set of open PR numbers."""
    return f"{_repo(repo)}:open"


def held_prs(repo: str) -> str:
    """Set of PR numbers whose verdict is held (the hook's `block-if-any-held` reads its size)."""
    return f"{_repo(repo)}:held"


def pr_state(repo: str, number: int) -> str:
    """JSON of `core.prstate.PullState`: facts and per-holder registers."""
    return f"{_repo(repo)}:pr:{number}:state"


def verdict(repo: str, number: int) -> str:
    """JSON verdict record (`core.verdict_record`): what the hook and the API read."""
    return f"{_repo(repo)}:pr:{number}:verdict"


def verdict_version(repo: str, number: int) -> str:
    """Counter of verdict changes: the record's ``version`` (the fencing token of a status write)."""
    return f"{_repo(repo)}:pr:{number}:version"


def state_version(repo: str, number: int) -> str:
    """Counter of state writes, bumped in the same MULTI as the state; the verdict record carries the
    one it was computed from (``state_version``), so a verdict older than its state is visible."""
    return f"{_repo(repo)}:pr:{number}:sv"


def posted(repo: str, number: int) -> str:
    """JSON of the last status posted: (sha, state, description) — the economy check."""
    return f"{_repo(repo)}:pr:{number}:posted"


def recompute_queued(repo: str, number: int) -> str:
    """Set in the same MULTI as the recompute job it stands for, deleted when that job starts."""
    return f"{_repo(repo)}:pr:{number}:queued"


def recompute_lock(repo: str, number: int) -> str:
    return f"{_repo(repo)}:pr:{number}:lock"


def head_index(repo: str, branch: str) -> str:
    """Head branch -> PR number. Same-repo heads by branch name, fork heads as ``owner:branch``."""
    return f"{_repo(repo)}:head:{branch}"


def room_holds(repo: str) -> str:
    """Hash: hold id -> JSON of a room or freeze hold scoped to this repo, a branch glob or one PR."""
    return f"{_repo(repo)}:rooms"


def org_room_holds(owner: str) -> str:
    """Hash: hold id -> JSON of a room hold on a whole org."""
    return f"{PREFIX}:{{{owner.lower()}}}:orgrooms"


def exemptions(repo: str) -> str:
    """Hash: PR number -> JSON exemption from room and freeze holds."""
    return f"{_repo(repo)}:exempt"


def history(repo: str) -> str:
    """Stream of audit events for the repo (hold placed/lifted, status posted, forged status...)."""
    return f"{_repo(repo)}:history"


def installation_repos(installation_id: int) -> str:
    """Set of repos an installation covers."""
    return f"{PREFIX}:inst:{installation_id}:repos"


def installation_token(installation_id: int) -> str:
    return f"{PREFIX}:inst:{installation_id}:token"


def permission_cache(repo: str, login: str) -> str:
    return f"{_repo(repo)}:perm:{login.lower()}"


def audited(repo: str, item: str) -> str:
    """Set NX once the outcomes of one comment or review (``comment:ID``, ``review:ID:ACTION``) are in
    the audit history, so that a redelivery under a new delivery id does not log them twice."""
    return f"{_repo(repo)}:audited:{item}"


def delivery_seen(guid: str) -> str:
    """Set NX per X-GitHub-Delivery: a duplicate delivery changes nothing."""
    return f"{PREFIX}:delivery:{guid}"


def fanout(repo: str) -> str:
    """Hash: the repo's fan-out progress (generations wanted/done, the pass and its cursor)."""
    return f"{_repo(repo)}:fanout"


def fanout_plan(repo: str) -> str:
    """List: the open PR numbers of the current fan-out pass, most-mergeable first."""
    return f"{_repo(repo)}:fanout:plan"


def fanout_lease(repo: str) -> str:
    """The run token of the fan-out working on the repo (expires if its worker dies)."""
    return f"{_repo(repo)}:fanout:lease"


def fanout_queued(repo: str) -> str:
    return f"{_repo(repo)}:fanout:queued"


def wake(job_id: str) -> str:
    """Set NX once a clock-driven recompute (``wake-…`` job) is scheduled, so it is scheduled once."""
    return f"{PREFIX}:wake:{job_id}"


def outbox(bucket: str) -> str:
    """Sorted set of ``repo#number`` whose status differs from their verdict, most-mergeable first:
    the paced status writes still to make for one GitHub installation."""
    return f"{PREFIX}:outbox:{bucket}"


def outbox_lease(bucket: str) -> str:
    """The run token of the worker draining an outbox (expires if that worker dies)."""
    return f"{PREFIX}:outbox:{bucket}:lease"


OUTBOXES = f"{PREFIX}:outboxes"
"""Set of the outbox buckets that may hold pending writes (the watchdog looks at each)."""


def worker_alive(name: str) -> str:
    """Refreshed every second by a live `merge-hold worker`; its absence means the worker is gone."""
    return f"{PREFIX}:worker:{name}:alive"


WATCHED_WORKERS = f"{PREFIX}:workers"
"""Set of `merge-hold worker` names that keep an alive key: only their jobs are rescued (a plain rq
worker's are left to rq's own abandoned-job handling)."""

WATCHDOG_LOCK = f"{PREFIX}:watchdog"
"""One worker at a time rescues the jobs of dead workers."""


def reconcile_slot(slot: int) -> str:
    """Set NX by the one worker that enqueues the scheduled reconcile of period ``slot``."""
    return f"{PREFIX}:reconcile:{slot}"


def redelivery_asked(guid: str) -> str:
    """Set NX once a failed delivery's redelivery was asked of GitHub."""
    return f"{PREFIX}:redelivered:{guid}"


def sweep_slot(slot: int) -> str:
    """Set NX by the one worker that schedules the redelivery sweep of period ``slot``."""
    return f"{PREFIX}:sweep:{slot}"


APP_SLUG = f"{PREFIX}:app:slug"
"""Our App's slug as `GET /app` answered it (cached a day)."""


def pacer(bucket: str) -> str:
    """Hash: the shared write pacer of one GitHub installation (token bucket and pause)."""
    return f"{PREFIX}:pace:{bucket}"


MANAGED_REPOS = f"{PREFIX}:repos"
"""Set of every managed repo (lower-cased ``owner/repo``)."""

AUDIT = f"{PREFIX}:audit"
"""Stream of all audit events across repos (the API's ``/api/v1/events``)."""

HOOK_EVENTS = f"{PREFIX}:hook-events"
"""Stream the agent hook appends ``hook.gate.fired`` records to (record only, never consulted)."""

DRY_RUN_STATUSES = f"{PREFIX}:dry-run:statuses"
"""List of statuses the dry-run GitHub client would have posted (newest first)."""
