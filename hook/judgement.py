"""What a judgement is, and the words the guard tells the agent (shared by merges, lifts and pushes).

Pure, like `hook.decide`: no I/O. The messages name the PR, each holder and reason, how each hold is
lifted (by a person), and that the agent must stop and ask the user rather than work around it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hook.detect.model import Merge
    from hook.spec import Spec

RECORD_SCHEMA = 1
"""The verdict record shape this guard understands (`core.verdict.RECORD_SCHEMA`, not imported: cost)."""
MAX_HOLDS_SHOWN = 10

STOP = (
    "Stop here and ask the user how to proceed. Do not work around the hold: no other merge command, "
    "API call, auto-merge, push to the base branch, or lifting the hold yourself."
)


class Judgement:
    __slots__ = ("code", "decision", "merge", "message", "pr", "reason", "repo")

    def __init__(self, merge: Merge, decision: str, code: str, reason: str, *,
                 pr: int | None = None, message: str = "") -> None:
        self.merge = merge
        self.decision = decision  # "allow" | "block"
        self.code = code
        self.reason = reason
        self.repo = merge.repo
        self.pr = pr if pr is not None else merge.pr
        self.message = message

    @property
    def blocks(self) -> bool:
        return self.decision == "block"


def unknown(merge: Merge, spec: Spec, why: str, pr: int | None = None) -> Judgement:
    number = pr if pr is not None else merge.pr
    target = f"{merge.repo}#{number}" if merge.repo and number else (merge.repo or "the target PR")
    reason = f"cannot establish whether {target} is held ({why}); on_unknown is {spec.on_unknown}"
    if spec.on_unknown == "allow":
        return Judgement(merge, "allow", "unknown", reason, pr=number)
    message = (f"merge-hold: cannot establish whether {target} is on hold ({why}), so this merge is blocked "
               "(on_unknown: block). Stop and ask the user; do not retry the merge another way. "
               "The PR's required `merge-hold` status check on GitHub still decides.")
    return Judgement(merge, "block", "unknown", reason, pr=number, message=message)


def expired(hold: dict[str, Any], now_iso: str) -> bool:
    expires = hold.get("expires_at")
    if not isinstance(expires, str) or not expires:
        return False
    if len(expires) == len(now_iso) and expires.endswith("Z"):
        return expires <= now_iso  # both `%Y-%m-%dT%H:%M:%SZ`: lexical order is time order
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        now = datetime.fromisoformat(now_iso.replace("Z", "+00:00"))
    except ValueError:
        return False  # unreadable expiry: the hold still counts
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= now


def record_problem(record: object) -> str | None:
    if not isinstance(record, dict):
        return "the verdict record is not an object"
    if record.get("schema") != RECORD_SCHEMA:
        return f"the verdict record has unknown schema {record.get('schema')!r}"
    if record.get("error"):
        return f"the server could not establish the verdict: {record['error']}"
    if not isinstance(record.get("held"), bool) or not isinstance(record.get("holds", []), list):
        return "the verdict record is malformed"
    if record["held"] is False and record.get("holds"):
        return "the verdict record is inconsistent (free, with holds)"
    return None


def _holder(hold: dict[str, Any]) -> str:
    holder = str(hold.get("holder") or "")
    return holder if not holder or holder.startswith("@") else f"@{holder}"


def hold_line(hold: dict[str, Any]) -> str:
    source = str(hold.get("source") or "hold")
    reason = str(hold.get("reason") or "no reason given")
    who = _holder(hold)
    if source == "label":
        return f"label `{label_of(hold)}`"
    if source == "freeze":
        name = _freeze_name(hold)
        return reason if name in reason else f"freeze `{name}`: {reason}"
    if source == "room":
        room = f" in {hold['origin']}" if hold.get("origin") else ""
        return f"{who or 'a chat user'} (room hold on {hold.get('scope')}{room}): {reason}"
    return f"{who or 'someone'} ({source}): {reason}"


def _freeze_name(hold: dict[str, Any]) -> str:
    origin = str(hold.get("origin") or "")
    return str(hold.get("holder") or origin.removeprefix("schedule:") or hold.get("id") or "window")


def label_of(hold: dict[str, Any]) -> str:
    ident = str(hold.get("id") or "")
    return ident.partition(":")[2] if ident.startswith("label:") else str(hold.get("reason") or "the hold label")


def _room_lift(hold: dict[str, Any]) -> str:
    """Where a room hold is lifted: where it was placed (its origin says: a chat room, the dashboard, a
    token of the holds API)."""
    scope = hold.get("scope") or "TARGET"
    origin = str(hold.get("origin") or "")
    if origin == "dashboard":
        return (f"someone allowed to lift it thaws `{scope}` on merge-hold's dashboard (Rooms), or runs "
                f"`/unhold {scope}` in a chat room bound to it")
    if origin.startswith("api:"):
        return (f"its holder lifts it over merge-hold's holds API (token `{origin.removeprefix('api:')}`), or an "
                f"admin on the dashboard (Rooms)")
    room = f" ({origin})" if origin else ""
    return f"someone allowed to lift it runs `/unhold {scope}` in the chat room{room}"


def how_to_lift(hold: dict[str, Any]) -> str:
    source = hold.get("source")
    who = _holder(hold) or "the holder"
    if source == "comment":
        return (f"{who} comments `/unhold` on the PR (or a maintainer comments `/unhold {who}`)"
                + (f"; it also expires at {hold['expires_at']}" if hold.get("expires_at") else ""))
    if source == "review":
        return f"{who} approves the PR, or the changes-requested review is dismissed"
    if source == "label":
        return f"remove the label `{label_of(hold)}` from the PR"
    if source == "room":
        return _room_lift(hold) + (f"; it also expires at {hold['expires_at']}" if hold.get("expires_at") else "")
    if source == "freeze":
        until = f" ({hold['expires_at']})" if hold.get("expires_at") else ""
        return f"wait until the freeze window `{_freeze_name(hold)}` ends{until}"
    return "ask the holder"


def held_message(target: str, holds: list[dict[str, Any]], record: dict[str, Any], *, push: bool) -> str:
    action = "push its branch onto its base branch" if push else "merge it"
    lines = [f"merge-hold: {target} is on hold. Do not {action}."]
    for hold in holds[:MAX_HOLDS_SHOWN]:
        lines.append(f"  - {hold_line(hold)}")
        lines.append(f"    to lift: {how_to_lift(hold)}")
    if len(holds) > MAX_HOLDS_SHOWN:
        lines.append(f"  (+{len(holds) - MAX_HOLDS_SHOWN} more holds)")
    if not holds:
        lines.append(f"  - {record.get('description') or 'held'}")
    lines.append(STOP)
    return "\n".join(lines)
