"""What merge-hold answers on a PR comment: a reaction, one reply, or nothing (repo config `feedback`).

Pure: given the comment, what its commands did (`core.comment_rules.Outcome`) and the PR's state before
them, decide. Every command is answered — 👀 when received and 👍 once applied; one reply when a command
was refused (saying which permission it needs), lifts a hold that does not exist, came in after a later
command that stands (deliveries arrive out of order), or looks like a typo of a command. The reply never
starts a line with `/`, so neither merge-hold nor another bot (Prow's hold plugin) reads a command in it,
and mentions only the people its commands named (`core.escaping`, on the final text).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from core.comment_rules import Outcome
from core.comments import prose_lines, unreadable_lifts
from core.escaping import for_github_comment
from core.prstate import PullState, comment_hold_active

MODES = ("reactions", "comments", "off")
RECEIVED, APPLIED = "eyes", "+1"
"""GitHub reaction contents: 👀 and 👍."""

CANONICAL = {"hold": "/hold", "unhold": "/unhold", "removehold": "/remove-hold", "holdcancel": "/hold cancel",
             "unholdall": "/unhold all", "holdfor": "/hold-for"}
"""A command word with its hyphens and underscores squeezed out -> how it is written."""
VALID = frozenset({"hold", "unhold", "remove-hold", "hold-for"})
"""Command words the grammar reads as written (`/hold cancel` is `hold` plus an argument)."""
OTHER_COMMANDS = frozenset({
    "approve", "assign", "cc", "cherry-pick", "close", "help", "hello", "kind", "label", "lgtm", "lock",
    "meow", "milestone", "ok-to-test", "priority", "remove-label", "reopen", "retest", "test", "triage",
    "unassign", "uncc", "unlock", "woof", "holds", "rebase", "merge", "rerun", "area", "lifecycle",
})
"""Other bots' commands (Prow, Mergify, bors, …): never taken for typos of ours."""
CUTOFF = 0.7
"""`difflib` similarity from which a command word reads as a typo: catches `/hodl`, `/unhlod`, `/hodl`
and `/hlod`; leaves `/help` (0.5) and `/unlock` (0.5) alone."""
_COMMAND_WORD = re.compile(r"^/([A-Za-z][A-Za-z_-]{0,30})(?=\s|$)")
MAX_REPLY = 4000


@dataclass(frozen=True)
class Feedback:
    reactions: tuple[str, ...] = ()
    reply: str | None = None
    lines: tuple[str, ...] = field(default=(), repr=False)

    @property
    def empty(self) -> bool:
        return not self.reactions and not self.reply


def typos(body: str) -> list[tuple[str, str]]:
    """(what was written, what was probably meant) for each prose line whose command word is not ours
    but close to one: ``/hodl`` -> ``/hold``, ``/hold-cancel`` -> ``/hold cancel``."""
    found: list[tuple[str, str]] = []
    for line in prose_lines(body):
        match = _COMMAND_WORD.match(line.strip())
        if match is None:
            continue
        word = match[1].lower()
        if word in VALID or word in OTHER_COMMANDS:
            continue
        squeezed = word.replace("-", "").replace("_", "")
        meant = CANONICAL.get(squeezed)
        if meant is None:
            close = difflib.get_close_matches(squeezed, list(CANONICAL), n=1, cutoff=CUTOFF)
            meant = CANONICAL[close[0]] if close else None
        if meant is not None and (f"/{word}", meant) not in found:
            found.append((f"/{word}", meant))
    return found


def _holders(state: PullState | None, at: datetime) -> list[str]:
    if state is None:
        return []
    return sorted(r.name or key for key, r in state.comments.items() if comment_hold_active(state, r, at))


def _unknown_lifts(outcomes: Sequence[Outcome], before: PullState | None, at: datetime) -> list[str]:
    """`/unhold @x` where @x had no comment hold on the PR when the command was written; and one's own
    `/unhold` (`/hold cancel REASON`…) with no hold of one's own while others hold the PR: a 👍 would
    read as "the PR is free"."""
    if before is None:
        return []
    lines = []
    for outcome in outcomes:
        if outcome.kind != "lifted":
            continue
        own = outcome.target.lower() == outcome.actor.lower()
        register = before.comments.get(outcome.target.lower())
        if register is not None and comment_hold_active(before, register, at):
            continue
        holders = _holders(before, at)
        if own and not holders:
            continue  # nothing held, nothing left held: the 👍 tells no lie
        who = ", ".join(f"@{h}" for h in holders) if holders else "nobody"
        lines.append(f"@{outcome.actor}: @{outcome.target} has no hold on this PR to lift "
                     f"(comment holds: {who}).")
    return lines


def _unreadable(body: str) -> list[str]:
    lines = []
    for line in unreadable_lifts(body):
        shown = line[:80].replace("`", "'")
        lines.append(f"`{shown}` names no GitHub user, so nothing was lifted: write `/unhold @login`, "
                     "`/unhold all`, or `/unhold REASON` for your own hold.")
    return lines


def decide(body: str, outcomes: Sequence[Outcome], *, mode: str, before: PullState | None,
           at: datetime) -> Feedback:
    """The answer to one comment. ``before`` is the PR's state before the comment applied (None when
    unknown: an unknown `/unhold @x` then goes unremarked)."""
    if mode == "off":
        return Feedback()
    problems = [o.message.replace(": not done, ", ": not done — ", 1) + "." for o in outcomes if o.kind == "refused"]
    problems += [o.message + "." for o in outcomes if o.kind == "superseded"]
    problems += _unknown_lifts(outcomes, before, at)
    problems += _unreadable(body)
    problems += [f"`{written}` is not a merge-hold command — did you mean `{meant}`?"
                 for written, meant in typos(body)]
    # Who the reply may mention: the people the commands named, and the PR's holders it lists.
    told = [name for o in outcomes for name in (o.actor, o.target) if o.kind != "lifted_all" or name == o.actor]
    told += _holders(before, at)
    if problems:
        lines = tuple(problems)
        reactions = (RECEIVED,) if mode == "reactions" else ()
        return Feedback(reactions, _reply(lines, told), lines)
    if not outcomes:
        return Feedback()
    if mode == "comments":
        lines = tuple(o.message + "." for o in outcomes)
        return Feedback((), _reply(lines, told), lines)
    return Feedback((RECEIVED, APPLIED))


def _reply(lines: Sequence[str], told: Sequence[str]) -> str:
    text = "\n".join(f"- {line}" if len(lines) > 1 else line for line in lines)
    text += "\n\n<sub>merge-hold · commands: `/hold [for DURATION] [reason]`, `/hold cancel`, `/hold-for #123`, " \
            "`/unhold [reason]`, `/unhold @user [reason]`, `/unhold all [reason]`</sub>"
    # Checked on the final text: a reason quoted back can neither start a line nor mention anyone.
    return for_github_comment(text[:MAX_REPLY], told)
