"""The tamper watch: does each managed branch still require `merge-hold` from this App? (design §3, §4)

Events that may change a gate — `branch_protection_rule`, `branch_protection_configuration`,
`repository_ruleset` (a repo's, or an org's: then every managed repo of the org), a forged `merge-hold`
status, `installation` ``new_permissions_accepted`` and ``unsuspend`` — start a *watch* of the repo:
every managed branch (the default branch and each open PR's base) is read again from GitHub with the
least permission (`core.gate`), never judged from the event's payload alone, and compared with its
last reading (`core.tamper.change`). A branch that stopped binding is recorded (`gate.unenforced`,
`gate.undetermined`), told to subscribed chat channels (`core.notices`), shown as a red banner on the
repo's dashboard pages and in `merge-hold doctor` (`state.gates`), and answered once per episode on
every held PR based on it; the requirement coming back clears the banner (`gate.restored`).

``installation`` ``suspend`` records a repo-wide episode (`app.suspended`) before the repo's keys are
dropped: a suspended App posts nothing, so no hold placed or lifted reaches GitHub. GitHub refuses a suspended
installation's tokens, so no PR can be answered then; chat, the banner and doctor still tell.

Events our own App causes never get here (`workers.events.dispatch` drops them): the freeze's own ruleset
(``merge-hold freeze``, context ``merge-hold/freeze``), switched by our bot, is not tampering — and a
ruleset requiring only ``merge-hold/freeze`` does not count as requiring ``merge-hold`` either way.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from core import jobs, keys, state_format, verdict_format
from core.events import repo_name
from core.freeze_gate import RULESET_NAME
from core.gate import UNENFORCED, GateReading, read_gate
from core.prstate import PullState
from core.tamper import BLIND, LOST, RESTORED, SUSPENDED, change, held_pr_answer
from state import audit, gates, store
from state.config_file import repo_config
from state.decoding import as_text
from state.queueing import enqueue_after
from workers.events.pr_replies import post_once
from workers.publishing import request_sync
from workers.runtime import Runtime, current

log = logging.getLogger(__name__)

LOCK_TIMEOUT = 120
"""A watch reads two answers per branch; a lock held longer than this belongs to a dead worker."""
INLINE_ANSWERS = 20
"""Held PRs answered within the delivery; more are answered by `ANSWER_JOB`, paced."""
ANSWERS_PER_RUN = 60
"""Comments one `ANSWER_JOB` run posts before it schedules the next a minute later (GitHub allows
about 80 content-creating requests a minute)."""
ANSWER_JOB = jobs.TAMPER_ANSWERS.address
EVENTS = {LOST: "gate.unenforced", BLIND: "gate.undetermined", RESTORED: "gate.restored"}
"""Audit event of each change (`core.notices` tells subscribed channels)."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sender(payload: dict[str, Any]) -> str | None:
    login = (payload.get("sender") or {}).get("login")
    return str(login) if login else None


def _event_of(payload: dict[str, Any]) -> str:
    if "rule" in payload:
        return "branch_protection_rule"
    return "repository_ruleset" if "repository_ruleset" in payload else "branch_protection_configuration"


def on_gate_event(rt: Runtime, payload: dict[str, Any]) -> str:
    """`branch_protection_rule`, `branch_protection_configuration`, `repository_ruleset`: watch the repo
    (or, for an org's ruleset, every managed repo of the org)."""
    event = _event_of(payload)
    repo = repo_name(payload)
    if repo is not None:
        repos = [repo]
    else:
        org = str((payload.get("organization") or {}).get("login") or "").lower()
        if not org:
            return "ignored"
        repos = sorted(r for r in (as_text(m) for m in rt.redis.smembers(keys.MANAGED_REPOS))
                       if r.split("/", 1)[0] == org)
    cause = f"{event} {payload.get('action') or ''}".strip()
    if event == "repository_ruleset" and (payload.get("repository_ruleset") or {}).get("name") == RULESET_NAME:
        # merge-hold's own freeze ruleset changed (by us, or by someone during a freeze): read it back and
        # repair it now rather than at the next reconcile.
        ruleset = payload.get("repository_ruleset") or {}
        org = str((payload.get("organization") or {}).get("login") or "").lower()
        if repo is None and ruleset.get("source_type") == "Organization" and org:
            request_sync(rt, org, verify=True)  # the org's own ruleset: one read, one repair
        else:
            for name in repos:
                request_sync(rt, name, verify=True)
    outcomes = [f"{name}: {watch_repo(rt, name, actor=_sender(payload), cause=cause)}" for name in repos]
    return "; ".join(outcomes) or "no managed repo"


