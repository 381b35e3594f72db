"""The PR comment grammar: ``/hold``, ``/hold for 2h REASON``, ``/hold cancel``, ``/unhold @alice``...

Prow-compatible: a command is a whole line starting with the command word (leading spaces allowed,
command word case-insensitive). Only text that GitHub renders as prose counts: quoted lines, fenced and
indented code blocks, code spans and HTML comments are skipped, so that quoting or documenting a
command never performs it. This module only reads text; who may do what is `core.comment_rules`.
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
    ("lift", re.compile(r"^/(?:hold\s+cancel|unhold|remove-hold)\s*$", re.IGNORECASE)),
    ("lift_all", re.compile(r"^/(?:unhold|remove-hold)\s+all\s*$", re.IGNORECASE)),
    ("lift_other", re.compile(rf"^/(?:unhold|remove-hold)\s+@(?P<login>{_LOGIN})\s*$", re.IGNORECASE)),
    ("hold", re.compile(r"^/hold(?:\s+(?P<rest>.*?))?\s*$", re.IGNORECASE)),
)

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
    """One command of a comment. ``target`` (lifts only): None = one's own hold, "all", or a login."""

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


def _match(line: str) -> CommentCommand | None:
    if line.lstrip().startswith(_MARK):
        return None
    stripped = line.replace(_MARK, " ").strip()
    for name, pattern in GRAMMAR:
        found = pattern.match(stripped)
        if found is None:
            continue
        if name == "lift":
            return CommentCommand("lift")
        if name == "lift_all":
            return CommentCommand("lift", target="all")
        if name == "lift_other":
            # `@all` reads as "everyone" to people; a user named `all` would be the only loser.
            login = found["login"]
            return CommentCommand("lift", target="all" if login.lower() == "all" else login)
        duration, reason = split_duration(found["rest"] or "")
        return CommentCommand("hold", reason=clean_reason(reason), duration=duration)
    return None


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
