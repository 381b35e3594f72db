"""The check run `merge-hold / holds` written beside the status (issue 29; what it shows: `core.check_run`):
a kind of outbox member (``run:repo#N``, `core.outbox`), written by the outbox's one drain
(`workers.publishing.drain`).

- **Only on change.** After each verdict record (`note`, from the recompute) the run's view is built
  (holds, exemption, recent acts, the answer to a click) and compared by digest with what the PR's run last
  showed (`core.keys.check_run_posted`); only a difference puts it on the outbox. A free PR gets one
  `success` when it stops being held, then nothing until the next hold; a PR never held gets no run at all.
- **One run per head SHA**, created once and updated in place (``PATCH``): GitHub keeps at most 1,000 runs
  of one name per suite. A run lost from Redis is found again by name on the head before a new one is made.
- **Below the gate.** A run ranks after every status and urgent freeze mark (`outbox.RUN_ANSWER`,
  `RUN_OWN`, `RUN_FREEZE_ONLY`: answers to clicks first, before the marks for people; then PRs held by
  their own holds; PRs held only by a freeze last), so a drain run in place never writes one and a
  status arriving while the drain waits for a run's slot takes the drain over. The drain writes it
  (`write`) at the pacer's `LOW_PRIORITY` — counted in both of GitHub's windows, never in the part of the
  hour kept for urgent writes, and none while urgent writes are announced (`Pacer.yield_low_priority`) —
  reading what it should show again right before the write.
- **Without Checks: write** GitHub answers 403: the installation's runs stop for an hour
  (`core.keys.check_runs_refused`; its run members leave the outbox, its statuses stay), merge-hold goes
  on with the status alone, and `merge-hold doctor` says what is missing.

Releases before issue 31 kept runs on a sorted set of their own (`core.keys.check_runs`) with a job of
their own (`check_runs_job`): that job's address still runs, and moves what it finds there onto the outbox.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from core import check_run, keys
from core.holds import from_iso, named
from core.outbox import parse_member, run_member
from core.repo_config import RepoConfig
from state import audit, store
from state.config_file import repo_config
from state.decoding import as_text
from workers.github.dry_run import DryRunGateway
from workers.publishing import outbox
from workers.publishing.outbox import RUN_ANSWER, RUN_FREEZE_ONLY, RUN_OWN, URGENT_CEILING, enqueue_drain
from workers.publishing.pacing import LOW_PRIORITY, Pacer, SlotTooFar, rate_limit_wait
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

REFUSED_SECONDS = 3600
"""How long an installation that refused a check run (no Checks: write) is left to the status alone."""
ANSWER, OWN, FREEZE_ONLY = RUN_ANSWER, RUN_OWN, RUN_FREEZE_ONLY
"""A run's outbox rank: an answer to a click, a PR held by its own holds, a PR held only by a freeze."""
HISTORY_SCAN = 300
"""Audit entries of the repo read for a PR's recent acts."""


def posted(redis: Redis, repo: str, number: int) -> dict[str, Any] | None:
    raw = redis.get(keys.check_run_posted(repo, number))
    return json.loads(raw) if raw else None


def acts(redis: Redis, repo: str, number: int) -> list[str]:
    """The PR's last acts (placed, lifted, exempted, asked from the run) as sentences, newest first."""
    found: list[str] = []
    for entry_id, raw in redis.xrevrange(keys.history(repo), count=HISTORY_SCAN) or []:
        fields = {as_text(k): as_text(v) for k, v in (raw or {}).items()}
        event = fields.get("event", "")
        try:
            data = json.loads(fields.get("data", "{}"))
        except ValueError:
            continue
        if data.get("number") != number:
            continue
        sentence = act_sentence(event, data)
        if sentence:
            at = datetime.fromtimestamp(int(as_text(entry_id).partition("-")[0]) / 1000, UTC)
            found.append(f"{at.strftime('%Y-%m-%d %H:%M')} UTC: {sentence}")
        if len(found) >= check_run.MAX_ACTS:
            break
    return found


