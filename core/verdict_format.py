"""How a PR's verdict record is stored in Redis — the verdict and held-heads entries here, and the compact
rules the state record (`core.state_format`) shares: compact JSON, read back into the shapes the code and
the API use (design §7: ≤ 2 KB of Redis per tracked PR).

The stored form is the full shape with short field names, leaving out every field that equals its
default or can be derived from the rest or from the key it is stored under: the repo when it is spelled
in lower case, the PR number, a PR hold's scope ``owner/repo#N``, a comment hold's id ``comment:login``,
the ``https://github.com/owner/repo/pull/N#issuecomment-ID`` of a comment; times are epoch seconds.
Decoding, given the key's repo and number, puts them back, so the round trip is exact. Fields this
module does not know pass through under their own names: a field added to `core.prstate` is stored,
just not shortened.

Each record carries its own counter — the state its ``v`` (bumped in the same EXEC as the state), the
verdict its ``version`` and ``state_version`` — instead of one more key per counter (each key costs
~70 bytes of Redis overhead).

Formats: ``"f": 2`` marks these records. A verdict without ``f`` but with ``"schema": 1``, or a state
without ``f`` but with ``repo`` and ``number``, is the full format of earlier releases: still read as
is. Anything else is unknown: `expand_verdict` answers None (not established: the hook applies
``on_unknown``, the API and the workers never read it as free) and `core.state_format.expand_state`
raises `UnknownFormat`.

Pure and standard-library only: the agent hook imports it for its one Redis read, and decodes the JSON
itself (`hook.fastjson`), so ``json`` (which pulls in ``re``) is imported only by the functions that
need it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 2
"""The stored format of both records (``f``)."""
LEGACY_SCHEMA = 1
"""``schema`` of the full verdict shape (`core.verdict.RECORD_SCHEMA`): what the API serves, and the
stored format of earlier releases."""
GITHUB = "https://github.com/"
COMMENT_ANCHOR = "#issuecomment-"
DEFAULT_HOLD_LABEL = "do-not-merge/hold"
"""`core.repo_config.RepoConfig.hold_label`'s default (pinned by tests/test_records.py): not stored."""
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
"""`core.holds.to_iso`'s format: such times are stored as epoch seconds, any other text as is."""

_VERDICT = (("repo", "r"), ("number", "n"), ("held", "h"), ("error", "e"), ("state", "s"),
            ("description", "d"), ("target_url", "u"), ("holds", "hs"), ("head_sha", "sha"), ("base", "b"),
            ("head_ref", "ref"), ("hold_label", "l"), ("computed_at", "at"), ("version", "v"),
            ("state_version", "sv"))
"""Verdict fields in the API's order, with their stored names. None values are not stored, except
``state_version`` (present or absent as given)."""
class UnknownFormat(ValueError):
    """A stored record in a format this release does not know: never to be read as empty or free."""


def dumps(data: dict[str, Any] | list[Any]) -> str:
    import json

    return json.dumps(data, separators=(",", ":"))


def pr_url(repo: str, number: int) -> str:
    return f"{GITHUB}{repo}/pull/{number}"


def put_origin(out: dict[str, Any], origin: Any, prefix: str) -> None:
    """An origin on the PR's own page is stored as its suffix — a comment's as its id (``pc``), any
    other as ``p`` — and one elsewhere as is (``o``)."""
    if not origin:
        return
    if isinstance(origin, str) and origin.startswith(prefix) and len(origin) > len(prefix):
        suffix = origin[len(prefix):]
        comment = suffix.removeprefix(COMMENT_ANCHOR)
        if comment != suffix and comment.isdigit() and str(int(comment)) == comment:
            out["pc"] = int(comment)
        else:
            out["p"] = suffix
    else:
        out["o"] = origin


def get_origin(data: dict[str, Any], prefix: str) -> Any:
    if "pc" in data:
        return f"{prefix}{COMMENT_ANCHOR}{int(data['pc'])}"
    return prefix + str(data["p"]) if "p" in data else data.get("o", "")


def pack_time(text: Any) -> Any:
    """``2026-01-05T10:00:01Z`` -> 1767607201 (12 bytes fewer); anything that would not come back the
    same is kept as it is."""
    if not isinstance(text, str) or len(text) != 20:
        return text
    import calendar
    import time

    try:
        seconds = calendar.timegm(time.strptime(text, TIME_FORMAT))
    except ValueError:
        return text
    return seconds if unpack_time(seconds) == text else text


def unpack_time(value: Any) -> Any:
    """A stored time back in `core.holds.to_iso`'s form (the hook reads these: ``time`` only)."""
    if isinstance(value, int) and not isinstance(value, bool):
        import time

        return time.strftime(TIME_FORMAT, time.gmtime(value))
    return value


def _hold_id(source: Any, holder: Any) -> str:
    return f"{source}:{str(holder).lower()}"


# --- verdict ---------------------------------------------------------------------------------------


def _status_state(held: Any, error: Any) -> str:
    """The status state a verdict posts unless its repo's config says otherwise (``held_state``)."""
    return "error" if error else "failure" if held else "success"


