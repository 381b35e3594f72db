"""Incidents: a pull request merged while merge-hold held it (design §3, "judged afterwards"). Pure.

The hook and the required status act before a merge; this judges what landed, afterwards, whatever the
in-session guard did. A `pull_request` ``closed`` with ``merged: true`` is an incident when, as the
event is applied, the PR's verdict is held (or could not be established), or the last `merge-hold`
status on the merged head is not a `success` posted by merge-hold: a failure or pending status (someone
bypassed the check — an admin, or a branch that stopped requiring it), or a `success` someone else
posted (forged). A head with no `merge-hold` status at all is judged by the verdict alone; a status that
could not be read makes the incident *undetermined*, never clean.

The worker (`workers.events.incidents`) reads the verdict record and the last status *before* the closed PR is
forgotten, hands them here, and stores what `record` returns once per PR.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.escaping import for_github_comment, one_line

KINDS = ("held", "error", "status", "forged", "undetermined")
"""Why a merge is an incident (the metric's label): held verdict, verdict not established, a last status
that is not success, a success merge-hold did not post, a last status that could not be read."""
MAX_HOOK_RECORDS = 20
MAX_FORGERIES = 10
LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
"""A GitHub login as a PR holder writes it (comment and review holds); only those are @-mentioned."""
MAX_COMMENT = 4000


@dataclass(frozen=True)
class Merge:
    """What the `closed` payload says about the merge."""

    repo: str
    number: int
    head_sha: str
    base: str
    merged_by: str | None
    merged_at: str | None
    sender: str | None
    title: str
    url: str


def merge_of(repo: str, payload: Mapping[str, Any]) -> Merge | None:
    """The merge a `pull_request` delivery reports, or None when it is not a merge (closed unmerged,
    another action, a malformed PR)."""
    pull = payload.get("pull_request")
    if payload.get("action") != "closed" or not isinstance(pull, dict):
        return None
    if not (pull.get("merged") is True or (pull.get("merged") is None and pull.get("merged_at"))):
        return None
    try:
        number = int(pull["number"])
    except (KeyError, TypeError, ValueError):
        return None
    head, base = pull.get("head") or {}, pull.get("base") or {}
    merged_by = (pull.get("merged_by") or {}).get("login") if isinstance(pull.get("merged_by"), dict) else None
    sender = (payload.get("sender") or {}).get("login") if isinstance(payload.get("sender"), dict) else None
    return Merge(repo=repo, number=number, head_sha=str(head.get("sha") or ""), base=str(base.get("ref") or ""),
                 merged_by=str(merged_by) if merged_by else None, merged_at=pull.get("merged_at") or None,
                 sender=str(sender) if sender else None, title=str(pull.get("title") or ""),
                 url=str(pull.get("html_url") or ""))


def last_status_from_posted(posted: Mapping[str, Any] | None, head_sha: str,
                            bot_login: str | None) -> dict[str, Any] | None:
    """Our last post (`core.keys.posted`), when it is on the merged head; None means "ask GitHub"."""
    if not posted or not head_sha or posted.get("sha") != head_sha:
        return None
    return {"sha": head_sha, "state": posted.get("state"), "description": posted.get("description"),
            "creator": bot_login, "ours": True}


def last_status_from_github(statuses: Sequence[Mapping[str, Any]], head_sha: str, context: str,
                            bot_login: str | None) -> dict[str, Any] | None:
    """The newest `context` status in GitHub's list for the head (newest first, as GitHub lists them)."""
    for item in statuses:
        if item.get("context") != context:
            continue
        creator = (item.get("creator") or {}).get("login") if isinstance(item.get("creator"), dict) else None
        return {"sha": head_sha, "state": item.get("state"), "description": item.get("description"),
                "creator": creator, "ours": bool(bot_login) and creator == bot_login}
    return None


def _holds_phrase(holds: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for hold in holds[:5]:
        who = str(hold.get("holder") or hold.get("origin") or hold.get("source") or "?")
        if hold.get("source") in ("comment", "review") and LOGIN.fullmatch(who):
            who = f"@{who}"
        reason = str(hold.get("reason") or "").strip()
        parts.append(f"{who}{f' ({reason})' if reason else ''}")
    more = len(holds) - len(parts)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def reasons(verdict: Mapping[str, Any] | None, last: Mapping[str, Any] | None, *,
            status_unreadable: str | None = None) -> list[tuple[str, str]]:
    """(kind, sentence) for each reason the merge is an incident; empty: the merge was clean.

    ``last`` is the last `merge-hold` status on the merged head (`last_status_from_posted`, else
    `last_status_from_github`); ``status_unreadable`` says why it could not be read, when it could not."""
    found: list[tuple[str, str]] = []
    if verdict is not None and verdict.get("error"):
        found.append(("error", f"its verdict could not be established ({verdict['error']})"))
    elif verdict is not None and verdict.get("held"):
        found.append(("held", f"it was held by {_holds_phrase(list(verdict.get('holds') or []))}"))
    if status_unreadable is not None and last is None:
        found.append(("undetermined", f"the merge-hold status on the merged head could not be read "
                                      f"({status_unreadable})"))
    elif last is None:
        pass  # nothing was posted on that head: only the verdict can make it an incident
    elif last.get("state") != "success":
        found.append(("status", f"the last merge-hold status on the merged head was {last.get('state')}"
                                f"{': ' + str(last['description']) if last.get('description') else ''}"))
    elif not last.get("ours"):
        found.append(("forged", f"the merge-hold success on the merged head was posted by "
                                f"@{last.get('creator') or 'someone'}, not by merge-hold"))
    return found


def about_pr(record: Mapping[str, Any], repo: str, number: int) -> bool:
    """Whether a hook record (``hook.gate.fired``) judged a merge of ``repo#number``."""
    def same(item: Mapping[str, Any]) -> bool:
        return str(item.get("repo") or "").lower() == repo.lower() and str(item.get("pr")) == str(number)

    merges = record.get("merges")
    return same(record) or (isinstance(merges, list) and any(isinstance(m, dict) and same(m) for m in merges))


def record(merge: Merge, verdict: Mapping[str, Any] | None, last: Mapping[str, Any] | None,
           found: Sequence[tuple[str, str]], *, recorded_at: str, forgeries: Sequence[Mapping[str, Any]] = (),
           hook_records: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The stored incident (`state.incidents`; the API's shape)."""
    kept = ("held", "error", "state", "description", "holds", "version", "computed_at", "head_sha", "base")
    return {
        "id": f"{merge.repo.lower()}#{merge.number}",
        "anchor": anchor(merge.repo, merge.number),
        "repo": merge.repo, "number": merge.number, "title": merge.title, "url": merge.url,
        "merged_by": merge.merged_by, "merged_at": merge.merged_at, "sender": merge.sender,
        "head_sha": merge.head_sha, "base": merge.base, "recorded_at": recorded_at,
        "kinds": list(dict.fromkeys(kind for kind, _ in found)),
        "reasons": [text for _, text in found],
        "verdict": {k: verdict.get(k) for k in kept} if verdict is not None else None,
        "holds": list((verdict or {}).get("holds") or []),
        "last_status": dict(last) if last is not None else None,
        "forgeries": [dict(f) for f in forgeries[:MAX_FORGERIES]],
        "hook_records": [dict(h) for h in hook_records[:MAX_HOOK_RECORDS]],
        "comment": "pending",
    }


def anchor(repo: str, number: int) -> str:
    """The incident's HTML id on ``/incidents`` (a fragment without ``#`` or ``/`` in it)."""
    return f"incident-{repo.lower().replace('/', '--')}-{number}"


def mentions(holds: Sequence[Mapping[str, Any]]) -> list[str]:
    """The holders to @-mention: GitHub users who placed comment or review holds (chat holders are chat
    ids, labels and freezes have no person)."""
    found: list[str] = []
    for hold in holds:
        holder = str(hold.get("holder") or "")
        if hold.get("source") in ("comment", "review") and LOGIN.fullmatch(holder) and holder not in found:
            found.append(holder)
    return found


def comment(incident: Mapping[str, Any], dashboard_url: str) -> str:
    """The one answer on the merged PR: who merged it, why it was an incident, the holders told. No line
    starts with ``/`` and no one else is mentioned, whatever the records say (`core.escaping`)."""
    who = f"@{incident['merged_by']}" if incident.get("merged_by") else "someone"
    when = f" at {incident['merged_at']}" if incident.get("merged_at") else ""
    lines = [f"**merge-hold: this pull request was merged while it should not have been.** {who} merged it{when}:"]
    lines += [f"- {one_line(str(text))}" for text in incident.get("reasons") or []]
    for hook in (incident.get("hook_records") or [])[:3]:
        said = one_line(str(hook.get("reason") or hook.get("code") or ""))  # an agent's text: one line, ours
        lines.append(f"- the agent guard judged a merge of it: {one_line(str(hook.get('decision', '?')))} "
                     f"({said or 'no reason'})")
    people = mentions(list(incident.get("holds") or []))
    if people:
        lines.append("")
        lines.append(" ".join(f"@{p}" for p in people) + ": your hold was not enforced.")
    lines.append("")
    where = incident.get("anchor") or anchor(str(incident["repo"]), int(incident["number"]))
    lines.append(f"Recorded as an incident: {dashboard_url.rstrip('/')}/incidents#{where}")
    # Checked on the final text (`core.escaping`): no line starts with a command, and only the people
    # this comment means to tell — the holders, who merged, who forged a status — are mentioned.
    last = incident.get("last_status") if isinstance(incident.get("last_status"), dict) else {}
    told = [*people, str(incident.get("merged_by") or ""), str((last or {}).get("creator") or "")]
    return for_github_comment("\n".join(lines)[:MAX_COMMENT], told)
