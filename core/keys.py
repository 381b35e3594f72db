"""Redis key names: the one place they are spelled.

Every key of a repository shares the hash tag ``{owner/repo}`` so that the state could move to a
Redis Cluster without a migration (multi-key transactions stay within one slot). Org-wide keys use
``{owner}``. The agent hook reads only ``verdict``, ``managed``, ``head``, ``held`` and ``held-heads`` keys; its
Redis ACL user is restricted to exactly those patterns (see ``hook/acl.py``).
"""

from __future__ import annotations

PREFIX = "mh"


def _repo(repo: str) -> str:
    return f"{PREFIX}:{{{repo.lower()}}}"


def repo_prefix(repo: str) -> str:
    """What every key of the repo starts with (its hash tag); a renamed repo's keys move by this prefix."""
    return _repo(repo)


def repo_keys_pattern(repo: str) -> str:
    """SCAN pattern for every key of the repo. Repo names are ``[A-Za-z0-9_.-]``: no glob characters."""
    return f"{_repo(repo)}:*"


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


def held_heads(repo: str) -> str:
    """Hash: held PR number -> JSON ``{"base", "head_sha", "description"}``. The hook reads it in one ``HGETALL`` to
    judge a ``git push`` onto a base branch (does the pushed commit contain a held PR's head?)."""
    return f"{_repo(repo)}:held-heads"


def pr_state(repo: str, number: int) -> str:
    """`core.prstate.PullState`, stored by `core.state_record`: compact JSON carrying its state version
    ``v``, bumped in the same EXEC as the state."""
    return f"{_repo(repo)}:pr:{number}:state"


def verdict(repo: str, number: int) -> str:
    """The verdict record (`core.verdict.verdict_record`), stored by `core.records`: what the hook and the
    API read, in one GET. It carries its ``version`` (the fencing token of a status write) and the
    ``state_version`` it was computed from, and ``default_base`` (is ``base`` the repo's default branch?):
    when false the hook follows the stack below the PR through `head_index` before letting a merge through."""
    return f"{_repo(repo)}:pr:{number}:verdict"


def verdict_version(repo: str, number: int) -> str:
    """The last verdict ``version`` of a *closed* PR (expires with its state tombstone), so that a
    reopened PR's versions keep increasing; an open PR's version is in its record. Earlier releases
    kept every PR's counter here: read once as a floor, deleted by the next verdict write."""
    return f"{_repo(repo)}:pr:{number}:version"


def legacy_state_version(repo: str, number: int) -> str:
    """Earlier releases' counter of state writes (now ``v`` inside the state): read for a state still in
    the old format, deleted by its next write."""
    return f"{_repo(repo)}:pr:{number}:sv"


def posted(repo: str, number: int) -> str:
    """JSON of the last status posted: (sha, state, description) — the economy check."""
    return f"{_repo(repo)}:pr:{number}:posted"


def recompute_queued(repo: str, number: int) -> str:
    """Set in the same MULTI as the recompute job it stands for, deleted when that job starts."""
    return f"{_repo(repo)}:pr:{number}:queued"


def recompute_lock(repo: str, number: int) -> str:
    """The PR's lock; its value names the worker holding it (`workers.publishing.locks`)."""
    return f"{_repo(repo)}:pr:{number}:lock"


def recompute_lock_pattern() -> str:
    """SCAN pattern for every PR lock (the watchdog breaks a dead worker's)."""
    return f"{PREFIX}:{{*}}:pr:*:lock"


def head_index(repo: str, branch: str) -> str:
    """Head branch -> PR number. Same-repo heads by branch name, fork heads as ``owner:branch``."""
    return f"{_repo(repo)}:head:{branch}"


def room_holds(repo: str) -> str:
    """Hash: hold id -> JSON of a room or freeze hold scoped to this repo, a branch glob or one PR."""
    return f"{_repo(repo)}:rooms"


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
    return f"{_repo(repo)}:deploys"


