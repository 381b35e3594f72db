"""JSON decoding for the guard's start-up path, without importing `json`.

`import json` costs about 9 ms on this kind of machine, half the guard's whole budget on a non-merge
command (design §7), because `json.decoder` imports `re` for a whitespace pattern. The decoding itself
is done by the C scanner in `_json`, which `json.loads` calls too; this module calls it directly, with
the same settings as `json.loads` defaults, and checks the surrounding whitespace by hand. Where `_json`
is missing (another Python implementation) it falls back to `json.loads`, which is merely slower.
"""

from __future__ import annotations

_WHITESPACE = " \t\n\r"


class JSONError(ValueError):
    """Not one JSON document."""


def _reject_constant(name: str) -> float:
    raise JSONError(f"non-standard JSON constant {name}")


class _ScannerContext:
    # The attributes `_json.make_scanner` reads, as `json.JSONDecoder()` sets them, except that NaN and
    # Infinity (not JSON) are refused.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_reject_constant)


def loads(text: str | bytes) -> object:
    """Decode one JSON document; raises `JSONError` on anything else."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONError(f"not UTF-8: {exc}") from None
    try:
        import _json

        start = len(text) - len(text.lstrip(_WHITESPACE))
        # typeshed types the context as the scanner class itself; any object with the attributes works.
        scanner = _json.make_scanner(_ScannerContext)  # type: ignore[arg-type]
        value, end = scanner(text, start)
        if not text[end:].strip(_WHITESPACE):
            return value
    except JSONError:
        raise
    except (ImportError, StopIteration, ValueError, SystemError, RecursionError):
        # The C scanner reports errors through `json.decoder`, and only once that module is loaded
        # (SystemError otherwise). Errors are the cold path: let `json.loads` say what is wrong.
        pass
    return _slow_loads(text)


def _slow_loads(text: str) -> object:
    import json

    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise JSONError("JSON nested too deeply") from None
    except ValueError as exc:
        raise JSONError(str(exc)) from None


def dumps_flat(record: dict[str, object]) -> str:
    """One compact, ASCII-only JSON text for a flat record (str, int, bool, None values), without `json`.

    `json.dumps` would import `re` through `json.decoder` (8 ms). Anything not flat goes to `json.dumps`.
    ASCII with escapes keeps the text valid UTF-8 even for lone surrogates in a command.
    """
    try:
        from _json import encode_basestring_ascii as encode_basestring
    except ImportError:  # pragma: no cover - CPython always has it
        return _slow_dumps(record)
    parts = []
    for key, value in record.items():
        if value is None:
            text = "null"
        elif value is True:
            text = "true"
        elif value is False:
            text = "false"
        elif isinstance(value, str):
            text = encode_basestring(value)
        elif isinstance(value, int):
            text = int.__repr__(value)
        else:
            return _slow_dumps(record)
        parts.append(f"{encode_basestring(str(key))}:{text}")
    return "{" + ",".join(parts) + "}"


def _slow_dumps(record: dict[str, object]) -> str:
    import json

    return json.dumps(record, separators=(",", ":"))
