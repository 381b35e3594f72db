"""Shell arithmetic (``$((…))``) for the common, exactly known cases: integer literals, variables
whose values are themselves such expressions (unset or empty is 0), ``+ - * / %``, unary signs and
parentheses, with C's truncating division (bash uses C's 64-bit integers). Anything else (assignment,
comparison, ``**``, bases, overflow, division by zero) is None: the value is the run's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_LIMIT = 1 << 63
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME = _NAME_START | frozenset("0123456789")
_MAX_DEPTH = 8


def evaluate(text: str, lookup: Callable[[str], str | None], depth: int = 0) -> int | None:
    """The value of ``text``; ``lookup(name)`` gives a variable's text (None when unknown)."""
    if depth > _MAX_DEPTH:
        return None
    tokens = _tokens(text)
    if tokens is None:
        return None
    reader = _Reader(tokens, lookup, depth)
    value = reader.sum()
    return value if reader.at == len(tokens) and value is not None else None


def _tokens(text: str) -> list[str] | None:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\n":
            i += 1
        elif c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if text[i] == "0" and j - i > 1:
                return None  # octal
            if j < n and (text[j] in _NAME or text[j] == "#"):
                return None  # 0x…, 2#101
            out.append(text[i:j])
            i = j
        elif c in _NAME_START:
            j = i
            while j < n and text[j] in _NAME:
                j += 1
            out.append(text[i:j])
            i = j
        elif c == "$" and i + 1 < n and text[i + 1] in _NAME_START:
            i += 1  # $x inside (( )) is x
        elif c in "+-*/%()":
            if text.startswith(("++", "--", "**", "+=", "-=", "*=", "/=", "%="), i):
                return None
            out.append(c)
            i += 1
        else:
            return None
    return out


class _Reader:
    def __init__(self, tokens: list[str], lookup: Callable[[str], str | None], depth: int) -> None:
        self.tokens, self.lookup, self.depth, self.at = tokens, lookup, depth, 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def sum(self) -> int | None:
        value = self.product()
        while value is not None and self.peek() in ("+", "-"):
            op = self.tokens[self.at]
            self.at += 1
            right = self.product()
            value = None if right is None else _checked(value + right if op == "+" else value - right)
        return value

    def product(self) -> int | None:
        value = self.unary()
        while value is not None and self.peek() in ("*", "/", "%"):
            op = self.tokens[self.at]
            self.at += 1
            right = self.unary()
            if right is None or (op != "*" and right == 0):
                return None
            if op == "*":
                value = _checked(value * right)
            else:
                quotient = abs(value) // abs(right) * (1 if (value >= 0) == (right >= 0) else -1)
                value = quotient if op == "/" else value - quotient * right
        return value

    def unary(self) -> int | None:
        token = self.peek()
        if token in ("+", "-"):
            self.at += 1
            value = self.unary()
            return None if value is None else (value if token == "+" else _checked(-value))
        if token == "(":
            self.at += 1
            value = self.sum()
            if self.peek() != ")":
                return None
            self.at += 1
            return value
        if token is None:
            return None
        self.at += 1
        if token.isdigit():
            return _checked(int(token))
        if token[0] in _NAME_START:
            text = self.lookup(token)
            if text is None:
                return None
            return 0 if not text.strip() else evaluate(text, self.lookup, self.depth + 1)
        return None


def _checked(value: int | None) -> int | None:
    return value if value is not None and -_LIMIT <= value < _LIMIT else None