def deployment_answered(repo: str, run_id: int, environment: str) -> str:
    """Set once merge-hold approved or rejected a run's deployment to ``environment``: a redelivered
    request is not answered twice. Environment names may hold ``:``; nothing is parsed back out of it."""
    return f"{_repo(repo)}:deploy:{run_id}:{environment}:answered"


def deployments_lock(repo: str) -> str:
    """Serialises the answers to one repo's deployment requests (an event and a re-check at once)."""
    return f"{_repo(repo)}:deploys:lock"


def branch_heads(repo: str) -> str:
    """Hash: branch -> JSON `core.treecloser.Head`, for the branches a tree closer watches (from `push`
    events, or GitHub's answer when a head was unknown): a CI result counts only on its branch's head."""
    return f"{_repo(repo)}:branch-heads"


def branch_heads_lock(repo: str) -> str:
    """Lock: one update of the repo's followed branch heads at a time."""
    return f"{branch_heads(repo)}:lock"


def org_room_holds(owner: str) -> str:
    """Hash: hold id -> JSON of a room hold on a whole org."""
    return f"{PREFIX}:{{{owner.lower()}}}:orgrooms"


def exemptions(repo: str) -> str:
    """Hash: PR number -> JSON exemption from room and freeze holds."""
    return f"{_repo(repo)}:exempt"


def history(repo: str) -> str:
    """Stream of audit events for the repo (hold placed/lifted, status posted, forged status...)."""
    return f"{_repo(repo)}:history"


def repo_dropped(repo: str) -> str:
    """Set when the App leaves the repo (for GitHub's 3-day redelivery window): late deliveries and
    in-flight recomputes of it write and post nothing. Deleted when the App is added to it again."""
    return f"{_repo(repo)}:dropped"


def installation_repos(installation_id: int) -> str:
    """Set of repos an installation covers."""
    return f"{PREFIX}:inst:{installation_id}:repos"


def installation_token(installation_id: int) -> str:
    return f"{PREFIX}:inst:{installation_id}:token"


def installation_token_mint(installation_id: int) -> str:
    """Lock: one token mint per installation, whichever worker asks first; the others wait and reuse it."""
    return f"{installation_token(installation_id)}:mint"


def permission_cache(repo: str, login: str) -> str:
    return f"{_repo(repo)}:perm:{login.lower()}"


def audited(repo: str, item: str) -> str:
    """Set NX once the outcomes of one comment or review (``comment:ID``, ``review:ID:ACTION``) are in
    the audit history, so that a redelivery under a new delivery id does not log them twice."""
    return f"{_repo(repo)}:audited:{item}"


def answered(repo: str, comment_id: int | str) -> str:
    """Set NX before merge-hold answers a comment (reaction or reply): at most one answer per comment,
    whatever the redeliveries."""
    return f"{_repo(repo)}:answered:{comment_id}"


def hold_for_waiters(repo: str, number: int) -> str:
    """Set: ``waiting-repo#N holder`` entries whose `/hold-for` waits on this PR or issue of ``repo``."""
    return f"{_repo(repo)}:waiters:{number}"


def delivery_seen(guid: str) -> str:
    """Set NX per X-GitHub-Delivery: a duplicate delivery changes nothing."""
    return f"{PREFIX}:delivery:{guid}"


def forged_overwrite(repo: str, number: int) -> str:
    """``SHA:VERSION`` of the last verdict put back over a forged status: a forgery is overwritten once
    per verdict, so a forger re-posting forever (or a misread own status) cannot start a loop."""
    return f"{_repo(repo)}:pr:{number}:forged"


def merge_groups(repo: str, number: int) -> str:
    """Hash: head SHA -> head ref of each merge group being checked with the PR in it (TTL'd), so that a
    hold placed meanwhile reaches the group's commit too."""
    return f"{_repo(repo)}:pr:{number}:groups"


def group_since(repo: str, sha: str) -> str:
    """String: when a merge group's checks were first requested (ISO 8601): under `queue_on_freeze:
    drain` a freeze that began later does not stop it."""
    return f"{_repo(repo)}:group:{sha}:since"


def group_posted(repo: str, sha: str) -> str:
    """JSON of the last status posted on a merge group's head SHA (the economy check for groups)."""
    return f"{_repo(repo)}:group:{sha}:posted"


