"""How a PR's state (`core.prstate.PullState`) is stored in Redis: compact JSON carrying its version.

The rules are `core.verdict_format`' (short names, defaults and what the key gives left out, epoch times), plus
the state's own: facts' defaults (open, not a draft, no labels, the head in the PR's repo), a hold
register's name is its key and a comment hold's origin its comment on the PR's page unless stored, a
register holds unless marked ``"h": false``. The full format of earlier releases (no ``f``, with
``repo`` and ``number``) is read as it is, its version being the legacy counter key.
"""

from __future__ import annotations

from core.verdict_format import (
    COMMENT_ANCHOR,
    FORMAT,
    UnknownFormat,
    dumps,
    get_origin,
    pack_time,
    pr_url,
    put_origin,
    unpack_time,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_STATE = (("repo", "r"), ("number", "n"), ("facts", "fa"), ("comments", "c"), ("lifted_all_at", "la"),
          ("reviews", "rv"), ("dismissed", "dm"), ("push_edges", "pe"), ("synced", "sy"), ("labels", "lb"),
          ("grants", "gr"))
_FACTS: tuple[tuple[str, Any], ...] = (("open", True), ("draft", False), ("labels", []))
"""Facts fields left out when they hold these values (`core.prstate.Facts.from_dict`'s defaults)."""
_STATE_EMPTY: tuple[Any, ...] = (None, {}, [], False)
"""Top-level state values that equal ``from_dict``'s default when absent."""
_REGISTER = (("at", "t"), ("held", "h"), ("ref", "i"), ("reason", "r"), ("exp", "x"))




def encode_state(state: dict[str, Any], version: int) -> str:
    """The stored form of `core.prstate.PullState.to_dict` with its state version ``version``, to be
    stored under ``keys.pr_state(state["repo"], state["number"])``: the key gives both back."""
    repo, number = str(state["repo"]), int(state["number"])
    prefix = pr_url(repo, number)
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
        out["at"] = pack_time(out["at"])
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
    out = {short: pack_time(register[name]) if short in "tx" else register[name]
           for name, short in _REGISTER if register.get(name) not in (None, "")}
    if out.get("h") is True:
        del out["h"]  # most registers hold: only a lift is marked
    name, origin = _register_defaults(register.get("held"), register.get("ref", ""), key, prefix, comment)
    if register.get("name", "") != name:
        out["n"] = register.get("name", "")
    if register.get("origin", "") != origin:
        if register.get("origin"):
            put_origin(out, register.get("origin"), prefix)
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
        prefix = pr_url(repo, number)
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
        out["at"] = unpack_time(out["at"])
    if "head_repo" not in facts:
        out["head_repo"] = repo
    elif facts["head_repo"] is None:
        del out["head_repo"]
    return out


def _expand_register(register: dict[str, Any], key: str, prefix: str, comment: bool) -> dict[str, Any]:
    out = {name: unpack_time(register[short]) if short in "tx" else register[short]
           for name, short in _REGISTER if short in register}
    out.setdefault("held", True)
    out.setdefault("ref", "")
    name, origin = _register_defaults(out["held"], out["ref"], key, prefix, comment)
    name = register.get("n", name)
    if name:
        out["name"] = name
    if any(k in register for k in ("o", "p", "pc")):
        origin = get_origin(register, prefix)
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
