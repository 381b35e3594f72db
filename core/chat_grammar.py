"""The chat grammar of room holds (Slack and Mattermost slash commands).

``/hold TARGET [for DURATION] [paths:GLOB[,GLOB…]] REASON`` · ``/unhold TARGET`` · ``/holds [TARGET]`` ·
``/hold exempt [--sticky] PR-TARGET [for DURATION] REASON`` · ``/unhold exempt PR-TARGET`` ·
``/hold subscribe REPO-OR-ORG [WEBHOOK-URL]`` · ``/hold unsubscribe REPO-OR-ORG`` (chat notifications) ·
``/hold link`` · ``/hold unlink`` (tie this chat user to a GitHub login, for the dashboard).
Both platforms send the command word and the ``text`` after it separately. A single catch-all command
(``/merge-hold hold …``) works too: when the command is none of the three, the text's first word is the verb.

A hold in a room reaches many PRs at once, so the reason is required and mistakes are answered with a
usage text instead of a guess. ``exempt`` right after ``/hold`` or ``/unhold`` is always the keyword,
and so are ``subscribe``, ``unsubscribe``, ``link`` and ``unlink`` after ``/hold`` (an organisation
literally named "exempt" or "link" can still be held through its URL).

``paths:`` scopes a hold to the PRs that change a matching file (gitignore-style globs, ``!`` excludes,
comma-separated: `core.paths`). An exemption covers the PR's current head; ``--sticky`` (before or right
after the target) makes it follow every new push.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from core.comments import clean_reason, split_duration
from core.durations import MAX_DURATION
from core.paths import PathsError, check, split_list
from core.targets import TargetError, is_pr_scope, parse_target

Action = Literal["hold", "unhold", "list", "exempt", "unexempt", "subscribe", "unsubscribe", "link", "unlink"]
SUBSCRIBE = ("subscribe", "unsubscribe")
LINK = ("link", "unlink")
VERBS = ("hold", "unhold", "holds")

_TOKEN = re.compile(r"<[^<>]*>|\S+")
_SLACK_MARKUP = re.compile(r"<(?P<body>[^<>|]+)(?:\|(?P<label>[^<>]*))?>")
_DURATION_SHAPE = re.compile(r"^(?:\d+[wdhms])+$", re.IGNORECASE)
STICKY = "--sticky"
PATHS = "paths:"


@dataclass(frozen=True)
class ChatCommand:
    """A well-formed chat command; ``scope`` is a `core.scopes` string (None: `/holds` for everything,
    and ``link``/``unlink``, which name no target)."""

    action: Action
    scope: str | None = None
    reason: str = ""
    duration: timedelta | None = None
    webhook: str = ""
    """``subscribe`` only: the Mattermost incoming webhook the channel's notifications go to."""
    sticky: bool = False
    """``exempt`` only: the exemption follows every new head (else a push ends it)."""
    paths: tuple[str, ...] = ()
    """``hold`` only: gitignore-style globs; the hold holds only PRs that change a matching file."""


@dataclass(frozen=True)
class ChatUsageError:
    """What was wrong (empty for a plain ``help``) and how to say it; shown to the user only."""

    message: str
    usage: str

    @property
    def text(self) -> str:
        return f"{self.message}\n{self.usage}" if self.message else self.usage


_TARGETS = "TARGET: owner/repo#12, a PR URL, owner/repo, owner/repo@branch-glob or owner."


def _sibling(prefix: str, verb: str) -> str:
    """Another verb spelled as the user spells this one: ``/hold`` -> ``/unhold``, ``/mh hold`` -> ``/mh unhold``."""
    head, _, _last = prefix.rpartition(" ")
    return f"{head} {verb}" if head else f"/{verb}"


