"""A PR's history at a glance: one entry per act, with what came of it folded in.

The audit log records an act (``hold.held``: "@alice held this PR") and, a moment later, what it led to
(``verdict.held``, ``status.posted``): three lines for one act. Here each act is one entry whose outcome
is folded in ("— failure posted 0.4 s later"). Acts are the PR's own (comments, reviews, labels, page
actions, exemptions, incidents) and the room holds and freezes that reach it: a hold on the PR's repo,
on a branch glob matching its base (the repo's history), or on its owner (the global log, where an
org-wide hold is recorded). An outcome with no act just before it (a freeze window starting, a new
head commit, a reconcile) is an entry of its own. Newest first, `PAGE` a page, filtered by `KINDS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis import Redis

from core import keys
from core.scopes import scope_applies
from state.decoding import as_text

PAGE = 50
BATCH = 500
SCAN_CAP = 5000
"""Raw entries a page may examine: the repo history keeps about 2,000 (`state.audit.HISTORY_MAXLEN`)."""
ORG_SCAN = 2000
"""Global-log entries read per batch for the owner's org-wide holds."""
FOLD_WINDOW_MS = 120_000
"""An outcome this soon after an act is that act's; a later one (a reconcile, a new head) stands alone."""
OUTCOMES = frozenset({"verdict.held", "verdict.free", "status.posted"})
KINDS = {
    "holds": "Holds",
    "freezes": "Freezes and room holds",
    "exemptions": "Exemptions",
    "statuses": "Statuses",
    "incidents": "Incidents",
    "other": "Other",
}
"""The filter: key -> label."""


@dataclass(frozen=True)
class Raw:
    """One audit entry: its stream id (milliseconds since the epoch, sequence), event and data."""

    id: str
    event: str
    data: dict[str, Any]

    @property
    def ms(self) -> int:
        return int(self.id.partition("-")[0])

    @property
    def at(self) -> datetime:
        return datetime.fromtimestamp(self.ms / 1000, UTC)

    def as_entry(self) -> dict[str, Any]:
        """The shape the page's sentence filter reads (`app.dashboard.sentence_filter`)."""
        return {"id": self.id, "event": self.event, "data": self.data,
                "at": self.at.strftime("%Y-%m-%dT%H:%M:%SZ")}


@dataclass
class Act:
    raw: Raw
    outcomes: list[Raw] = field(default_factory=list)
    """Oldest first."""

    @property
    def kind(self) -> str:
        return kind_of(self.raw)

    @property
    def outcome(self) -> str:
        """``failure posted 0.4 s later``; ``the verdict became held``; "" when nothing followed."""
        posted = next((o for o in self.outcomes if o.event == "status.posted"), None)
        if posted is not None:
            return f"{posted.data.get('state') or '?'} posted {_later(posted.ms - self.raw.ms)}"
        verdict = next((o for o in self.outcomes if o.event.startswith("verdict.")), None)
        if verdict is not None:
            return f"the verdict became {verdict.event.partition('.')[2]} {_later(verdict.ms - self.raw.ms)}"
        return ""


def _later(ms: int) -> str:
    if ms < 1000:
        return f"{max(ms, 0) / 1000:.1f} s later"
    if ms < 60_000:
        return f"{ms // 1000} s later"
    return f"{ms // 60_000} min later"


def kind_of(raw: Raw) -> str:
    event, scope = raw.event, str(raw.data.get("scope") or "")
    if event.startswith("hold."):
        return "holds"
    if event in ("room.held", "room.lifted"):
        return "holds" if "#" in scope else "freezes"
    if event.startswith("room.") or event == "exemption.requested":
        return "exemptions"
    if event in OUTCOMES or event.startswith(("status.", "fanout.")):
        return "statuses"
    if event.startswith(("incident.", "gate.")):
        return "incidents"
    if event.startswith("freeze."):
        return "freezes"
    return "other"


def _parse(stream_id: Any, fields: dict[Any, Any]) -> Raw:
    text = {as_text(k): as_text(v)
            for k, v in fields.items()}
    try:
        data = json.loads(text.get("data") or "{}")
    except ValueError:
        data = {"message": text.get("data")}
    sid = as_text(stream_id)
    return Raw(sid, text.get("event") or "?", data if isinstance(data, dict) else {"value": data})