def group_lock(repo: str, sha: str) -> str:
    """Serialises the posts on one merge group's SHA, so the last post reads the newest verdict."""
    return f"{_repo(repo)}:group:{sha}:lock"


def forged_group_overwrite(repo: str, sha: str) -> str:
    """The verdict version last put back over a forged status on a merge group's SHA (once per verdict,
    as `forged_overwrite` for a PR's head; TTL'd with the group)."""
    return f"{_repo(repo)}:group:{sha}:forged"


def config_lock(repo: str) -> str:
    """Serialises config reloads of one repo: the last to write is the last to have read the branch."""
    return f"{_repo(repo)}:config:lock"


def intake(queue: str) -> str:
    """List of verified, not yet queued webhook deliveries (`core.deliveries.pack`): the receiver pushes
    on the left, the intake pump takes from the right. One per rq queue, so deployments sharing a Redis
    under different queue names never take each other's deliveries."""
    return f"{PREFIX}:intake:{queue}"


def intake_taken(queue: str, pump: str) -> str:
    """List: the entries one pump has taken from the intake and not yet turned into rq jobs."""
    return f"{PREFIX}:intake:{queue}:taken:{pump}"


def intake_pumps(queue: str) -> str:
    """Set of pump names that may hold taken entries (a dead pump's are put back by the others)."""
    return f"{PREFIX}:intake:{queue}:pumps"


def intake_alive(queue: str, pump: str) -> str:
    """Expiring heartbeat of one pump; when it is gone the pump's taken entries go back to the intake."""
    return f"{PREFIX}:intake:{queue}:alive:{pump}"


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


def dequeued_seen(queue: str, job_id: str) -> str:
    """When the watchdog first saw a job dequeued and not started (rq's intermediate list)."""
    return f"{PREFIX}:dequeued:{queue}:{job_id}"


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


def pacer_urgent(bucket: str) -> str:
    """String with a TTL: urgent writes of one installation are waiting (a freeze's or a thaw's
    rulesets); while it lives its pacer hands no slot to a low-priority write."""
    return f"{PREFIX}:pace:{bucket}:urgent"


def pacer_hour(bucket: str) -> str:
    """Sorted set: the write slots one installation's pacer handed out in the last hour (score: ms)."""
    return f"{PREFIX}:pace:{bucket}:hour"


def freeze_ruleset(repo: str) -> str:
    """JSON: the state of the repo's `merge-hold freeze` ruleset as last written to GitHub (``id``,
    ``enforcement``, ``include``, ``at``); what `core.freeze_gate.binds` reads."""
    return f"{_repo(repo)}:freeze-ruleset"


def freeze_fallback(repo: str) -> str:
    """String: why the repo's ruleset could not be written (a missing permission): its freezes go
    through statuses until a ruleset write succeeds."""
    return f"{_repo(repo)}:freeze-fallback"


def freeze_sync_lock(repo: str) -> str:
    """Lock: one sync of the repo's freeze ruleset at a time (read, write, record)."""
    return f"{_repo(repo)}:freeze-sync-lock"


def freeze_sync_queued(repo: str) -> str:
    """Flag: a ruleset sync of the repo is queued (coalesces the requests of a burst of recomputes)."""
    return f"{_repo(repo)}:freeze-sync-queued"


def freeze_marks(bucket: str) -> str:
    """Sorted set of ``repo#number`` whose `merge-hold/freeze` status needs writing: urgent ones
    (score rank 0: an exemption, a stale success) before the descriptions (rank 1), then by age."""
    return f"{PREFIX}:freeze-marks:{bucket}"


def freeze_marks_lease(bucket: str) -> str:
    """String: the run token of the one job writing an installation's freeze marks."""
    return f"{PREFIX}:freeze-marks-lease:{bucket}"


def posted_mark(repo: str, number: int) -> str:
    """JSON: the `merge-hold/freeze` status last posted on the PR (sha, state, description)."""
    return f"{_repo(repo)}:pr:{number}:posted-mark"


