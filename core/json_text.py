"""JSON from outside, parsed with a bound on its depth (issue 24 item 4). Pure.

Every body merge-hold parses — webhook deliveries in the intake pump and the delivery job, the hook's
records, the holds API — goes through `loads`. Python's parser recurses once per level: a document
nested a few thousand levels deep raises `RecursionError`, which is no `ValueError`, and escaped the
pump's handling until it killed the pump thread for good. Here anything nested deeper than
`MAX_DEPTH` is refused as `TooDeep`, a `ValueError`, like any other malformed body: GitHub's payloads
nest about ten levels, the hook's records four.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (far below Python's recursion limit)."""


class TooDeep(ValueError):
    """A JSON document nested deeper than `MAX_DEPTH`."""


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed document nests arrays and objects more than ``limit`` levels deep: a walk with
    its own stack (never Python's), over containers only."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, level = stack.pop()
        if level > limit:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, level + 1))
    return False


def loads(data: bytes | str) -> Any:
    """The parsed document; `ValueError` when it is not JSON (`UnicodeDecodeError` is one), `TooDeep`
    when it nests deeper than `MAX_DEPTH`."""
    text = data.decode(json.detect_encoding(data), "surrogatepass") if isinstance(data, bytes) else data
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if deeper_than(value):
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value
