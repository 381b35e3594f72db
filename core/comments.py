"""The PR comment grammar: ``/hold``, ``/hold for 2h REASON``, ``/hold cancel``, ``/unhold @alice``...

Prow-compatible (kubernetes-sigs/prow's hold plugin as of May 2025): a command is a whole line starting
with the command word, case-insensitive; a lift may carry a reason after it, as a hold does
(`/hold cancel further review has happened`, `/unhold looks good now`, `/remove-hold ready`). The first
word after a lift decides whose hold it lifts: ``@login`` that user's, ``all`` everyone's, anything else
is the reason of a lift of one's own. Deliberate differences from Prow, each erring toward held or toward
doing nothing: up to three leading spaces still make a command (Prow wants column 0; ` /hold` holds);
only text that GitHub renders as prose counts: quoted lines, fenced and indented code blocks, code spans
and HTML comments are skipped, so that quoting or documenting a command never performs it. This module
only reads text; who may do what is `core.comment_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from core.durations import parse_duration

MAX_REASON = 200
"""Reasons end up in a 140-character status description and the audit log; longer text is noise."""

_LOGIN = r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38})"

# The grammar, as data. Checked in this order on each prose line; the first match decides the line.
# `cancel` is checked before `hold` (as in Prow) so that `/hold cancel` is a lift while
# `/hold cancellation of X` stays a hold whose reason is "cancellation of X".
GRAMMAR: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("lift", re.compile(r"^/(?:hold\s+cancel|unhold|remove-hold)(?:\s+(?P<rest>.*?))?\s*$", re.IGNORECASE)),
    ("hold", re.compile(r"^/hold(?:\s+(?P<rest>.*?))?\s*$", re.IGNORECASE)),
)
_LOGIN_WORD = re.compile(rf"@(?P<login>{_LOGIN})[,.:;!]?", re.IGNORECASE)
"""The first word of a lift naming a user; a trailing comma or colon (`/unhold @alice: done`) is prose."""

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}>")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`).*?(?<!`)(?P=ticks)(?!`)", re.DOTALL)
_MARK = "\x00"
"""Stands where an HTML comment was removed."""
_DURATION_WORDS = 4
"""`for 1d 12h` is two words; four covers every sensible spelling of a duration."""


@dataclass(frozen=True)
class CommentCommand:
    """One command of a comment. ``target`` (lifts only): None = one's own hold, "all", or a login;
    ``reason``: a hold's, or the words a lift gives after its target (kept in the audit log)."""

    kind: Literal["hold", "lift"]
    reason: str = ""
    duration: timedelta | None = None
    target: str | None = None


def clean_reason(text: str) -> str:
    """Whitespace collapsed, trimmed, capped at `MAX_REASON` characters (the cut marked by '…')."""
    reason = " ".join(text.split())
    if len(reason) > MAX_REASON:
        reason = reason[: MAX_REASON - 1].rstrip() + "…"
    return reason


def split_duration(text: str) -> tuple[timedelta | None, str]:
    """``'for 2h waiting on X'`` -> (2h, 'waiting on X'). Without a valid duration after ``for``,
    the ``for`` belongs to the text: ``'for the release'`` -> (None, 'for the release')."""
    words = text.split()
    if len(words) < 2 or words[0].lower() != "for":
        return None, text.strip()
    # The longest run of words that still reads as one duration: `for 1d 12h` is a day and a half.
    for size in range(min(_DURATION_WORDS, len(words) - 1), 0, -1):
        duration = parse_duration(" ".join(words[1 : 1 + size]))
        if duration is not None:
            return duration, " ".join(words[1 + size :])
    return None, text.strip()


