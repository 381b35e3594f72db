"""A request's body as a JSON object, read the way merge-hold reads every body from outside: depth-bounded
(`core.json_text`), never through Flask's ``get_json``, whose parser recurses without a bound."""

from __future__ import annotations

from typing import Any

from flask import request

from core import json_text


def json_object() -> dict[str, Any] | None:
    """The body as an object; None when it is not JSON, nests deeper than `core.json_text.MAX_DEPTH` or is
    no object (the route answers 400 with its own usage). A body over the request's cap raises Werkzeug's
    413 as before."""
    try:
        parsed = json_text.loads(request.get_data(cache=False))
    except ValueError:  # UnicodeDecodeError and json_text.TooDeep are ValueErrors too
        return None
    return parsed if isinstance(parsed, dict) else None