class Reader:
    """The raw entries about one PR, newest first, from its repo's history and (org-wide holds) the
    global log, read in batches below a cursor."""

    def __init__(self, r: Redis, repo: str, number: int, base: str | None) -> None:
        self.r, self.repo, self.number, self.base = r, repo, number, base
        self.owner = repo.split("/", 1)[0].lower()

    def about(self, raw: Raw) -> bool:
        data = raw.data
        if str(self.number) in (str(data.get("number")), str(data.get("pr"))) and \
                str(data.get("repo") or self.repo).lower() == self.repo.lower():
            return True
        scope = data.get("scope")
        if not (raw.event.startswith("room.") and isinstance(scope, str) and "#" not in scope):
            return False
        return scope_applies(scope, self.repo, self.number, self.base or "")

    def batch(self, before: str | None) -> tuple[list[Raw], str | None]:
        """Entries about the PR below ``before`` (one batch of the repo's history, and the owner's org-wide
        holds of the same span), newest first; and the cursor below them (None: nothing older)."""
        upper = f"({before}" if before else "+"
        found: list[Any] = self.r.xrevrange(keys.history(self.repo), max=upper, min="-", count=BATCH) or []
        raws = [_parse(sid, fields) for sid, fields in found]
        floor = raws[-1].id if len(found) == BATCH else "-"
        # The global log holds every repo's events: its span is read boundedly (ORG_SCAN), org-wide holds
        # further back than that in a busy installation are left out of this page.
        org: list[Any] = self.r.xrevrange(keys.AUDIT, max=upper, min=floor, count=ORG_SCAN) or []
        for sid, fields in org:
            raw = _parse(sid, fields)
            if raw.data.get("repo") is None and str(raw.data.get("scope") or "").lower() == \
                    self.owner and raw.event.startswith("room."):
                raws.append(raw)
        kept = sorted((r for r in raws if self.about(r)), key=lambda r: _order(r.id), reverse=True)
        return kept, (floor if floor != "-" else None)


def _order(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


def _orphans(newest_first: list[Raw]) -> list[Act]:
    """Outcomes with no act: a verdict change with the status it led to is one entry, a status alone one."""
    acts: list[Act] = []
    for raw in reversed(newest_first):  # oldest first, to fold a status into the verdict before it
        last = acts[-1] if acts else None
        if raw.event == "status.posted" and last is not None and last.raw.event.startswith("verdict.") and \
                not any(o.event == "status.posted" for o in last.outcomes) and \
                raw.ms - last.raw.ms <= FOLD_WINDOW_MS:
            last.outcomes.append(raw)
        else:
            acts.append(Act(raw))
    return list(reversed(acts))


def page(r: Redis, repo: str, number: int, base: str | None, *, before: str | None = None,
         kind: str | None = None, limit: int = PAGE) -> tuple[list[Act], str | None]:
    """One page of the PR's history, newest first, and the cursor of the next (None: the last page).

    A page ends on an act, and the next starts below that act's own entry: its outcomes are newer, so
    they are never shown twice, and whatever older was read but not shown is read again."""
    reader = Reader(r, repo, number, base)
    shown: list[Act] = []
    pending: list[Raw] = []  # outcomes newer than the next act, newest first
    cursor, scanned = before, 0

    def full(acts: list[Act]) -> bool:
        for act in acts:
            if kind is None or act.kind == kind:
                shown.append(act)
                if len(shown) == limit:
                    return True
        return False

    while True:
        raws, below = reader.batch(cursor)
        scanned += BATCH
        for raw in raws:
            if raw.event in OUTCOMES:
                pending.append(raw)
                continue
            near = [o for o in pending if o.ms - raw.ms <= FOLD_WINDOW_MS]
            far = [o for o in pending if o.ms - raw.ms > FOLD_WINDOW_MS]
            pending = []
            if full(_orphans(far)) or full([Act(raw, list(reversed(near)))]):
                return shown, shown[-1].raw.id
        if below is None or scanned >= SCAN_CAP:
            if full(_orphans(pending)):
                return shown, shown[-1].raw.id
            return shown, below  # below the scan cap: where to go on from, so nothing is skipped
        cursor = below


def recent(r: Redis, repo: str, number: int, base: str | None, since: datetime) -> list[Raw]:
    """Every entry about the PR from ``since`` on (what its timeline draws), oldest first; bounded by
    `SCAN_CAP` entries read."""
    reader = Reader(r, repo, number, base)
    found: list[Raw] = []
    cursor, scanned, floor = None, 0, since.timestamp() * 1000
    while scanned < SCAN_CAP:
        raws, below = reader.batch(cursor)
        scanned += BATCH
        found += [raw for raw in raws if raw.ms >= floor]
        if below is None or (raws and raws[-1].ms < floor) or int(below.partition("-")[0]) < floor:
            break
        cursor = below
    return sorted(found, key=lambda raw: _order(raw.id))