def _lines(prefix: str, verb: str) -> list[str]:
    if verb == "hold":
        return [
            f"{prefix} TARGET [for DURATION] REASON: hold every open PR of TARGET (a reason is required)",
            f"{prefix} TARGET paths:db/migrations/**,!db/migrations/README.md REASON: only PRs changing those files",
            f"{prefix} exempt [--sticky] owner/repo#12 [for DURATION] REASON: let one PR's current head through "
            "room and freeze holds (--sticky: every new push too)",
            f"{prefix} subscribe owner/repo|owner [WEBHOOK-URL]: this channel hears holds, freezes, approvals",
            f"{prefix} unsubscribe owner/repo|owner: stop them",
            f"{prefix} link: a one-time dashboard link that ties you to your GitHub login (for freezes there)",
            f"{prefix} unlink: undo that tie",
            # The way back out, from the usage someone reads first: `/hold` alone, or a `/hold` gone wrong.
            f"{_sibling(prefix, 'unhold')} TARGET: lift the hold; {_sibling(prefix, 'unhold')} exempt "
            f"owner/repo#12: end an exemption; {_sibling(prefix, 'holds')} [TARGET]: list the holds",
        ]
    if verb == "unhold":
        return [f"{prefix} TARGET: lift this room's hold on TARGET", f"{prefix} exempt owner/repo#12: end an exemption"]
    return [f"{prefix} [TARGET]: list the active holds (all, or those on TARGET)"]


def usage(prefix: str, verb: str | None = None) -> str:
    """The usage text of one verb (or of all three), spelled with the command the user typed."""
    lines = _lines(prefix, verb) if verb else [line for v in VERBS for line in _lines(f"{prefix} {v}", v)]
    durations = f"DURATION: 30m, 2h, 1d12h, 1w (at most {MAX_DURATION.days}d)."
    return "\n".join(["Usage:", *lines, _TARGETS, *([durations] if verb != "holds" else [])])


def _slack_text(text: str) -> str:
    """Slack's markup back to plain text: links to their URL, mentions to ``@name``, entities decoded."""

    def plain(found: re.Match[str]) -> str:
        body, label = found["body"], found["label"]
        if body[:1] in "@#" and label:
            return body[0] + label
        return body.removeprefix("!")

    return html.unescape(_SLACK_MARKUP.sub(plain, text))


def parse_chat(command: str, text: str) -> ChatCommand | ChatUsageError:
    """Parse one slash command. Never raises on user input: bad input gives a `ChatUsageError`."""
    name = command.strip().lstrip("/").lower() or "hold"
    body = text.strip()
    if name in VERBS:
        verb, prefix = name, f"/{name}"
    else:
        first, body = ([*body.split(maxsplit=1), "", ""])[:2]
        verb, prefix = first.lower(), f"/{name} {first.lower()}"
        if verb not in VERBS:
            problem = "" if verb in ("", "help") else f"unknown command {first!r}"
            return ChatUsageError(problem, usage(f"/{name}"))
    tokens = [(m.group(0), m.start()) for m in _TOKEN.finditer(body)]
    if verb == "holds" and not tokens:
        return ChatCommand("list")
    if not tokens or tokens[0][0].lower() == "help":
        return ChatUsageError("", usage(prefix, verb))
    if verb == "holds":
        return _holds(tokens, prefix)
    if verb == "hold" and tokens[0][0].lower() in SUBSCRIBE:
        return _subscribe(tokens, prefix)
    if verb == "hold" and tokens[0][0].lower() in LINK:
        action = tokens[0][0].lower()
        if len(tokens) > 1:
            # Strict, like /unhold: `/hold link acme` must not be read as anything but a mistake.
            return ChatUsageError(f"{action} takes nothing after it; unexpected {body[tokens[1][1]:]!r}",
                                  usage(prefix, "hold"))
        return ChatCommand("link" if action == "link" else "unlink")
    exempt = tokens[0][0].lower() == "exempt"
    sticky = False
    if exempt:
        tokens = tokens[1:]
        sticky = bool(tokens) and tokens[0][0].lower() == STICKY
        tokens = tokens[1:] if sticky else tokens
        if not tokens:
            return ChatUsageError("which PR? exempt needs owner/repo#12 or a PR URL", usage(prefix, verb))
    try:
        scope = parse_target(tokens[0][0])
    except TargetError as error:
        return ChatUsageError(str(error), usage(prefix, verb))
    if exempt and not is_pr_scope(scope):
        return ChatUsageError(f"exempt takes one PR, not {scope!r}", usage(prefix, verb))
    if exempt and len(tokens) > 1 and tokens[1][0].lower() == STICKY:  # `exempt o/r#1 --sticky …` reads the same
        sticky, tokens = True, [tokens[0], *tokens[2:]]
    rest = body[tokens[1][1] :] if len(tokens) > 1 else ""
    if verb == "unhold":
        # Strict: `/unhold acme widgets` (meaning acme/widgets) must not lift the hold on all of acme.
        if rest or sticky:
            return ChatUsageError(f"/unhold takes one target; unexpected {rest or STICKY!r}", usage(prefix, verb))
        return ChatCommand("unexempt" if exempt else "unhold", scope)
    return _hold(scope, rest, exempt=exempt, sticky=sticky, prefix=prefix)