def act_sentence(event: str, data: dict[str, Any]) -> str | None:
    where = {"check_run": " (from the Checks tab)", "dashboard": " (on merge-hold's page)"}.get(
        str(data.get("origin") or ""), "")
    if event.startswith("hold.") and data.get("message"):
        return f"{data['message']}{where}"
    if event == "room.held":
        return f"{named(str(data.get('holder') or ''))} held this PR in {data.get('origin')}: {data.get('reason')}"
    if event == "room.lifted":
        return f"{named(str(data.get('actor') or ''))} lifted the room hold on this PR{where}"
    if event == "room.exempted":
        return f"{named(str(data.get('by') or ''))} exempted this PR: {data.get('reason')}"
    if event in ("room.unexempted", "exemption.ended"):
        return "the exemption of this PR ended"
    if event == "exemption.requested":
        return f"@{data.get('actor')} asked for an exemption{where}"
    if event == "check_run.refreshed":
        return f"@{data.get('actor')} asked for a refresh{where}"
    return None


def wanted(rt: Runtime, repo: str, number: int, record: dict[str, Any] | None = None,
           config: RepoConfig | None = None) -> tuple[str, dict[str, Any]] | None:
    """The head SHA and what its run should show now; None when the PR gets no run (no config, no head).
    With runs turned off (``check_run: false``) it shows `check_run.off_view`, which `rank` writes only over
    a run last written as held on that head."""
    if config is None:
        config = repo_config(store.load_repo(rt.redis, repo))[0]
    if config is None:
        return None
    record = record if record is not None else store.load_verdict(rt.redis, repo, number)
    if not record or not record.get("head_sha"):
        return None
    base = rt.settings.public_url.rstrip("/")
    if not config.check_run:
        return str(record["head_sha"]), check_run.off_view(f"{base}/{repo}/pull/{number}")
    exemption = store.exemption(rt.redis, repo, number)
    shown = check_run.view(record, pr_url=f"{base}/{repo}/pull/{number}", rooms_url=f"{base}/rooms",
                           exemption=exemption.to_dict() if exemption is not None else None,
                           acts=acts(rt.redis, repo, number), hold_permission=config.hold_permission,
                           lift_others_permission=config.lift_others_permission, hold_label=config.hold_label)
    return str(record["head_sha"]), shown


def rank(want: tuple[str, dict[str, Any]], last: dict[str, Any] | None, *, answer: bool = False) -> int | None:
    """None: nothing to write (shown already, or free and left alone). Else its outbox rank."""
    sha, shown = want
    same_head = last is not None and last.get("sha") == sha
    # `success` once, on the head whose run said held; a PR never held on this head gets no run.
    if not check_run.blocking(shown) and (not same_head or not (last or {}).get("blocking")):
        return None
    if same_head and (last or {}).get("digest") == check_run.digest(shown):
        return None
    if answer:
        return ANSWER
    return FREEZE_ONLY if check_run.freeze_only(shown) else OWN


def note(rt: Runtime, bucket: str, repo: str, number: int, record: dict[str, Any] | None,
         config: RepoConfig | None, *, answer: bool = False) -> None:
    """After a verdict record is written: put the PR's run on the outbox (and ask for a drain) if what it
    shows changed, else take it off."""
    member = run_member(repo, number)
    if isinstance(rt.github, DryRunGateway) or rt.redis.exists(keys.check_runs_refused(bucket)):
        return  # a dry run writes nothing to GitHub; a refusal leaves the status alone for a while
    last = posted(rt.redis, repo, number)
    if record is not None and not (record.get("holds") or record.get("error")) and not (
            last is not None and last.get("sha") == record.get("head_sha") and last.get("blocking")):
        rt.redis.zrem(keys.outbox(bucket), member)  # free and never shown held on this head: no run to read
        return
    want = wanted(rt, repo, number, record, config) if config is not None else None
    place = None if want is None else rank(want, last, answer=answer)
    if place is None:
        rt.redis.zrem(keys.outbox(bucket), member)
        return
    outbox.add(rt.redis, bucket, member, place)  # LT: an answer moves a waiting run up, never down
    enqueue_drain(rt, bucket)