def pack_verdict(record: dict[str, Any]) -> dict[str, Any]:
    """The stored form of a verdict record in the API shape (`core.verdict.verdict_record`), to be
    stored under ``keys.verdict(record["repo"], record["number"])``: the key gives both back."""
    repo, number = str(record["repo"]), int(record["number"])
    scope, prefix = f"{repo}#{number}", pr_url(repo, number)
    out: dict[str, Any] = {"f": FORMAT}
    for name, short in _VERDICT:
        value = record.get(name)
        if name == "repo":
            if repo != repo.lower():
                out[short] = repo  # the key spells it in lower case: GitHub's spelling is kept
        elif name == "number":
            pass  # the key's
        elif name == "state":
            if value != _status_state(record.get("held"), record.get("error")):
                out[short] = value
        elif name == "holds":
            if value:
                out[short] = [_pack_hold(h, scope, prefix) for h in value]
        elif name == "target_url" and isinstance(value, str) and value.endswith(f"/{repo}/pull/{number}"):
            out["U"] = value[:-len(f"/{repo}/pull/{number}")]  # the dashboard's base URL
        elif name == "hold_label":
            if value != DEFAULT_HOLD_LABEL:
                out[short] = value  # null stored: it is not the default
        elif name == "computed_at":
            out[short] = pack_time(value)
        elif value is not None or (name == "state_version" and name in record):
            out[short] = value
    known = {name for name, _ in _VERDICT} | {"schema", "U"}
    out.update((k, v) for k, v in record.items() if k not in known and k not in out)
    return out


def _pack_hold(hold: dict[str, Any], scope: str, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if hold["source"] != "comment":
        out["s"] = hold["source"]
    if hold.get("id") != _hold_id(hold["source"], hold.get("holder", "")):
        out["i"] = hold.get("id")
    if hold.get("scope") != scope:
        out["c"] = hold.get("scope")
    for name, short in (("holder", "h"), ("reason", "r"), ("created_at", "t"), ("expires_at", "x")):
        if hold.get(name):
            out[short] = pack_time(hold[name]) if short in "tx" else hold[name]
    put_origin(out, hold.get("origin"), prefix)
    if hold.get("paths"):
        out["pt"] = list(hold["paths"])  # a path-scoped hold's globs (absent for every other hold)
    return out


def encode_verdict(record: dict[str, Any]) -> str:
    return dumps(pack_verdict(record))


def expand_verdict(data: object, repo: str, number: int) -> dict[str, Any] | None:
    """The API shape of a decoded stored verdict (either format) read from ``keys.verdict(repo,
    number)``; None when it is in no known format or malformed — not established, never free."""
    if not isinstance(data, dict):
        return None
    if "f" not in data:
        return data if data.get("schema") == LEGACY_SCHEMA else None
    if data["f"] != FORMAT:
        return None
    try:
        repo, number = str(data.get("r", repo.lower())), int(number)
        holds = data.get("hs", [])
        if not isinstance(holds, list) or not isinstance(data["h"], bool) or not isinstance(data.get("r", ""), str):
            return None
        scope, prefix = f"{repo}#{number}", pr_url(repo, number)
        record: dict[str, Any] = {"schema": LEGACY_SCHEMA}
        for name, short in _VERDICT:
            if name == "holds":
                record[name] = [_expand_hold(h, scope, prefix) for h in holds]
            elif name == "target_url" and "U" in data:
                record[name] = f"{data['U']}/{repo}/pull/{number}"
            elif name == "hold_label":
                record[name] = data.get(short, DEFAULT_HOLD_LABEL)
            elif name == "computed_at":
                record[name] = unpack_time(data.get(short))
            elif name == "state":
                record[name] = data.get(short, _status_state(data["h"], data.get("e")))
            elif name != "state_version" or short in data:
                record[name] = data.get(short)
        record["repo"], record["number"] = repo, number
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    known = {short for _, short in _VERDICT} | {"f", "U"}
    record.update((k, v) for k, v in data.items() if k not in known and k not in record)
    return record


def _expand_hold(hold: dict[str, Any], scope: str, prefix: str) -> dict[str, Any]:
    holder, source = hold.get("h", ""), hold.get("s", "comment")
    return {
        "id": hold.get("i") if "i" in hold else _hold_id(source, holder),
        "source": source,
        "scope": hold.get("c", scope),
        "holder": holder,
        "reason": hold.get("r", ""),
        "created_at": unpack_time(hold.get("t")),
        "expires_at": unpack_time(hold.get("x")),
        "origin": get_origin(hold, prefix),
        **({"paths": list(hold["pt"])} if isinstance(hold.get("pt"), list) else {}),
    }


def decode_verdict(raw: str | bytes | None, repo: str, number: int) -> dict[str, Any] | None:
    """The value of ``keys.verdict(repo, number)`` -> the API shape, or None when absent or unreadable."""
    if raw is None:
        return None
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return expand_verdict(data, repo, number)


# --- held heads ----------------------------------------------------------------------------------


def encode_held_head(base: Any, head_sha: Any, description: Any) -> str:
    """A held PR's entry in ``keys.held_heads``: ``[base, head_sha, description]`` (the field names
    would be a third of it)."""
    return dumps([base, head_sha, description])


def expand_held_head(data: object) -> dict[str, Any] | None:
    """A decoded ``held_heads`` entry (this list, or the object of earlier releases) -> ``{"base",
    "head_sha", "description"}``; None when it is neither."""
    if isinstance(data, list) and len(data) == 3:
        return {"base": data[0], "head_sha": data[1], "description": data[2]}
    return data if isinstance(data, dict) else None
