"""The check run `merge-hold / holds`: what a held PR's Checks tab shows, as pure data (issue 29).

The `merge-hold` status stays the gate (140 characters, required by protection). Beside it, on the same
head commit, this check run says the rest in Markdown: every hold with who placed it, why, since when and
until when (an exact UTC time and how far off), how each is lifted and by whom, the freeze that covers the
PR, the exemption that lets it through, the last acts on the PR as sentences, and three buttons
(GitHub's *requested actions*) whose clicks come back as ``check_run`` ``requested_action`` deliveries.

`view` is what the run shows, as plain JSON: the writer compares it (`digest`) with what it last wrote
and writes only on a change. `body` renders it at a given moment (the relative times are the only part
that depends on the clock, and they alone never cause a write). Pure: no I/O, no clock unless passed in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.holds import EXEMPTIBLE, Source, from_iso, named

NAME = "merge-hold / holds"
"""The check run's name: one run of this name per head commit, updated in place."""
MAX_ACTIONS = 3
MAX_LABEL = 20
MAX_DESCRIPTION = 40
MAX_IDENTIFIER = 20
"""GitHub's limits on ``actions`` (a longer one, or a fourth, is answered 422)."""
MAX_SUMMARY = 65_535
"""GitHub's limit on ``output.summary`` (and on ``output.text``)."""
MAX_TITLE = 255
MAX_ACTS = 5
"""Acts on the PR shown as sentences, newest first."""

LIFT, EXEMPT, REFRESH = "lift", "exempt", "refresh"
NOT_CODE = "a person's decision; not fixable by changing code"


@dataclass(frozen=True)
class Action:
    identifier: str
    label: str
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"label": self.label, "description": self.description, "identifier": self.identifier}


ACTIONS: dict[str, Action] = {
    LIFT: Action(LIFT, "Lift my hold", "Lift the holds you placed on this PR"),
    EXEMPT: Action(EXEMPT, "Request exemption", "Ask the freeze's room to let it through"),
    REFRESH: Action(REFRESH, "Refresh", "Recompute the holds now"),
}
"""The buttons, by the identifier a click carries back (``requested_action.identifier``)."""


def actions_for(view: Mapping[str, Any]) -> list[dict[str, str]]:
    """The buttons a run offers: *Lift my hold* while held, *Request exemption* while a freeze or room hold
    (the kinds an exemption passes) holds it, *Refresh* always."""
    if view.get("off"):
        return []
    held = bool(view.get("holds"))
    freezing = any(h.get("source") in EXEMPTIBLE for h in view.get("holds") or [])
    wanted = [LIFT] * held + [EXEMPT] * freezing + [REFRESH]
    return [ACTIONS[name].as_dict() for name in wanted]


def view(record: Mapping[str, Any], *, pr_url: str, rooms_url: str, exemption: Mapping[str, Any] | None = None,
         acts: Sequence[str] = (), hold_permission: str = "write", lift_others_permission: str = "maintain",
         hold_label: str = "") -> dict[str, Any]:
    """What the run shows for a verdict record (`core.verdict.verdict_record`): plain JSON, compared whole."""
    return {
        "held": bool(record.get("held")), "error": record.get("error"),
        "holds": [{k: h.get(k) for k in ("id", "source", "scope", "holder", "reason", "created_at", "expires_at",
                                         "origin")} for h in record.get("holds") or []],
        "exemption": dict(exemption) if exemption else None,
        "acts": list(acts)[:MAX_ACTS],
        "pr_url": pr_url, "rooms_url": rooms_url,
        "rules": {"hold": hold_permission, "lift_others": lift_others_permission, "label": hold_label},
    }


def comment_holds_shown(shown: Mapping[str, Any]) -> dict[str, str]:
    """Each holder's comment-like hold the run shows, by lower-case login: its time. A *Lift my hold* click
    on this run comes after the hold it showed (`core.comment_rules.dashboard_time`'s ``seen``)."""
    return {str(h.get("holder")).lower(): str(h["created_at"]) for h in shown.get("holds") or []
            if h.get("source") == Source.COMMENT and h.get("holder") and h.get("created_at")}


OFF_SUMMARY = ("`check_run: false` in `.github/merge-hold.yml`: this run is no longer updated. The `merge-hold` "
               "status stays the gate and says whether this PR is held.")