def managed_branches(rt: Runtime, repo: str, default_branch: str) -> list[str]:
    """The default branch, then every base of an open PR (the branches a hold protects)."""
    numbers = store.open_numbers(rt.redis, repo)
    with rt.redis.pipeline(transaction=False) as pipe:
        for number in numbers:
            pipe.get(keys.pr_state(repo, number))
        raws = pipe.execute()
    bases: list[str] = [default_branch]
    for number, raw in zip(numbers, raws, strict=True):
        if raw is None:
            continue
        try:
            facts = PullState.from_dict(state_format.decode_state(raw, repo, number)[0]).facts
        except (ValueError, KeyError, TypeError):
            continue  # an unreadable state: its base is unknown, the default branch is still read
        if facts is not None and facts.open and facts.base and facts.base not in bases:
            bases.append(facts.base)
    return bases


def read_branch(rt: Runtime, repo: str, branch: str) -> GateReading:
    """GitHub's two answers for ``branch``, judged (`core.gate.read_gate`). GitHub down raises: the
    delivery is retried, since a watch that cannot read must not report a gate as fine or as gone."""
    path = f"/repos/{repo}"
    name = quote(branch, safe="")
    found = rt.github.get_answer(repo, f"{path}/branches/{name}")
    rules = rt.github.get_answer(repo, f"{path}/rules/branches/{name}", {"per_page": 100})
    return read_gate(branch, found, rules, rt.settings.github_app_id or -1)


def _episode(repo: str, branch: str, since: str) -> str:
    return hashlib.sha1(f"{repo.lower()}|{branch}|{since}".encode()).hexdigest()[:12]


def watch_repo(rt: Runtime, repo: str, *, actor: str | None, cause: str) -> str:
    """Read every managed branch of ``repo`` again; record, tell and answer what changed. Returns a
    summary ("main: lost, release/1: required")."""
    meta = store.load_repo(rt.redis, repo)
    if meta is None:
        return "not managed"
    with rt.redis.lock(keys.gate_lock(repo), timeout=LOCK_TIMEOUT, sleep=0.05, blocking_timeout=LOCK_TIMEOUT):
        record = gates.load(rt.redis, repo)
        record["repo"] = repo
        kept: dict[str, Any] = {}
        summary: list[str] = []
        for branch in managed_branches(rt, repo, meta.default_branch):
            reading = read_branch(rt, repo, branch)
            previous = record["branches"].get(branch)
            what = change(previous, reading.state)
            now = _now()
            # No news (the same state, or unenforced <-> undetermined) keeps the episode, its start and
            # who began it: its answers on the PRs are not given twice.
            ongoing = isinstance(previous, dict) and what is None and previous.get("since")
            since = str(previous["since"]) if ongoing and previous else now
            kept[branch] = {**reading.as_dict(), "checked_at": now, "since": since,
                            "cause": str(previous.get("cause") or cause) if ongoing and previous else cause,
                            "actor": previous.get("actor") if ongoing and previous else actor,
                            "episode": _episode(repo, branch, since)}
            summary.append(f"{branch}: {what or reading.state}")
            if what is not None:
                audit.record(rt.redis, repo, EVENTS[what], branch=branch, actor=actor, cause=cause,
                            detail=reading.detail, fix=reading.finding.fix)
                gates.bump(rt.redis, what)
        record["branches"] = kept  # a branch no longer managed (its last PR merged) is forgotten
        gates.save(rt.redis, repo, record)
    summary.append(answer_held(rt, repo, record))
    return ", ".join(summary)


def answer_held(rt: Runtime, repo: str, record: dict[str, Any], limit: int = INLINE_ANSWERS) -> str:
    """Tell each held PR based on an unenforced branch, once per episode; the rest go to `ANSWER_JOB`.
    A repo whose config says ``feedback: off`` gets no answers (chat, banner and doctor still tell)."""
    config, _error = repo_config(store.load_repo(rt.redis, repo))
    if config is not None and config.feedback == "off":
        return "answers off"
    lost = {b: r for b, r in (record.get("branches") or {}).items() if r.get("state") == UNENFORCED}
    if not lost:
        return "answered 0"
    posted = pending = 0
    for raw_number, raw in sorted(rt.redis.hgetall(keys.held_heads(repo)).items()):
        head = _held_head(raw)
        number = int(as_text(raw_number))
        reading = lost.get(str(head.get("base") or ""))
        if reading is None:
            continue
        marker = keys.tamper_answered(repo, number, str(reading["episode"]))
        if rt.redis.exists(marker):
            continue
        if posted >= limit:
            pending += 1
            continue
        body = held_pr_answer(str(reading["branch"]), reading.get("actor"), str(reading.get("detail") or ""),
                              str(reading.get("fix") or ""))
        if post_once(rt, repo, number, marker, body) == "posted":
            posted += 1
    if pending:
        enqueue_after(rt.queue, jobs.TAMPER_ANSWERS, repo, delay=60)
    return f"answered {posted}" + (f", {pending} later" if pending else "")