def prose_lines(body: str) -> Iterator[str]:
    """The lines of a Markdown body that GitHub renders as prose, outside quotes, code and comments.

    Simplifications, each erring on the side of "not a command": an unclosed fence or HTML comment
    hides the rest of the body (as GitHub renders it); a line indented 4+ columns that does not
    continue a paragraph is code, even inside a list item. A line right after a quote is taken as prose
    (GitHub would fold it into the quote lazily, but people write `> …` then their own `/hold` and
    mean it).
    """
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    # Keep the line structure when removing comments, so code and quote detection still see lines, and
    # leave a mark where one stood: text after a comment does not start a line (`<!-- x -->/hold`).
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n") + _MARK, text)
    paragraph: list[str] = []  # the open prose paragraph; an indented line cannot interrupt one
    fence: str | None = None
    for raw in text.split("\n"):
        line = raw.expandtabs(4)
        if fence is not None:
            closing = _FENCE_CLOSE.match(line)
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence):
                fence = None
            continue
        opened = _FENCE_OPEN.match(line)
        indented = len(line) - len(line.lstrip(" ")) >= 4
        if opened and not (opened["fence"][0] == "`" and "`" in opened["info"]):
            fence = opened["fence"]
        elif line.strip() and not (indented and not paragraph) and not _QUOTE.match(line):
            paragraph.append(line)
            continue
        # Anything but prose ends the paragraph: a blank line, a fence, indented code, a quote.
        yield from _outside_code_spans(paragraph)
        paragraph = []
    if fence is None:
        yield from _outside_code_spans(paragraph)


def _outside_code_spans(paragraph: list[str]) -> Iterator[str]:
    """The paragraph's lines that do not start inside a code span (spans may cross line breaks)."""
    if not paragraph:
        return
    joined = "\n".join(paragraph)
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(joined)]
    offset = 0
    for line in paragraph:
        start = offset + len(line) - len(line.lstrip())
        if not any(lo < start < hi for lo, hi in spans):
            yield line
        offset += len(line) + 1


def _prose_command_line(line: str) -> str | None:
    """The line as the grammar reads it, or None when it cannot start a command (text after a comment)."""
    if line.lstrip().startswith(_MARK):
        return None
    return line.replace(_MARK, " ").strip()


def _lift(rest: str) -> CommentCommand | None:
    """A lift's words after the command: the first decides whose hold, the rest is the reason. None when
    the first names a login that cannot be one (`/unhold @-x`): nothing is lifted (`unreadable_lifts`)."""
    words = rest.split(maxsplit=1)
    first, more = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
    if first.lower().rstrip(",.:;!") in ("all", "@all"):
        # `@all` reads as "everyone" to people; a user named `all` would be the only loser.
        return CommentCommand("lift", reason=clean_reason(more), target="all")
    if first.startswith("@"):
        named = _LOGIN_WORD.fullmatch(first)
        if named is None:
            return None
        return CommentCommand("lift", reason=clean_reason(more), target=named["login"])
    return CommentCommand("lift", reason=clean_reason(rest))


def _match(line: str) -> CommentCommand | None:
    stripped = _prose_command_line(line)
    if stripped is None:
        return None
    for name, pattern in GRAMMAR:
        found = pattern.match(stripped)
        if found is None:
            continue
        if name == "lift":
            return _lift(found["rest"] or "")
        duration, reason = split_duration(found["rest"] or "")
        return CommentCommand("hold", reason=clean_reason(reason), duration=duration)
    return None


def unreadable_lifts(body: str) -> list[str]:
    """The lift lines of a comment that name no possible GitHub login (`/unhold @-alice`, `/unhold @`):
    they lift nothing, and the answer on the PR says so."""
    found: list[str] = []
    for line in prose_lines(body):
        stripped = _prose_command_line(line)
        lifted = GRAMMAR[0][1].match(stripped) if stripped is not None else None
        if stripped is not None and lifted is not None and _lift(lifted["rest"] or "") is None:
            found.append(stripped)
    return found


def parse_comment(body: str) -> list[CommentCommand]:
    """The commands of one comment, at most one per target, in a fixed order.

    Prow's precedence: a lift of one's own hold beats a hold in the same comment. A lift of everyone's
    holds (`/unhold all`) beats it too, since both carry the comment's one timestamp. Of several holds
    the first line's reason and duration count.
    """
    own: CommentCommand | None = None
    others: list[CommentCommand] = []
    seen_targets: set[str] = set()
    for line in prose_lines(body):
        command = _match(line)
        if command is None:
            continue
        if command.kind == "hold":
            if own is None:
                own = command
        elif command.target is None:
            own = command if own is None or own.kind == "hold" else own
        elif command.target.lower() not in seen_targets:
            seen_targets.add(command.target.lower())
            others.append(command)
    if own is not None and own.kind == "hold" and "all" in seen_targets:
        own = None
    return ([own] if own is not None else []) + others