def web_session(sid: str) -> str:
    """JSON: a dashboard user signed in with GitHub (login and their user access token), with a TTL."""
    return f"{PREFIX}:web:session:{sid}"


def user_repos(login: str) -> str:
    """JSON list: the repos a signed-in GitHub user may read (lower-cased), cached at most 10 minutes."""
    return f"{PREFIX}:web:repos:{login.lower()}"


CHAT_LINK_TTL = 600
"""Seconds a `/hold link` code lives (10 minutes): long enough to open the page and sign in, short enough
that a code pasted somewhere by mistake is soon worth nothing."""


def chat_link_code(code: str) -> str:
    """JSON of the chat identity (platform, team, user id and name) a one-time `/hold link` code names;
    expires after `CHAT_LINK_TTL`, deleted when used. Under the tag of `CHAT_LINKS`: one transaction
    consumes the code and writes the link."""
    return f"{PREFIX}:{{chat-links}}:code:{code}"


CHAT_LINKS = f"{PREFIX}:{{chat-links}}:links"
"""Hash, no TTL: ``github:LOGIN`` (lower-cased) -> JSON of the chat identity linked to that GitHub login,
``chat:PLATFORM:TEAM:USER`` -> the login (the way back, so a new link of either side replaces the old),
``pending:PLATFORM:TEAM:USER`` -> the identity's one outstanding code (a new `/hold link` or
`/hold unlink` voids it). Both ways are written in one transaction (`state.chat_links`)."""


MANAGED_REPOS = f"{PREFIX}:repos"
"""Set of every managed repo (lower-cased ``owner/repo``)."""

AUDIT = f"{PREFIX}:audit"
"""Stream of all audit events across repos (the API's ``/api/v1/events``)."""

HOOK_EVENTS = f"{PREFIX}:hook-events"
"""Stream the agent hook appends ``hook.gate.fired`` records to (record only, never consulted)."""

DRY_RUN_STATUSES = f"{PREFIX}:dry-run:statuses"
"""List of statuses the dry-run GitHub client would have posted (newest first)."""


# -- incidents and the tamper watch (design §3, "judged afterwards") ---------------------------------

def merge_judged(repo: str, number: int) -> str:
    """Set NX once a merged PR was judged (``incident`` or ``clean``): a redelivered `closed` event, after
    the PR is forgotten, is not judged again."""
    return f"{_repo(repo)}:pr:{number}:merge-judged"


def incident_answered(repo: str, number: int) -> str:
    """Claimed (SET NX) before the one incident comment on a merged PR is posted."""
    return f"{_repo(repo)}:pr:{number}:incident-answered"


def tamper_answered(repo: str, number: int, episode: str) -> str:
    """Claimed before a held PR is told that its base stopped requiring merge-hold: once per episode."""
    return f"{_repo(repo)}:pr:{number}:tamper:{episode}"


def gate_lock(repo: str) -> str:
    """Serialises the tamper watch of one repo: one reading, one comparison, one episode at a time."""
    return f"{_repo(repo)}:gate:lock"


INCIDENTS = f"{PREFIX}:incidents"
"""Hash: ``repo#number`` (lower-cased repo) -> JSON incident (`core.incidents.record`). Global, not under
the repo's hash tag: a record outlives the App leaving the repo, like the audit stream."""

INCIDENT_TIMES = f"{PREFIX}:incidents:by-time"
"""Sorted set of incident ids by the time they were recorded (newest last): the listing's order."""

INCIDENT_COUNTS = f"{PREFIX}:incidents:counts"
"""Hash: incident kind -> how many were recorded (the metric; never decremented)."""

GATES = f"{PREFIX}:gates"
"""Hash: lower-cased repo -> JSON ``{"repo", "branches": {branch: reading}, "suspended"}``: each managed
branch's last gate reading (`core.gate`) and whether the App is suspended there. Global, so a suspension's
banner outlives the repo's dropped keys."""

TAMPER_COUNTS = f"{PREFIX}:tamper:counts"
"""Hash: tamper episode kind (`core.tamper.KINDS`, and ``restored``) -> how many were recorded."""