def token_permissions(redis: Redis, repo: str) -> dict[str, str] | None:
    """What the repo's installation accepted, as GitHub said with its token (`workers.github.gateway` keeps it
    with the token); None: unknown (no token yet, or one cached before): then the write is tried."""
    meta = store.load_repo(redis, repo)
    raw = redis.get(keys.installation_token(meta.installation_id)) if meta and meta.installation_id else None
    found = json.loads(raw).get("permissions") if raw else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else None


def write(rt: Runtime, pacer: Pacer, bucket: str, member: str, max_wait: float) -> str | float:
    """The drain's write of one run: its outcome, or the seconds until its slot when that is further than
    ``max_wait``. Whether the installation may write runs is asked before waiting for anything; what the
    run should show is read before the slot is taken and again right before the write. The run stays on
    the outbox when it moved on while we wrote (the newer view is written next)."""
    redis = rt.redis
    parsed = parse_member(member)
    repo, number = parsed.repo, parsed.number
    if isinstance(rt.github, DryRunGateway) or redis.exists(keys.check_runs_refused(bucket)):
        redis.zrem(keys.outbox(bucket), member)  # noted before the refusal (or by a release without the check)
        return "unchanged"
    granted = token_permissions(redis, repo)
    if granted is not None and granted.get("checks") != "write":
        return _refused(rt, bucket, f"the installation has Checks: {granted.get('checks', 'none')}, not write")
    if _current(rt, repo, number) is None:
        redis.zrem(keys.outbox(bucket), member)
        return "unchanged"
    try:
        pacer.acquire(max_wait, priority=LOW_PRIORITY)
    except SlotTooFar as far:
        return max(far.seconds, 0.5)
    found = _current(rt, repo, number)  # right before the write: the slot may have taken a while
    if found is None:
        redis.zrem(keys.outbox(bucket), member)
        return "unchanged"
    try:
        outcome = _write(rt, bucket, repo, number, *found)
    except Exception as exc:
        wait = rate_limit_wait(exc)
        if wait is None:
            raise  # GitHub's trouble: the drain fails and rq retries it (the run stays on the outbox)
        log.warning("rate limited writing %s: writes paused %.0fs", member, pacer.pause(wait))
        return "rate-limited"
    if outcome == "refused":
        return outcome  # the installation's runs are off the outbox already
    if outcome != "written" or _current(rt, repo, number) is None:
        redis.zrem(keys.outbox(bucket), member)
    return "posted" if outcome == "written" else outcome


def _current(rt: Runtime, repo: str, number: int) -> tuple[tuple[str, dict[str, Any]], dict[str, Any] | None] | None:
    """What the PR's run should show and what it last showed, when they differ enough to write."""
    want = wanted(rt, repo, number)
    last = posted(rt.redis, repo, number)
    return None if want is None or rank(want, last) is None else (want, last)


def _find(rt: Runtime, repo: str, sha: str) -> int | None:
    """Our run of this name on ``sha``, should Redis have lost it (GET: no write slot)."""
    status, found = rt.github.get_answer(repo, f"/repos/{repo}/commits/{sha}/check-runs",
                                         {"check_name": check_run.NAME, "filter": "latest"})
    runs = (found or {}).get("check_runs") if status == 200 and isinstance(found, dict) else None
    slug = rt.settings.app_slug
    for run in runs or []:
        if not slug or (run.get("app") or {}).get("slug") == slug:
            return int(run["id"])
    return None


def _write(rt: Runtime, bucket: str, repo: str, number: int, want: tuple[str, dict[str, Any]],
           last: dict[str, Any] | None) -> str:
    sha, shown = want
    body = check_run.body(shown, sha, datetime.now(UTC), details_url=shown.get("pr_url"))
    run_id = last.get("id") if last is not None and last.get("sha") == sha else _find(rt, repo, sha)
    status, answer = 0, None
    if run_id:
        status, answer = rt.github.send(repo, "PATCH", f"/repos/{repo}/check-runs/{run_id}",
                                        {k: v for k, v in body.items() if k != "head_sha"})
    if not run_id or status in (404, 410):  # a run deleted behind our back (a suite gone): make a new one
        status, answer = rt.github.send(repo, "POST", f"/repos/{repo}/check-runs", body)
    if status in (401, 403):
        why = str((answer or {}).get("message") if isinstance(answer, dict) else answer)
        return _refused(rt, bucket, f"GitHub answered {status}: {why}")
    if status == 0:
        return "dry-run"  # nothing is written to GitHub; the next change looks again
    if status != 200 or not isinstance(answer, dict):
        log.warning("check run of %s#%s not written: GitHub answered %s %s", repo, number, status, answer)
        audit.record(rt.redis, repo, "check_run.skipped", number=number, sha=sha, status=status)
        return "skipped"
    new_id = int(answer["id"])
    with rt.redis.pipeline() as pipe:
        pipe.set(keys.check_run_posted(repo, number), json.dumps(
            {"sha": sha, "id": new_id, "digest": check_run.digest(shown), "blocking": check_run.blocking(shown),
             "seen": check_run.comment_holds_shown(shown)}))
        pipe.hset(keys.check_run_ids(repo), str(new_id), number)
        pipe.execute()
    return "written"


