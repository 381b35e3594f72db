"""Option grammars, read as the programs read them (design §6, issue 26 item 2): POSIX ``getopt`` for short
options — bundled (``-qec CMD``: ``q`` and ``e`` flags, ``c`` takes ``CMD``), a value attached (``-oVALUE``) or in
the next word, an optional value only attached — and GNU ``getopt_long`` for long ones — ``--opt=VALUE`` or
``--opt VALUE``, an optional value only with ``=``, a unique prefix for the whole name (``--sig`` for
``--signal``) — with ``--`` ending the options and the first operand ending them too (a launcher's command
follows). A word the grammar does not know (an unknown option, an ambiguous prefix, a value only the run knows
where an option may be) makes the reading *inexact*: the launcher's command is then read as a hint and what it
merges is undetermined (hook/detect/wrappers.py), never a determined guess.

A grammar is written the way manuals list options: ``Grammar("ab:c::", "user= login color=? shell=")`` — ``b``
takes a value, ``c`` an optional attached one; ``--user`` and ``--shell`` take a value, ``--color`` an optional
one; ``plus`` lists the letters a shell also takes after ``+`` (``+o pipefail``); ``abbrev=False`` for a program
that takes long names whole (bash); ``digits``: optional values made of digits only (perl's ``-l``, ``-0``).
"""

from __future__ import annotations

from hook.shell.syntax import DYN


class Grammar:
    """One program's options (see the module's docstring)."""

    __slots__ = ("abbrev", "digits", "flags", "longs", "optional", "plus", "values")

    def __init__(self, shorts: str = "", longs: str = "", *, plus: str = "", abbrev: bool = True,
                 digits: str = "") -> None:
        self.flags: set[str] = set()
        self.values: set[str] = set()
        self.optional: set[str] = set()
        i = 0
        while i < len(shorts):
            letter = shorts[i]
            colons = len(shorts[i + 1 :]) - len(shorts[i + 1 :].lstrip(":"))
            (self.flags, self.values, self.optional)[min(colons, 2)].add(letter)
            i += 1 + colons
        self.longs: dict[str, str] = {}  # name -> "" (a flag), "=" (a value), "=?" (an optional value)
        for spec in longs.split():
            name, eq, rest = spec.partition("=")
            self.longs[name] = eq + rest
        self.plus = plus
        self.abbrev = abbrev  # getopt_long takes a unique prefix; a shell's own parser does not
        self.digits = digits  # optional values that are digits only (perl's -l, -0): `-le` is -l then -e

    def takes(self, letter: str) -> str:
        """``"flag"``, ``"value"``, ``"optional"`` or ``""`` (unknown)."""
        if letter in self.values:
            return "value"
        if letter in self.optional:
            return "optional"
        return "flag" if letter in self.flags else ""


class Parsed:
    """``options``: ``(name, value)`` in order (``-c`` and ``--command``; value None for a flag); ``end``: the first
    operand; ``exact``: every word read as the program reads it."""

    __slots__ = ("end", "exact", "options")

    def __init__(self) -> None:
        self.options: list[tuple[str, str | None]] = []
        self.end = 0
        self.exact = True

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def value(self, *names: str) -> str | None:
        """The last value given to one of ``names``."""
        found = [v for n, v in self.options if n in names]
        return found[-1] if found else None


def parse(grammar: Grammar, words: list[str], start: int = 1) -> Parsed:
    """Read ``words[start:]`` up to the first operand (or past ``--``)."""
    out = Parsed()
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            out.end = i + 1
            return out
        plus = word[:1] == "+" and len(word) > 1 and word[1] in grammar.plus
        if not (word[:1] == "-" or plus) or word == "-":
            break
        if DYN in word:
            out.exact = False  # an option only the run knows: it may take the next word, or end the options
            out.options.append((word, None))
            i += 1
            continue
        i = _long(grammar, words, i, out) if word.startswith("--") else _shorts(grammar, words, i, out)
    out.end = i
    return out


def _long(grammar: Grammar, words: list[str], i: int, out: Parsed) -> int:
    spelled, eq, value = words[i].partition("=")
    name = spelled[2:]
    kind = grammar.longs.get(name)
    if kind is None:
        matches = [n for n in grammar.longs if n.startswith(name)] if grammar.abbrev and name else []
        if len(matches) == 1:
            name, kind = matches[0], grammar.longs[matches[0]]
        else:
            out.exact = False  # unknown, or an ambiguous prefix: getopt_long refuses it
            out.options.append((spelled, value if eq else None))
            return i + 1
    if kind == "=" and not eq:
        out.options.append(("--" + name, words[i + 1] if i + 1 < len(words) else None))
        return i + 2
    if kind == "" and eq:
        out.exact = False  # a flag given a value: getopt_long refuses it
    out.options.append(("--" + name, value if eq else None))
    return i + 1


def _shorts(grammar: Grammar, words: list[str], i: int, out: Parsed) -> int:
    word = words[i]
    sign = word[0]
    k = 1
    while k < len(word):
        letter = word[k]
        kind = grammar.takes(letter)
        if not kind:
            out.exact = False
            kind = "flag"
        if kind == "flag":
            out.options.append((sign + letter, None))
            k += 1
            continue
        attached = word[k + 1 :]
        if letter in grammar.digits:
            digits = len(attached) - len(attached.lstrip("0123456789"))
            out.options.append((sign + letter, attached[:digits] or None))
            k += 1 + digits
            continue
        if attached or kind == "optional":
            out.options.append((sign + letter, attached or None))
            return i + 1
        out.options.append((sign + letter, words[i + 1] if i + 1 < len(words) else None))
        return i + 2
    return i + 1
