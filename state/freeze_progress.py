"""How far each freeze has got, from Redis alone (`/rooms` and the chat `/holds` answer: no GitHub call).

A freeze is a room hold on a repo, a branch glob or an org. What binds it, per reached repo:

- **the ruleset** (``freeze_mode: ruleset``): the repo's record `core.keys.freeze_ruleset` says whether
  merge-hold's ruleset is ``active`` over the frozen branches — "rulesets active N of M". A repo that
  could not write it (`core.keys.freeze_fallback`, with the reason) freezes through statuses meanwhile.
  A PR the active ruleset binds is blocked at once; what is left to write is its `merge-hold/freeze`
  description (the record's ``freeze_mark``, shown once `core.keys.posted_mark` matches it).
- **statuses** elsewhere: a PR is frozen for GitHub once its verdict record names the hold and the
  `merge-hold` status posted on its head (`core.keys.posted`) is the one the record asks for.

A freeze scoped by ``paths`` is carried by statuses in every mode, and reaches only the PRs whose
verdict record names it (those whose changed files it holds). An exempt PR (its exemption covering the
head its record was made for) passes the freeze, so it is counted among the exemptions and not among the
statuses to write; under a ruleset its mark (the exemption's ``success``) still counts, since it is what lets it
through. Two pipelined round trips whatever the number of repos and PRs: per org freeze its org ruleset's
record and fallback and per repo a few GETs, then one
MGET per repo and key kind (a repo's keys share one hash tag, so each MGET stays on one slot).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from redis import Redis

from core import keys, verdict_format
from core.freeze_gate import ALL, binds, branch_pattern
from core.holds import Exemption, Hold
from core.org_freeze import org_binds
from core.scopes import scope_applies, scope_repo
from state import posted_status
from state.decoding import as_text, maybe_text


@dataclass(frozen=True)
class Count:
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class Progress:
    """One freeze's progress; ``rulesets`` counts only the reached repos that freeze through a ruleset."""

    hold_id: str
    scope: str
    repos: int = 0
    rulesets: Count = Count()
    fallbacks: tuple[tuple[str, str], ...] = ()
    """(repo, why it freezes through statuses instead of its ruleset)."""
    statuses: Count = Count()
    descriptions: Count = Count()
    exemptions: int = 0
    mode: str = ""
    """For an org freeze in ruleset mode: "org ruleset" (one organisation ruleset binds the org), or
    "per-repo rulesets: why" (the org ruleset could not be written: `core.keys.org_freeze_fallback`)."""
    deferred: tuple[tuple[str, str], ...] = ()
    """(repo, when its ruleset binds): activations waiting for GitHub's hourly write window."""


@dataclass
class _Repo:
    ruleset: dict[str, Any] | None = None
    fallback: str | None = None
    deferred: str | None = None
    numbers: list[int] = field(default_factory=list)
    exempt: dict[int, Exemption] = field(default_factory=dict)
    records: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    posted: dict[int, Any] = field(default_factory=dict)
    marks: dict[int, Any] = field(default_factory=dict)


def _json(raw: Any) -> Any:
    try:
        return json.loads(raw) if raw is not None else None
    except ValueError:
        return None


def reached_repos(scope: str, repos: Iterable[str]) -> list[str]:
    """The repos among ``repos`` (lower-cased full names) that a hold on ``scope`` reaches."""
    repo = scope_repo(scope)
    if repo is not None:
        return [r for r in repos if r == repo.lower()]
    return [r for r in repos if r.split("/", 1)[0] == scope.lower()]


