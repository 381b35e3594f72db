"""How a PR's state and verdict records are stored in Redis: compact JSON, read back into the shapes the
code and the API use (design §7: ≤ 2 KB of Redis per tracked PR).

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
``on_unknown``, the API and the workers never read it as free) and `expand_state` raises
`UnknownFormat`.

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
_STATE = (("repo", "r"), ("number", "n"), ("facts", "fa"), ("comments", "c"), ("lifted_all_at", "la"),
          ("reviews", "rv"), ("dismissed", "dm"), ("push_edges", "pe"), ("synced", "sy"), ("labels", "lb"))
_FACTS: tuple[tuple[str, Any], ...] = (("open", True), ("draft", False), ("labels", []))
"""Facts fields left out when they hold these values (`core.prstate.Facts.from_dict`'s defaults)."""
_STATE_EMPTY: tuple[Any, ...] = (None, {}, [], False)
"""Top-level state values that equal ``from_dict``'s default when absent."""
_REGISTER = (("at", "t"), ("held", "h"), ("ref", "i"), ("reason", "r"), ("exp", "x"))


class UnknownFormat(ValueError):
    """A stored record in a format this release does not know: never to be read as empty or free."""


def dumps(data: dict[str, Any] | list[Any]) -> str:
    import json

    return json.dumps(data, separators=(",", ":"))


def _pr_url(repo: str, number: int) -> str:
    return f"{GITHUB}{repo}/pull/{number}"


def _put_origin(out: dict[str, Any], origin: Any, prefix: str) -> None:
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


def _get_origin(data: dict[str, Any], prefix: str) -> Any:
    if "pc" in data:
        return f"{prefix}{COMMENT_ANCHOR}{int(data['pc'])}"
    return prefix + str(data["p"]) if "p" in data else data.get("o", "")


def _pack_time(text: Any) -> Any:
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
    return seconds if _time(seconds) == text else text


def _time(value: Any) -> Any:
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
    scope, prefix = f"{repo}#{number}", _pr_url(repo, number)
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
            out[short] = _pack_time(value)
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
            out[short] = _pack_time(hold[name]) if short in "tx" else hold[name]
    _put_origin(out, hold.get("origin"), prefix)
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
        scope, prefix = f"{repo}#{number}", _pr_url(repo, number)
        record: dict[str, Any] = {"schema": LEGACY_SCHEMA}
        for name, short in _VERDICT:
            if name == "holds":
                record[name] = [_expand_hold(h, scope, prefix) for h in holds]
            elif name == "target_url" and "U" in data:
                record[name] = f"{data['U']}/{repo}/pull/{number}"
            elif name == "hold_label":
                record[name] = data.get(short, DEFAULT_HOLD_LABEL)
            elif name == "computed_at":
                record[name] = _time(data.get(short))
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
        "created_at": _time(hold.get("t")),
        "expires_at": _time(hold.get("x")),
        "origin": _get_origin(hold, prefix),
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


# --- state -----------------------------------------------------------------------------------------


def encode_state(state: dict[str, Any], version: int) -> str:
    """The stored form of `core.prstate.PullState.to_dict` with its state version ``version``, to be
    stored under ``keys.pr_state(state["repo"], state["number"])``: the key gives both back."""
    repo, number = str(state["repo"]), int(state["number"])
    prefix = _pr_url(repo, number)
    out: dict[str, Any] = {"f": FORMAT, "v": version}
    for name, short in _STATE:
        value = state.get(name)
        if name == "repo":
            if repo != repo.lower():
                out[short] = repo
        elif name == "number":
            pass
        elif name == "facts" and value:
            out[short] = _pack_facts(value, repo)
        elif name in ("comments", "reviews", "labels") and value:
            out[short] = {k: _pack_register(r, k, prefix, name == "comments") for k, r in value.items()}
        elif value not in _STATE_EMPTY:
            out[short] = value
    known = {name for name, _ in _STATE}
    out.update((k, v) for k, v in state.items() if k not in known and k not in out)
    return dumps(out)


def _pack_facts(facts: dict[str, Any], repo: str) -> dict[str, Any]:
    out = {k: v for k, v in facts.items() if (k, v) not in _FACTS}
    if "at" in out:
        out["at"] = _pack_time(out["at"])
    if out.get("head_repo") == repo:
        del out["head_repo"]
    elif "head_repo" not in out:
        out["head_repo"] = None  # absent is not the same as the PR's repo
    return out


def _register_defaults(held: Any, ref: Any, key: str, prefix: str, comment: bool) -> tuple[str, str]:
    """The name and origin a register has unless it says otherwise: a hold's name is its (lower-cased)
    key; a comment hold's origin is its comment on the PR's page."""
    name = key if held else ""
    origin = f"{prefix}{COMMENT_ANCHOR}{ref}" if comment and held and str(ref).isdigit() else ""
    return name, origin


def _pack_register(register: dict[str, Any], key: str, prefix: str, comment: bool) -> dict[str, Any]:
    out = {short: _pack_time(register[name]) if short in "tx" else register[name]
           for name, short in _REGISTER if register.get(name) not in (None, "")}
    if out.get("h") is True:
        del out["h"]  # most registers hold: only a lift is marked
    name, origin = _register_defaults(register.get("held"), register.get("ref", ""), key, prefix, comment)
    if register.get("name", "") != name:
        out["n"] = register.get("name", "")
    if register.get("origin", "") != origin:
        if register.get("origin"):
            _put_origin(out, register.get("origin"), prefix)
        else:
            out["o"] = ""
    return out


def expand_state(data: object, repo: str, number: int) -> tuple[dict[str, Any], int | None]:
    """A decoded ``keys.pr_state(repo, number)`` -> (`PullState.from_dict` input, its version). The
    version is None for the full format of earlier releases, whose counter was a key of its own.
    Raises `UnknownFormat`."""
    if not isinstance(data, dict):
        raise UnknownFormat("the PR state is not a JSON object")
    if "f" not in data:
        if "repo" in data and "number" in data:
            return data, None
        raise UnknownFormat("the PR state is in no known format")
    if data["f"] != FORMAT:
        raise UnknownFormat(f"the PR state has unknown format {data['f']!r}")
    try:
        repo, number = str(data.get("r", repo.lower())), int(number)
        prefix = _pr_url(repo, number)
        state: dict[str, Any] = {"repo": repo, "number": number}
        for name, short in _STATE:
            if short not in data or name in state:
                continue
            value = data[short]
            if name == "facts" and value:
                value = _expand_facts(value, repo)
            elif name in ("comments", "reviews", "labels"):
                value = {k: _expand_register(r, k, prefix, name == "comments") for k, r in value.items()}
            state[name] = value
        version = int(data["v"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UnknownFormat(f"the PR state is malformed: {exc!r}") from None
    known = {short for _, short in _STATE} | {"f", "v"}
    state.update((k, v) for k, v in data.items() if k not in known and k not in state)
    return state, version


def _expand_facts(facts: dict[str, Any], repo: str) -> dict[str, Any]:
    out = {**{k: list(v) if isinstance(v, list) else v for k, v in _FACTS}, **facts}
    if "at" in out:
        out["at"] = _time(out["at"])
    if "head_repo" not in facts:
        out["head_repo"] = repo
    elif facts["head_repo"] is None:
        del out["head_repo"]
    return out


def _expand_register(register: dict[str, Any], key: str, prefix: str, comment: bool) -> dict[str, Any]:
    out = {name: _time(register[short]) if short in "tx" else register[short]
           for name, short in _REGISTER if short in register}
    out.setdefault("held", True)
    out.setdefault("ref", "")
    name, origin = _register_defaults(out["held"], out["ref"], key, prefix, comment)
    name = register.get("n", name)
    if name:
        out["name"] = name
    if any(k in register for k in ("o", "p", "pc")):
        origin = _get_origin(register, prefix)
    if origin:
        out["origin"] = origin
    return out


def decode_state(raw: str | bytes, repo: str, number: int) -> tuple[dict[str, Any], int | None]:
    """The value of ``keys.pr_state(repo, number)`` -> see `expand_state`."""
    import json

    try:
        data = json.loads(raw)
    except ValueError:
        raise UnknownFormat("the PR state is not JSON") from None
    return expand_state(data, repo, number)
