"""The guard's evidence: one JSON line (a *hook record*) per judged merge, appended to the spec's
``record_file`` — not a verdict record (`core.verdict_format`), which the guard only reads.

A record is evidence for the audit log (`hook.tools.fold` sends them as ``hook.gate.fired`` events); it is
never consulted to judge. It carries a SHA-256 digest of the exact command and a copy scrubbed of
secrets, because agents paste tokens into commands (``GH_TOKEN=ghp_… gh pr merge``, ``curl -H
"Authorization: Bearer …"``, URLs with a password). Scrubbing is by pattern and errs towards hiding.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

MAX_COMMAND_CHARS = 4000
"""A heredoc can be megabytes; the digest covers the whole command, the copy its start."""

MASK = "***"

_SECRET_WORDS = ("password", "passwd", "pwd", "token", "secret", "apikey", "api_key", "api-key",
                 "accesskey", "access_key", "access-key")

# (substrings without which the pattern cannot match, checked on lower-cased text unless the pattern is
# case-sensitive; the pattern; its replacement). Checking the substrings first means an ordinary
# `gh pr merge 5` never compiles a pattern, nor imports `re` (8 ms of the guard's budget).
_SCRUBBERS: list[tuple[tuple[str, ...], bool, str, str]] = [
    # Header values first, so that a token inside one is hidden whole.
    (("authorization", "x-api-key", "private-token"), True,
     r"(?i)\b(authorization|proxy-authorization|x-api-key|private-token)(\s*:\s*)[^\r\n'\"]+", rf"\1\2{MASK}"),
    # scheme://user:password@host -> scheme://***@host
    (("://",), True, r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@", rf"\1{MASK}@"),
    (("bearer", "basic"), True, r"(?i)\b(bearer|basic)(\s+)(?!\*\*\*)[A-Za-z0-9._~+/=-]{6,}", rf"\1\2{MASK}"),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), False, r"\b(gh[pousr]_)[A-Za-z0-9]{10,}", rf"\1{MASK}"),
    (("github_pat_",), False, r"\b(github_pat_)[A-Za-z0-9_]{10,}", rf"\1{MASK}"),
    (("xox",), False, r"\b(xox[abposr]-)[A-Za-z0-9-]+", rf"\1{MASK}"),
    (("glpat-",), False, r"\b(glpat-)[A-Za-z0-9_-]{10,}", rf"\1{MASK}"),
    # key=value and --key value for names that carry secrets (also GH_TOKEN=…, ?token=… in URLs).
    (_SECRET_WORDS, True,
     r"(?i)\b([A-Za-z0-9_-]*(?:password|passwd|pwd|token|secret|api[_-]?key|access[_-]?key))"
     r"(=|:\s?)(['\"]?)(?!\*\*\*)[^\s&'\"]+", rf"\1\2\3{MASK}"),
    (_SECRET_WORDS, True, r"(?i)(--(?:password|token|secret|api-key)\s+)(['\"]?)(?!\*\*\*)[^\s'\"]+",
     rf"\1\2{MASK}"),
    # curl -u user:password / --user=user:password
    (("-u",), False, r"((?:^|\s)(?:-u|--user)(?:\s+|=))(['\"]?)(?!\*\*\*)[^\s:'\"]+:[^\s'\"]+", rf"\1\2{MASK}"),
]
_compiled: dict[str, re.Pattern[str]] = {}


def scrub(text: str) -> str:
    """``text`` with anything that looks like a credential replaced by ``***``."""
    lowered = text.lower()
    for triggers, folded, source, replacement in _SCRUBBERS:
        haystack = lowered if folded else text
        if not any(t in haystack for t in triggers):
            continue
        pattern = _compiled.get(source)
        if pattern is None:
            import re

            pattern = _compiled[source] = re.compile(source)
        text = pattern.sub(replacement, text)
        lowered = text.lower()
    return text


def _sha256_hex(data: bytes) -> str:
    # The C builtin behind hashlib's fallback: `hashlib` itself loads OpenSSL (3 ms) for one digest.
    try:
        from _sha2 import sha256  # type: ignore[import-not-found, unused-ignore]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            from hashlib import sha256
    hexdigest: str = sha256(data).hexdigest()
    return hexdigest


def digest(text: str) -> str:
    return "sha256:" + _sha256_hex(text.encode("utf-8", "surrogatepass"))


def command_text(tool_name: str, tool_input: object) -> str:
    """What the record calls the command: the shell text, or the MCP tool and its arguments."""
    if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        return str(tool_input["command"])
    import json

    return f"{tool_name} {json.dumps(tool_input, sort_keys=True, separators=(',', ':'))}"


def clip(text: str) -> str:
    if len(text) <= MAX_COMMAND_CHARS:
        return text
    return text[:MAX_COMMAND_CHARS] + f"…[{len(text) - MAX_COMMAND_CHARS} more characters]"


def make_record(
    *,
    spec_version: int,
    time_iso: str,
    payload: dict[str, Any],
    command: str,
    repo: str | None,
    pr: int | None,
    decision: str,
    code: str,
    reason: str,
    via: str,
) -> dict[str, Any]:
    def text(key: str) -> str | None:
        value = payload.get(key)
        return value if isinstance(value, str) else None

    return {
        "spec_version": spec_version,
        "time": time_iso,
        "session_id": text("session_id"),
        "tool_use_id": text("tool_use_id"),
        "tool_name": text("tool_name"),
        "repo": repo,
        "pr": pr,
        "via": via,
        "decision": decision,
        "code": code,
        "reason": scrub(reason),
        "command_digest": digest(command),
        "command": clip(scrub(command)),
    }


def append(path: str, records: list[dict[str, Any]]) -> None:
    """Append ``records`` as JSON lines in one ``write`` (O_APPEND), so concurrent guards do not interleave."""
    if not records:
        return
    import os

    from hook.fastjson import dumps_flat

    data = "".join(dumps_flat(r) + "\n" for r in records)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # commands are private
    try:
        os.write(fd, data.encode("ascii"))
    finally:
        os.close(fd)


def parse_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The records in ``data``, tolerantly: returns (records, number of lines skipped as unreadable)."""
    from hook.fastjson import JSONError, loads

    records: list[dict[str, Any]] = []
    bad = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except JSONError:
            bad += 1
            continue
        if isinstance(value, dict):
            records.append(value)
        else:
            bad += 1
    return records, bad


def rescrub(record: dict[str, Any]) -> dict[str, Any]:
    """A record as it may leave the machine: every string scrubbed again, the command clipped."""
    clean: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, str):
            value = scrub(value)
            if key == "command":
                value = clip(value)
        elif isinstance(value, (dict, list)):
            continue  # records are flat; nested values are not ours and are not forwarded
        clean[str(key)] = value
    return clean
