"""Reading what redis-py hands back: the one bytes → str helper.

The product's Redis clients do not set ``decode_responses`` (rq stores pickled job data, and the hold
state is compared byte for byte), so every reply is ``bytes``; these turn one into the text it holds.
"""

from __future__ import annotations


def as_text(raw: object) -> str:
    """``raw`` as text: bytes decoded as UTF-8, anything else through ``str``."""
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def maybe_text(raw: object) -> str | None:
    """`as_text`, keeping a missing value (``None``: no such key or field) as ``None``."""
    return None if raw is None else as_text(raw)