def off_view(pr_url: str) -> dict[str, Any]:
    """What a run last written as held shows once the repo turns runs off: not blocking, no buttons, said
    once (a run left saying *held* would stay so after the hold is lifted)."""
    return {"off": True, "held": False, "error": None, "holds": [], "exemption": None, "acts": [], "pr_url": pr_url}


def digest(shown: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()


def blocking(shown: Mapping[str, Any]) -> bool:
    return bool(shown.get("holds")) or bool(shown.get("error"))


def freeze_only(shown: Mapping[str, Any]) -> bool:
    """Held by freezes and room holds that reach it by scope alone (not its own): lowest priority."""
    holds = shown.get("holds") or []
    return bool(holds) and all(h.get("source") in EXEMPTIBLE and "#" not in str(h.get("scope")) for h in holds)


def title(shown: Mapping[str, Any]) -> str:
    if shown.get("off"):
        return "Turned off for this repository"
    if shown.get("error"):
        return "Cannot establish holds"
    holds = shown.get("holds") or []
    if not holds:
        return "No holds"
    first = holds[0]
    more = f" (+{len(holds) - 1} more)" if len(holds) > 1 else ""
    return _cut(f"{_who(first)}{more}", MAX_TITLE)


def _who(hold: Mapping[str, Any]) -> str:
    source, holder = hold.get("source"), str(hold.get("holder") or "")
    if source == Source.REVIEW:
        return f"Changes requested by @{holder}"
    if source == Source.LABEL:
        return f"Held by label {str(hold.get('origin') or '').removeprefix('label:')}"
    if source == Source.FREEZE:
        return f"Frozen by {holder or hold.get('origin')}"
    return f"Held by {named(holder)}" if holder else "Held"


def when(moment: str | None, now: datetime) -> str:
    """``2026-12-05 23:00 UTC (in 1 h 20 min)``: exact, then relative to ``now``."""
    at = from_iso(moment)
    if at is None:
        return "no end set"
    seconds = int((at - now).total_seconds())
    span = _span(abs(seconds))
    relative = "now" if abs(seconds) < 60 else (f"in {span}" if seconds > 0 else f"{span} ago")
    return f"{at.strftime('%Y-%m-%d %H:%M')} UTC ({relative})"


def _span(seconds: int) -> str:
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes and not days)
    return " ".join(parts) or "less than a minute"


def how_lifted(hold: Mapping[str, Any], rules: Mapping[str, str]) -> str:
    """How one hold is lifted, and by whom (Markdown; outside text escaped)."""
    source, holder = hold.get("source"), _md(str(hold.get("holder") or ""))
    others = _md(rules.get("lift_others", "maintain"))
    if source == Source.COMMENT:
        return (f"{named(holder)} comments `/unhold` (or clicks **Lift my hold**); someone with {others} access "
                f"comments `/unhold @{holder}`")
    if source == Source.REVIEW:
        return f"@{holder} approves or reviews again, or someone with write access dismisses the review"
    if source == Source.LABEL:
        label = str(rules.get("label") or str(hold.get("origin") or "").removeprefix("label:"))
        return f"anyone who may edit labels removes the label {_code(label)}"
    if source == Source.ROOM:
        scope = str(hold.get("scope") or "").replace("`", "'")
        return (f"{named(holder)} lifts it where it was placed ({_md(str(hold.get('origin') or 'merge-hold'))}: "
                f"`/unhold {scope}`, the rooms page or the API); an exemption lets this PR through "
                "(**Request exemption**)")
    return ("it ends with its window, or when whoever froze it thaws it; an exemption lets this PR through "
            "(**Request exemption**)")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _line(hold: Mapping[str, Any], now: datetime, rules: Mapping[str, str]) -> list[str]:
    reason = str(hold.get("reason") or "").replace("\n", " ")
    ends = f"; ends {when(hold.get('expires_at'), now)}" if hold.get("expires_at") else "; no end set"
    kind = {"comment": "comment", "review": "review", "label": "label", "room": "room hold", "freeze": "freeze"}
    return [
        f"- **{_md(_who(hold))}** ({kind.get(str(hold.get('source')), str(hold.get('source')))}"
        f"{', ' + _md(str(hold.get('scope'))) if hold.get('source') in EXEMPTIBLE else ''}): {_md(reason) or '—'}",
        f"  - since {when(hold.get('created_at'), now)}{ends}",
        f"  - lifted when: {how_lifted(hold, rules)}",
    ]


