"""Brace expansion, the first of bash's expansions: ``{a,b}``, ``x{1..3}y``, ``{01..10..3}``, nested
groups. Only a group inside one unquoted literal piece of a word is expanded; a group that spans
quoted text or an expansion (``{a,"b"}``, ``{$x,y}``) is not modelled and makes the word unknown.
"""

from __future__ import annotations

from hook.shell.syntax import DYN, Part, Word

_MAX_WORDS = 512
_DIGITS = frozenset("0123456789")


def expand_braces(word: Word) -> list[Word]:
    """The words bash makes of ``word`` by brace expansion (``[word]`` when it has no group)."""
    out: list[Word] = []
    pending = [word]
    while pending:
        current = pending.pop(0)
        found = _first_group(current)
        if found is None:
            out.append(current)
        elif isinstance(found, str):  # a group this reader cannot expand exactly
            out.append(Word([Part("d", "", False)], current.raw))
        else:
            index, start, end, alternatives = found
            text = current.parts[index].text
            for alternative in alternatives:
                part = Part("l", text[:start] + alternative + text[end + 1 :], False)
                pending.append(Word([*current.parts[:index], part, *current.parts[index + 1 :]], current.raw))
        if len(out) + len(pending) > _MAX_WORDS:
            return [Word([Part("d", "", False)], word.raw)]
    return out


def _first_group(word: Word) -> tuple[int, int, int, list[str]] | str | None:
    for index, part in enumerate(word.parts):
        if part.kind != "l" or part.quoted or "{" not in part.text:
            continue
        text = part.text
        at = text.find("{")
        while at >= 0:
            end = _closing(text, at)
            if end is None:
                # an opening brace whose group would close in a later piece of the word
                if any(p.kind != "l" or p.quoted for p in word.parts[index + 1 :]) and any(
                        "}" in p.text for p in word.parts[index + 1 :] if p.kind == "l" and not p.quoted):
                    return "unknown"
            else:
                alternatives = _alternatives(text[at + 1 : end])
                if alternatives is not None:
                    return index, at, end, alternatives
            at = text.find("{", at + 1)
    return None


def _closing(text: str, at: int) -> int | None:
    depth = 0
    for j in range(at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _alternatives(inner: str) -> list[str] | None:
    """``a,b,{c,d}`` -> ``[a, b, {c,d}]``; ``1..3`` -> ``[1, 2, 3]``; None when not a group."""
    pieces, depth, start = [], 0, 0
    for j, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            pieces.append(inner[start:j])
            start = j + 1
    if pieces:
        return [*pieces, inner[start:]]
    return _sequence(inner)


def _sequence(inner: str) -> list[str] | None:
    bounds = inner.split("..")
    if len(bounds) not in (2, 3) or DYN in inner:
        return None
    first, last = bounds[0], bounds[1]
    step_text = bounds[2] if len(bounds) == 3 else "1"
    if not _is_int(step_text):
        return None
    step = abs(int(step_text)) or 1
    if _is_int(first) and _is_int(last):
        a, b = int(first), int(last)
        width = max(len(first), len(last)) if _padded(first) or _padded(last) else 0
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(values) > _MAX_WORDS:
            return None
        return [_pad(v, width) for v in values]
    if len(first) == 1 and len(last) == 1 and first.isascii() and last.isascii() and first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


def _is_int(text: str) -> bool:
    digits = text[1:] if text[:1] in ("-", "+") else text
    return bool(digits) and all(c in _DIGITS for c in digits)


def _padded(text: str) -> bool:
    digits = text.lstrip("+-")
    return len(digits) > 1 and digits[0] == "0"


def _pad(value: int, width: int) -> str:
    if not width:
        return str(value)
    sign = "-" if value < 0 else ""
    return sign + str(abs(value)).rjust(width - len(sign), "0")