def _refused(rt: Runtime, bucket: str, why: str) -> str:
    """No Checks: write: the installation's runs stop for `REFUSED_SECONDS` and leave its outbox (its statuses
    and marks stay)."""
    redis = rt.redis
    redis.set(keys.check_runs_refused(bucket), why, ex=REFUSED_SECONDS)
    found: list[bytes] = redis.zrangebyscore(keys.outbox(bucket), URGENT_CEILING, "+inf")  # type: ignore[assignment]
    runs = [raw for raw in found if parse_member(raw).run]
    with redis.pipeline() as pipe:
        if runs:
            pipe.zrem(keys.outbox(bucket), *runs)
        pipe.delete(keys.check_runs(bucket))  # a release before issue 31 may have left some there
        pipe.execute()
    log.warning("check runs of installation %s not written (%s): the status alone for %d s; grant Checks: write",
                bucket, why, REFUSED_SECONDS)
    return "refused"


def hold_seen(redis: Redis, repo: str, number: int, run_id: object, login: str) -> datetime | None:
    """The time of ``login``'s comment hold as run ``run_id`` (the one clicked) shows it, if it is the run
    last written for the PR: the hold the clicker saw."""
    last = posted(redis, repo, number)
    if last is None or last.get("id") != run_id:
        return None
    return from_iso((last.get("seen") or {}).get(login.lower()))


def number_of(redis: Redis, repo: str, run_id: int) -> int | None:
    raw = redis.hget(keys.check_run_ids(repo), str(run_id))
    return int(raw) if raw else None


def forget(redis: Redis, repo: str, number: int) -> None:
    """A closed PR: its run's record goes (the run itself stays on GitHub, as it was last shown)."""
    last = posted(redis, repo, number)
    with redis.pipeline() as pipe:
        pipe.delete(keys.check_run_posted(repo, number))
        if last and last.get("id"):
            pipe.hdel(keys.check_run_ids(repo), str(last["id"]))
        pipe.execute()


OLD_RANKS = (ANSWER, OWN, FREEZE_ONLY)
"""The old set's score rank (0 an answer, 1 own holds, 2 a freeze only) as an outbox rank."""


def adopt_old_runs(rt: Runtime, bucket: str) -> int:
    """Move the runs a release before issue 31 left on their own sorted set (`core.keys.check_runs`) onto
    the outbox, keeping their order of ranks, and ask for a drain; returns how many moved."""
    old = keys.check_runs(bucket)
    found: list[tuple[bytes, float]] = rt.redis.zrange(old, 0, -1, withscores=True)  # type: ignore[assignment]
    for raw, score in found:
        parsed = parse_member(as_text(raw))
        rank_now = OLD_RANKS[min(max(int(score // outbox.RANK_SPAN), 0), len(OLD_RANKS) - 1)]
        outbox.add(rt.redis, bucket, run_member(parsed.repo, parsed.number), rank_now)
        rt.redis.zrem(old, raw)
    if found:
        enqueue_drain(rt, bucket)
    return len(found)


def check_runs_job(bucket: str) -> str:
    """The job of releases before issue 31 (`core.jobs.CHECK_RUNS`), queued or scheduled by them: their
    runs go onto the outbox, for its drain."""
    return f"moved {adopt_old_runs(current(), bucket)} to the outbox"
