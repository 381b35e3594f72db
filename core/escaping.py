"""Outside text made safe for where it goes: Slack, Mattermost, a GitHub comment (issue 24 item 3). Pure.

Reasons, titles, branch names, holders and hook records come from people and agents we do not vouch
for: an outside contributor may hold their own PR with any reason, a hook record may hold any text.
Whatever merge-hold posts must speak only for merge-hold, so every message is escaped **as it is sent**,
on its final text — never part by part, where a newline in one part or a join could still make a
command, a mention or a link of the whole.

- **Slack** (``chat.postMessage``, ``response_url`` answers): ``&``, ``<`` and ``>`` are the control
  characters of Slack's text (``<!channel>``, ``<@U123>``, ``<https://x|label>``); Slack's "Formatting
  text" reference says to replace them with ``&amp;``, ``&lt;`` and ``&gt;`` when they are not meant
  for parsing, and only them. merge-hold's messages use none of that syntax, so all of it is escaped.
- **Mattermost** (its Markdown): ``@channel``, ``@all``, ``@here`` and ``@name`` notify people, and
  ``[label](url)`` disguises a link. A zero-width space after the ``@`` of every mention breaks the
  mention (Mattermost reads a mention as ``@`` followed by name characters) and one after every ``]``
  breaks inline, reference and image links (Markdown wants ``(``, ``[`` or ``:`` right after it),
  leaving the text as it reads; plain URLs stay visible for what they are.
- **GitHub comments**: no line may start with ``/`` (other bots — Prow's ``/approve``, ``/lgtm``,
  ``/hold cancel`` — read commands at the start of a line) and no ``@`` mention may notify anyone but
  the people the comment means to tell: a line's leading ``/`` gets a backslash (Markdown shows the
  slash, a bot's ``^/`` does not match), and any other mention gets a zero-width space after its ``@``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ZWSP = "\u200b"
"""Zero-width space: invisible in every renderer, and no name character on any of these platforms."""

_MATTERMOST_MENTION = re.compile(r"(?<![A-Za-z0-9._:@-])@(?=[A-Za-z0-9._-])")
"""A mention starts a word (Mattermost splits words at anything but name characters, ``:`` and ``@``):
the ``@`` of a branch scope, ``acme/widgets@main``, is none."""
_MARKDOWN_LINK = re.compile(r"\](?=[(\[:])")
_GITHUB_MENTION = re.compile(r"(?<![A-Za-z0-9_])@([A-Za-z0-9](?:[A-Za-z0-9-]*)(?:\[bot\]|/[A-Za-z0-9_.-]+)?)")
"""What GitHub notifies: ``@login`` (an App's ``@name[bot]``) or ``@org/team``, not after a word character
(an email address)."""


def for_slack(text: str) -> str:
    """Slack's three control characters as entities (``&`` first, so nothing is escaped twice)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def for_mattermost(text: str) -> str:
    """Mentions and Markdown links of ``text`` broken by zero-width spaces; everything else as it is."""
    return _MARKDOWN_LINK.sub("]" + ZWSP, _MATTERMOST_MENTION.sub("@" + ZWSP, text))


def for_chat(platform: str, text: str) -> str:
    """The final text of a message for ``platform`` (``slack`` or ``mattermost``)."""
    return for_slack(text) if platform == "slack" else for_mattermost(text)


def for_github_comment(text: str, mentions: Iterable[str] = ()) -> str:
    """The final text of a PR comment: no line starts with ``/``, and only ``mentions`` (logins the
    comment means to notify, compared case-insensitively) are left as mentions."""
    meant = {m.lower() for m in mentions}

    def mention(match: re.Match[str]) -> str:
        return match[0] if match[1].lower() in meant else "@" + ZWSP + match[1]

    lines = []
    # Every line break a reader may split on (\r, \u2028, …) ends a line here too: the result has "\n" only.
    for line in _GITHUB_MENTION.sub(mention, text).splitlines():
        body = line.lstrip()
        if body.startswith("/"):
            line = line[: len(line) - len(body)] + "\\" + body
        lines.append(line)
    return "\n".join(lines)


def one_line(text: str) -> str:
    """Outside text to stand inside one of our lines: every run of whitespace (newlines, Unicode line
    and paragraph separators included) becomes one space."""
    return " ".join(text.split())