def _held_head(raw: Any) -> dict[str, Any]:
    try:
        found = verdict_format.expand_held_head(json.loads(raw))
    except (TypeError, ValueError):
        found = None
    return found or {}


def answer_job(repo: str) -> str:
    """The rq job: the next `ANSWERS_PER_RUN` answers of a repo with many held PRs."""
    rt = current()
    return answer_held(rt, repo, gates.load(rt.redis, repo), limit=ANSWERS_PER_RUN)


# -- installation: suspend, unsuspend, new permissions ---------------------------------------------


def _installation_repos(rt: Runtime, payload: dict[str, Any]) -> list[str]:
    inst = (payload.get("installation") or {}).get("id")
    names = {str(item["full_name"]) for item in payload.get("repositories") or [] if item.get("full_name")}
    if inst:
        names |= {as_text(r) for r in rt.redis.smembers(keys.installation_repos(int(inst)))}
    return sorted(names, key=str.lower)


def on_suspend(rt: Runtime, payload: dict[str, Any]) -> int:
    """Before a suspended installation's repos are dropped: record the episode on each (banner, chat)."""
    repos = _installation_repos(rt, payload)
    actor, inst = _sender(payload), (payload.get("installation") or {}).get("id")
    for repo in repos:
        with rt.redis.lock(keys.gate_lock(repo), timeout=LOCK_TIMEOUT, blocking_timeout=LOCK_TIMEOUT):
            record = gates.load(rt.redis, repo)
            if record["suspended"] is not None:
                continue  # a redelivery: recorded already
            record["suspended"] = {"actor": actor, "since": _now(), "installation_id": inst,
                                   "detail": "the App is suspended: merge-hold cannot post its status"}
            gates.save(rt.redis, repo, record)
        audit.record(rt.redis, repo, "app.suspended", actor=actor, installation_id=inst)
        gates.bump(rt.redis, SUSPENDED)
    return len(repos)


def forget_gates(rt: Runtime, repos: Iterable[str]) -> None:
    """The App left these repos: their readings and banners go (`state.gates.forget`)."""
    for repo in repos:
        gates.forget(rt.redis, repo)


def after_installation(rt: Runtime, payload: dict[str, Any]) -> str:
    """After ``unsuspend`` or ``new_permissions_accepted`` bootstrapped the repos: clear a suspension's
    banner and read every gate again (the permissions, or what happened meanwhile, may have changed)."""
    action = str(payload.get("action") or "")
    actor = _sender(payload)
    told: list[str] = []
    account = str(((payload.get("installation") or {}).get("account") or {}).get("login") or "")
    if action == "new_permissions_accepted" and account:
        # Organization administration may be granted now: the next org freeze tries its org ruleset again.
        rt.redis.delete(keys.org_freeze_fallback(account))
    for repo in _installation_repos(rt, payload):
        if action == "unsuspend":
            with rt.redis.lock(keys.gate_lock(repo), timeout=LOCK_TIMEOUT, blocking_timeout=LOCK_TIMEOUT):
                record = gates.load(rt.redis, repo)
                was = record["suspended"]
                record["suspended"] = None
                if was is not None:
                    gates.save(rt.redis, repo, record)
            if was is not None:
                audit.record(rt.redis, repo, "app.unsuspended", actor=actor)
                gates.bump(rt.redis, RESTORED)
        told.append(f"{repo}: {watch_repo(rt, repo, actor=actor, cause=f'installation {action}')}")
    return "; ".join(told)


def on_forged(rt: Runtime, repo: str, number: int, sender: str | None) -> str:
    """A forged `merge-hold` status was put back: a forgery only opens a gate that is not pinned to this
    App, so the repo's gates are read again (the forger did not change protection: no actor named)."""
    try:
        return watch_repo(rt, repo, actor=None, cause=f"a merge-hold status forged by @{sender or '?'} on #{number}")
    except Exception as exc:  # the put-back already happened; the watch is a second look, retried by the next event
        log.warning("tamper watch of %s after a forged status failed: %s", repo, exc)
        return f"watch failed: {exc}"