def wanted_posted(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `keys.posted` JSON that shows ``record`` on GitHub (`state.posted_status`, parsed back)."""
    wanted = posted_status.wanted_status(record)
    return None if wanted is None else posted_status.parse(posted_status.form(*wanted))


def _mark_shown(record: dict[str, Any] | None, posted: Any) -> bool:
    mark = record.get("freeze_mark") if record else None
    return bool(record and isinstance(mark, dict) and isinstance(posted, dict)
                and posted.get("sha") == record.get("head_sha")
                and posted.get("state") == mark.get("state") and posted.get("description") == mark.get("description"))


def _covers(ruleset: dict[str, Any] | None, scope: str) -> bool:
    """The recorded ruleset is active over the whole of ``scope`` (a branch glob, or every branch)."""
    if not ruleset or ruleset.get("enforcement") != "active":
        return False
    include = ruleset.get("include") or ()
    return ALL in include or ("@" in scope and branch_pattern(scope.partition("@")[2]) in include)


OrgState = tuple[dict[str, Any] | None, str | None]
"""An org's ruleset record, and why it fell back to per-repo rulesets."""


def _load(redis: Redis, repos: list[str], now: datetime,
          orgs: list[str]) -> tuple[dict[str, _Repo], dict[str, OrgState]]:
    found = {r: _Repo() for r in repos}
    with redis.pipeline(transaction=False) as pipe:
        for org in orgs:
            pipe.get(keys.org_freeze_ruleset(org))
            pipe.get(keys.org_freeze_fallback(org))
        for repo in repos:
            pipe.get(keys.freeze_ruleset(repo))
            pipe.get(keys.freeze_fallback(repo))
            pipe.smembers(keys.open_prs(repo))
            pipe.hgetall(keys.exemptions(repo))
            pipe.get(keys.freeze_deferred(repo))
        answers = pipe.execute()
    by_org: dict[str, OrgState] = {}
    for i, org in enumerate(orgs):
        record, fell = _json(answers[2 * i]), _json(answers[2 * i + 1])
        by_org[org] = (record if isinstance(record, dict) else None,
                       str(fell.get("reason")) if isinstance(fell, dict) else None)
    answers = answers[2 * len(orgs):]
    for i, repo in enumerate(repos):
        ruleset, fallback, members, exemptions, deferred = answers[5 * i:5 * i + 5]
        entry = found[repo]
        later = _json(deferred)
        entry.deferred = str(later.get("until")) if isinstance(later, dict) else None
        parsed = _json(ruleset)
        entry.ruleset = parsed if isinstance(parsed, dict) else None
        entry.fallback = maybe_text(fallback)
        entry.numbers = sorted(int(n) for n in map(as_text, members) if n.isdigit())
        for number, raw in exemptions.items():
            data = _json(raw)
            if as_text(number).isdigit() and isinstance(data, dict) and Exemption.from_dict(data).active(now):
                entry.exempt[int(as_text(number))] = Exemption.from_dict(data)
    with redis.pipeline(transaction=False) as pipe:
        asked = [r for r in repos if found[r].numbers]
        for repo in asked:
            numbers = found[repo].numbers
            pipe.mget([keys.verdict(repo, n) for n in numbers])
            pipe.mget([keys.posted(repo, n) for n in numbers])
            pipe.mget([keys.posted_mark(repo, n) for n in numbers])
        answers = pipe.execute() if asked else []
    for i, repo in enumerate(asked):
        entry, (verdicts, posted, marks) = found[repo], answers[3 * i:3 * i + 3]
        for number, raw_verdict, raw_posted, raw_mark in zip(entry.numbers, verdicts, posted, marks, strict=True):
            entry.records[number] = verdict_format.decode_verdict(raw_verdict, repo, number)
            entry.posted[number], entry.marks[number] = _json(raw_posted), _json(raw_mark)
    return found, by_org


def _org_covers(record: dict[str, Any] | None, repo: str) -> bool:
    return bool(record) and org_binds(record, repo, "~")


def _one(hold: Hold, reached: list[str], state: dict[str, _Repo], ruleset_repos: set[str],
         now: datetime, org: OrgState | None = None) -> Progress:
    org_ruleset, org_fallback = org if org is not None else (None, None)
    rulesets = [r for r in reached if r in ruleset_repos or _org_covers(org_ruleset, r)]
    statuses, descriptions, exempt = Count(), Count(), 0
    for repo in reached:
        entry = state[repo]
        for number in entry.numbers:
            record = entry.records.get(number)
            base = record.get("base") if record else None
            if "@" in hold.scope and not isinstance(base, str):
                continue  # a branch freeze reaches the PR only if its base is known to match
            if not scope_applies(hold.scope, repo, number, str(base or "")):
                continue
            named = record is not None and any(h.get("id") == hold.id for h in record.get("holds") or ())
            if hold.paths and not named:
                continue  # a path-scoped hold reaches only the PRs whose changed files it holds
            found = entry.exempt.get(number)
            is_exempt = found is not None and found.covers(record.get("head_sha") if record else None, now)
            exempt += int(is_exempt)
            if not hold.paths and (binds(entry.ruleset, base if isinstance(base, str) else None)
                                   or _org_covers(org_ruleset, repo)):
                descriptions = Count(descriptions.done + int(_mark_shown(record, entry.marks.get(number))),
                                     descriptions.total + 1)
            elif not is_exempt:
                # A record made while the ruleset bound it has its status without the freeze.
                written = named and record is not None and (hold.paths or not record.get("freeze_mark")) \
                    and entry.posted.get(number) == wanted_posted(record)
                statuses = Count(statuses.done + int(written), statuses.total + 1)
    return Progress(
        hold_id=hold.id, scope=hold.scope, repos=len(reached),
        rulesets=Count(sum(_covers(state[r].ruleset, hold.scope) or _org_covers(org_ruleset, r) for r in rulesets),
                       len(rulesets)),
        fallbacks=tuple((r, state[r].fallback or "") for r in reached if state[r].fallback is not None),
        statuses=statuses, descriptions=descriptions, exemptions=exempt,
        mode="" if org is None or not (org_ruleset or org_fallback) else
        ("org ruleset" if org_fallback is None else f"per-repo rulesets: {org_fallback}"),
        deferred=tuple((r, state[r].deferred or "") for r in reached if state[r].deferred is not None))


def progress(redis: Redis, holds: Iterable[Hold], repos: Iterable[str], now: datetime,
             ruleset_repos: Iterable[str] = ()) -> dict[str, Progress]:
    """Hold id -> progress of each freeze among ``holds`` (PR-scoped holds are no freeze: left out),
    over the managed ``repos`` the viewer may see; ``ruleset_repos``: those whose mode is ``ruleset``."""
    freezes = [h for h in holds if "#" not in h.scope]
    candidates = sorted({r.lower() for r in repos})
    reach = {h.id: reached_repos(h.scope, candidates) for h in freezes}
    orgs_asked = sorted({h.scope.lower() for h in freezes if "/" not in h.scope})
    state, orgs = _load(redis, sorted({r for rs in reach.values() for r in rs}), now, orgs_asked)
    modes = {r.lower() for r in ruleset_repos}
    return {h.id: _one(h, reach[h.id], state, modes, now, orgs.get(h.scope.lower())) for h in freezes}
