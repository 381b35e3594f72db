"""Where a compound command's input and output go, decided once for both readers (hook/shell/parser.py
and hook/shell/treesitter.py): a pipe or a redirection into ``{ …; }``, ``( … )``, a loop, an ``if`` or
a ``case`` reaches the commands inside it, and what it prints is what they print.

Exactly when one command inside can read or print: ``( gh pr comment 5 -F - ) </dev/null`` reads
nothing, ``( echo gh pr merge 5 ) | bash`` runs the merge. With more than one, which of them consumes
the input (``{ cat; bash; } <<EOF``) or what their output adds up to is the run's: each reads input
the text does not show (a shell reading it is then undetermined), and a pipe from them carries unknown
text. A file a compound writes (``{ echo 7; } >f``) is unknown afterwards: the compound's redirections
stay on a command without words after it, which the interpreter reads that way. Imports only the
syntax types; the fast reader loads it only when a compound command is piped or redirected.
"""

from __future__ import annotations

from hook.shell.syntax import INPUTS, OUTPUTS, Case, Command, Event, Later, Redirect


def commands(events: list[Event]) -> list[Command]:
    """The commands that run inside a compound, ``case`` arms included (a function defined inside runs
    only when called, with its caller's streams)."""
    found: list[Command] = []
    for event in events:
        if isinstance(event, Command):
            found.append(event)
        elif isinstance(event, Case):
            for _, body, _ in event.arms:
                found += commands(body)
        elif isinstance(event, Later):
            found += commands(event.events)
    return found


def _readers(events: list[Event]) -> tuple[list[Command], bool]:
    """The commands that would read the compound's input, and whether there is exactly one."""
    inside = [c for c in commands(events) if c.words]
    readers = [c for c in inside if not c.piped and not any(r.op in INPUTS for r in c.redirects)]
    return readers, len(inside) == 1 and len(readers) == 1


def feed(out: list[Event], start: int, source: Command | None) -> None:
    """``… | { …; }``: the compound starting at ``start`` reads a pipe whose writer is ``source`` (None:
    text the reader does not know)."""
    readers, exact = _readers(out[start:])
    for cmd in readers:
        cmd.piped, cmd.pipe_src = True, source if exact else None


def redirect(out: list[Event], start: int, redirects: list[Redirect]) -> None:
    """``{ …; } <<EOF``, ``done <file``, ``( … ) >log``: the redirections of the compound starting at
    ``start``. The input reaches the commands inside; the redirections stay on a wordless command
    after it (the files it writes are unknown afterwards)."""
    inputs = [r for r in redirects if r.op in INPUTS]
    if inputs:
        readers, exact = _readers(out[start:])
        for cmd in readers:
            if exact:
                cmd.redirects[:0] = inputs  # the command's own redirections apply after the compound's
            else:
                cmd.piped, cmd.pipe_src = True, None
    out.append(Command([], [], redirects))


def output(events: list[Event], redirects: list[Redirect] | None = None) -> Command | None:
    """The command whose output leaves a compound (``( echo … ) | bash``), None when several may print
    or the compound's output goes elsewhere (``{ …; } >log | bash``)."""
    if redirects and any(r.op in OUTPUTS for r in redirects):
        return None
    inside = [c for c in commands(events) if c.words]
    return inside[0] if len(inside) == 1 else None