def _paths(text: str) -> tuple[list[str] | None, str]:
    """Leading ``paths:GLOB[,GLOB…]`` words taken off ``text``: (the patterns, None without any such
    word; the rest)."""
    found: list[str] | None = None
    words = text.split(maxsplit=1)
    while words and words[0].lower().startswith(PATHS):
        found = [*(found or []), *split_list(_slack_text(words[0][len(PATHS):]))]
        words = words[1].split(maxsplit=1) if len(words) > 1 else []
    return found, words[0] + (f" {words[1]}" if len(words) > 1 else "") if words else ""


def _hold(scope: str, rest: str, *, exempt: bool, sticky: bool, prefix: str) -> ChatCommand | ChatUsageError:
    if not exempt and [w.lower() for w in rest.split(maxsplit=1)[:1]] == [STICKY]:
        return ChatUsageError(f"{STICKY} is for exemptions: {prefix} exempt {STICKY} owner/repo#12 REASON",
                              usage(prefix, "hold"))
    paths, rest = _paths(rest)
    duration, reason_text = split_duration(rest)
    words = rest.split()
    if duration is None and len(words) >= 2 and words[0].lower() == "for" and _DURATION_SHAPE.match(words[1]):
        longest = f"{MAX_DURATION.days}d"
        return ChatUsageError(f"{words[1]!r}: a duration is at most {longest}", usage(prefix, "hold"))
    if duration is not None:  # `for 2h paths:…` as well as `paths:… for 2h`
        more, reason_text = _paths(reason_text)
        paths = paths if more is None else [*(paths or []), *more]
    if paths is not None and exempt:
        return ChatUsageError("paths: scopes a hold, not an exemption (an exemption covers the whole PR)",
                              usage(prefix, "hold"))
    try:
        patterns = check(paths) if paths is not None else ()
    except PathsError as error:
        return ChatUsageError(f"{error}; e.g. paths:db/migrations/**,!db/migrations/README.md",
                              usage(prefix, "hold"))
    reason = clean_reason(_slack_text(reason_text))
    if not reason:
        what, example = ("an exemption", f"{prefix} exempt {scope} hotfix") if exempt else (
            "a hold", f"{prefix} {scope} waiting for the release")
        return ChatUsageError(f"{what} needs a reason, e.g. {example}", usage(prefix, "hold"))
    return ChatCommand("exempt" if exempt else "hold", scope, reason=reason, duration=duration, sticky=sticky,
                       paths=patterns)


def _holds(tokens: list[tuple[str, int]], prefix: str) -> ChatCommand | ChatUsageError:
    if len(tokens) > 1:
        return ChatUsageError("/holds takes at most one target", usage(prefix, "holds"))
    try:
        return ChatCommand("list", parse_target(tokens[0][0]))
    except TargetError as error:
        return ChatUsageError(str(error), usage(prefix, "holds"))


def _subscribe(tokens: list[tuple[str, int]], prefix: str) -> ChatCommand | ChatUsageError:
    action = tokens[0][0].lower()
    rest = [_slack_text(word) for word, _ in tokens[1:]]
    most = 2 if action == "subscribe" else 1
    if not rest or len(rest) > most:
        return ChatUsageError(f"{action} takes a repo or an org" + (" and, on Mattermost, an incoming webhook URL"
                                                                    if most == 2 else ""), usage(prefix, "hold"))
    try:
        scope = parse_target(rest[0])
    except TargetError as error:
        return ChatUsageError(str(error), usage(prefix, "hold"))
    if "#" in scope or "@" in scope:
        return ChatUsageError(f"subscribe to a repo or an org, not {scope!r}", usage(prefix, "hold"))
    return ChatCommand("subscribe" if action == "subscribe" else "unsubscribe", scope,
                       webhook=rest[1] if len(rest) > 1 else "")