def summary(shown: Mapping[str, Any], now: datetime) -> str:
    """The run's Markdown summary, rendered at ``now`` (cut to GitHub's 65,535 characters)."""
    if shown.get("off"):
        return OFF_SUMMARY
    holds = shown.get("holds") or []
    rules = shown.get("rules") or {}
    lines: list[str] = []
    if shown.get("error"):
        lines += [f"merge-hold cannot establish this PR's holds: {_md(str(shown['error']))}. Until it can, the "
                  "`merge-hold` status keeps the PR from merging.", ""]
    elif holds:
        lines += [f"This PR is held: **{NOT_CODE}**. Pushing commits does not lift a hold; a person does.", ""]
        lines += [f"### Holds ({len(holds)})", ""]
        for hold in holds:
            lines += _line(hold, now, rules)
        freezes = [h for h in holds if h.get("source") in EXEMPTIBLE and "#" not in str(h.get("scope"))]
        if freezes:
            lines += ["", "### Freeze", ""]
            lines += [f"- {_md(str(h.get('scope')))}: {_md(str(h.get('reason') or ''))} — "
                      + (f"ends {when(h.get('expires_at'), now)}" if h.get("expires_at") else "until lifted")
                      for h in freezes]
    else:
        lines += ["No holds: nothing from merge-hold stops this PR from merging.", ""]
    exemption = shown.get("exemption")
    if exemption:
        until = f", until {when(exemption.get('expires_at'), now)}" if exemption.get("expires_at") else ""
        lines += ["", "### Exemption", "",
                  f"Exempted by {named(str(exemption.get('by') or ''))}: {_md(str(exemption.get('reason') or ''))}"
                  f"{until} — it lets this PR through freezes and room holds (never comment, review or label holds)."]
    acts = shown.get("acts") or []
    if acts:
        lines += ["", "### Recently", ""] + [f"- {_md(act)}" for act in acts]
    lines += ["", f"[This PR on merge-hold]({shown.get('pr_url')}) · [Rooms and freezes]({shown.get('rooms_url')})"]
    return _cut("\n".join(lines), MAX_SUMMARY)


def conclusion(shown: Mapping[str, Any]) -> str:
    """``action_required`` while anything holds (it needs a person, not a code change), else ``success``;
    ``neutral`` once turned off (it says nothing of the PR any more)."""
    if shown.get("off"):
        return "neutral"
    return "action_required" if blocking(shown) else "success"


def body(shown: Mapping[str, Any], head_sha: str, now: datetime, *, details_url: str | None = None) -> dict[str, Any]:
    """The body of ``POST /repos/{o}/{r}/check-runs`` (the ``PATCH`` takes the same without ``head_sha``)."""
    payload: dict[str, Any] = {
        "name": NAME, "head_sha": head_sha, "status": "completed", "conclusion": conclusion(shown),
        "completed_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "output": {"title": title(shown), "summary": summary(shown, now)},
        "actions": actions_for(shown),
    }
    if details_url:
        payload["details_url"] = details_url
    return payload


def check_actions(actions: Iterable[Mapping[str, Any]]) -> str | None:
    """Why GitHub would refuse these ``actions`` (None: it takes them): the same limits it checks."""
    listed = list(actions)
    if len(listed) > MAX_ACTIONS:
        return f"at most {MAX_ACTIONS} actions"
    for action in listed:
        for name, limit in (("label", MAX_LABEL), ("description", MAX_DESCRIPTION), ("identifier", MAX_IDENTIFIER)):
            value = action.get(name)
            if not isinstance(value, str) or not value or len(value) > limit:
                return f"{name} must be 1 to {limit} characters"
    return None


def _md(text: str) -> str:
    """Outside text (reasons, names) shown as text: Markdown's active characters escaped."""
    out = []
    for char in text.replace("\r", " ").replace("\n", " "):
        out.append("\\" + char if char in "\\`*_[]<>|#!~" else char)
    return "".join(out)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
