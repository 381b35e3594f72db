"""The repo config `.github/merge-hold.yml`: fields, defaults with their reasons, validation.

YAML is parsed at the edge (``state/config_file.py``); this module sees plain mappings. Keys may
be spelled with hyphens or underscores (``hold-label`` or ``hold_label``); unknown keys are errors, so
a typo never silently leaves a default in place. The published JSON Schema, ``merge-hold.schema.json``
beside this file, accepts exactly what `from_mapping` accepts, except that only `from_mapping` can tell
a well-formed but unknown time zone (the schema cannot consult the zone database) and a path glob whose
range runs backwards (``[z-a]``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.paths import PathsError, check
from core.treecloser import TreeRule

CONFIG_PATH = ".github/merge-hold.yml"
PERMISSIONS = ("read", "triage", "write", "maintain", "admin")
HELD_STATES = ("failure", "pending")
FEEDBACK_MODES = ("reactions", "comments", "off")
FREEZE_MODES = ("statuses", "ruleset")
QUEUE_ON_FREEZE = ("stop", "drain")
DEPLOYMENT_MODES = ("wait", "reject")
MAX_ENVIRONMENT = 255
"""GitHub refuses longer environment names."""
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_ALIASES = {"weekdays": DAYS[:5], "weekends": DAYS[5:], "daily": DAYS}
_FULL_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MAX_LABEL = 50
"""GitHub refuses longer label names."""

TIME = re.compile(r"^(?:[01]?[0-9]|2[0-3]):[0-5][0-9]$")
END_TIME = re.compile(r"^(?:(?:[01]?[0-9]|2[0-3]):[0-5][0-9]|24:00)$")
WINDOW_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._ -]{0,62}[A-Za-z0-9._-])?$")
ZONE_SHAPE = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*$")
_NON_BLANK = re.compile(r"\S")
# Patterns are matched whole (`fullmatch`), as JSON Schema's anchored patterns are: Python's `$` alone
# would also accept a trailing newline.

Path = tuple[str | int, ...]


class ConfigError(ValueError):
    """An invalid repo config; the message names the file and, where known, the line.

    ``path`` locates the offending key or value (keys as written, list indexes as ints), ``at_key``
    says whether the key itself is wrong, ``detail`` is the message without the file: the loader uses
    them to point at the line.
    """

    def __init__(self, message: str, *, path: Path = (), at_key: bool = False, detail: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.at_key = at_key
        self.detail = detail or message


class _Invalid(Exception):
    def __init__(self, path: Path, detail: str, at_key: bool = False) -> None:
        super().__init__(detail)
        self.path, self.detail, self.at_key = path, detail, at_key


def where(path: Path) -> str:
    """``("freeze-windows", 0, "from")`` -> ``freeze-windows[0].from``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "the document"


@dataclass(frozen=True)
class FreezeWindow:
    """A recurring window in which the repo's matching branches are frozen."""

    name: str
    days: tuple[str, ...]  # mon..sun, in week order
    start: str  # "HH:MM", local to `timezone`
    end: str  # "HH:MM" or "24:00"; at or before `start` means the window ends the next day
    timezone: str = "UTC"
    branches: tuple[str, ...] = ("*",)
    exempt_labels: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    """Gitignore-style globs (`core.paths`): the window holds only PRs that change a matching file.
    Empty: every PR on its branches."""


@dataclass(frozen=True)
class RepoConfig:
    hold_permission: str = "write"
    """Placing a comment hold needs write access (or being the PR author, below)."""
    author_can_hold: bool = True
    """The PR's author may always hold (and lift their own hold on) their own PR."""
    lift_others_permission: str = "maintain"
    """Lifting someone else's hold (`/unhold @alice`, `/unhold all`) needs maintain or admin."""
    shared_holds: bool = False
    """Prow's semantics: one shared hold that anyone allowed may lift. Off: holds are per holder."""
    review_holds: bool = True
    """A `changes_requested` review holds the PR until that reviewer approves or the review is dismissed."""
    hold_label: str = "do-not-merge/hold"
    """The label that holds a PR while present (Prow's name, so teams moving from Prow keep it)."""
    held_state: str = "failure"
    """Status state for a held PR: `failure` (blocks) or `pending` (blocks, shows as waiting)."""
    feedback: str = "reactions"
    """How commands are answered on the PR: `reactions` (👀 received, 👍 applied; one reply when refused
    or mistyped), `comments` (a reply to every command) or `off`. Needs the App's Issues: write."""
    exempt_labels: tuple[str, ...] = ()
    """Labels that let a PR through room and freeze holds (never comment, review or label holds)."""
    freeze_windows: tuple[FreezeWindow, ...] = field(default_factory=tuple)
    close_on_failure: tuple[TreeRule, ...] = field(default_factory=tuple)
    """The tree closer: when a named status or check run fails on the branch's head, every PR into the
    branch is held until it is green again (`[{branch: main, contexts: [ci/build]}]`)."""
    freeze_mode: str | None = None
    """How a room hold or freeze window on the repo, a branch or the org binds: `statuses` (one
    `merge-hold` write per PR, paced) or `ruleset` (merge-hold's own ruleset, one write per repo).
    None: the server's MERGE_HOLD_FREEZE_MODE."""
    queue_on_freeze: str = "stop"
    """A merge group being checked when a freeze begins: `stop` (held at once) or `drain` (a group whose
    checks were requested before the freeze began may finish; nothing new enters)."""
    freeze_deployments: tuple[str, ...] = ()
    """Environments whose deployments a freeze stops (merge-hold is their custom deployment protection
    rule); a deployment to any other environment is approved at once."""
    deployments_on_freeze: str = "wait"
    """A frozen deployment `wait`s and is approved when the freeze lifts, or is `reject`ed at once."""
    check_run: bool = True
    """The check run `merge-hold / holds` (the holds in Markdown, with buttons) beside the status; `false`
    leaves the `merge-hold` status alone on the PR."""


DEFAULT_CONFIG = RepoConfig()


def freeze_mode_of(config: RepoConfig | None, server_default: str) -> str:
    """How the repo's freezes reach GitHub (`FREEZE_MODES`): its config's choice, else the server's."""
    return (config.freeze_mode if config is not None and config.freeze_mode else None) or server_default


# --- validation ---------------------------------------------------------------------------------


def _keys(data: Any, allowed: tuple[str, ...], path: Path) -> dict[str, tuple[str, Any]]:
    """Canonical (underscore) key -> (key as written, value); unknown or doubled keys are errors."""
    if not isinstance(data, dict):
        raise _Invalid(path, f"{where(path)} must be a mapping")
    found: dict[str, tuple[str, Any]] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise _Invalid((*path, str(key)), f"{key!r} is not a key name", at_key=True)
        canonical = key.replace("-", "_")
        # One spelling or the other, not a mix (`author-can_hold`): the schema lists exactly these two.
        if canonical not in allowed or key not in (canonical, canonical.replace("_", "-")):
            known = ", ".join(allowed)
            raise _Invalid((*path, key), f"unknown key {where((*path, key))!r} (known: {known})", at_key=True)
        if canonical in found:
            raise _Invalid((*path, key), f"{key!r} repeats {found[canonical][0]!r}", at_key=True)
        found[canonical] = (key, value)
    return found


def _choice(options: tuple[str, ...]) -> Callable[[Any, Path], str]:
    def check(value: Any, path: Path) -> str:
        if value not in options:
            raise _Invalid(path, f"{where(path)} must be {', '.join(options[:-1])} or {options[-1]}")
        return str(value)

    return check


def _feedback(value: Any, path: Path) -> str:
    # YAML 1.1 reads a bare `off` as false: `feedback: off` means what it says.
    return "off" if value is False else _choice(FEEDBACK_MODES)(value, path)


def _bool(value: Any, path: Path) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(path, f"{where(path)} must be true or false")
    return value


def _text(value: Any, path: Path, *, limit: int, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not _NON_BLANK.search(value):
        raise _Invalid(path, f"{where(path)} must be a non-empty string of at most {limit} characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise _Invalid(path, f"{where(path)} {value!r} is not allowed here")
    return value


def _label(value: Any, path: Path) -> str:
    return _text(value, path, limit=MAX_LABEL)


def _list(value: Any, path: Path, item: Callable[[Any, Path], str], *, empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or (not empty and not value):
        raise _Invalid(path, f"{where(path)} must be a {'' if empty else 'non-empty '}list")
    items = [item(v, (*path, i)) for i, v in enumerate(value)]
    return tuple(dict.fromkeys(items))


def _labels(value: Any, path: Path) -> tuple[str, ...]:
    return _list(value, path, _label)


def _day(value: Any, path: Path) -> str:
    if not isinstance(value, str) or value.lower() not in (*DAYS, *_FULL_DAYS, *DAY_ALIASES):
        raise _Invalid(path, f"{where(path)} must be mon..sun, weekdays, weekends or daily")
    return value.lower()


def _days(value: Any, path: Path) -> tuple[str, ...]:
    names = (_day(value, path),) if isinstance(value, str) else _list(value, path, _day, empty=False)
    chosen: set[str] = set()
    for name in names:
        chosen.update(DAY_ALIASES.get(name) or (name[:3],))
    return tuple(d for d in DAYS if d in chosen)


def _time(pattern: re.Pattern[str], example: str) -> Callable[[Any, Path], str]:
    def check(value: Any, path: Path) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise _Invalid(path, f'{where(path)} must be a time "HH:MM" such as "{example}" (quoted in YAML)')
        hours, minutes = value.split(":")
        return f"{int(hours):02d}:{minutes}"

    return check


def _zone(value: Any, path: Path) -> str:
    if not isinstance(value, str) or not ZONE_SHAPE.fullmatch(value):
        raise _Invalid(path, f"{where(path)} must be an IANA time zone such as Europe/Berlin")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory such as "America"
        raise _Invalid(path, f"{where(path)}: unknown time zone {value!r}") from None
    return value


def _glob(value: Any, path: Path) -> str:
    return _text(value, path, limit=255)


def _paths(value: Any, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Invalid(path, f"{where(path)} must be a list of gitignore-style patterns")
    try:
        return check(value)
    except PathsError as exc:
        raise _Invalid(path, f"{where(path)}: {exc}") from None


_WINDOW_KEYS = ("name", "days", "from", "to", "timezone", "branches", "exempt_labels", "paths")


def _window(value: Any, path: Path) -> FreezeWindow:
    keys = _keys(value, _WINDOW_KEYS, path)
    for required in ("name", "from", "to"):
        if required not in keys:
            raise _Invalid(path, f"{where(path)} needs {required!r}")

    def get(key: str, check: Callable[[Any, Path], Any], default: Any) -> Any:
        if key not in keys:
            return default
        written, raw = keys[key]
        return check(raw, (*path, written))

    return FreezeWindow(
        name=get("name", lambda v, p: _text(v, p, limit=64, pattern=WINDOW_NAME), ""),
        days=get("days", _days, DAYS),
        start=get("from", _time(TIME, "16:00"), ""),
        end=get("to", _time(END_TIME, "18:00"), ""),
        timezone=get("timezone", _zone, "UTC"),
        branches=get("branches", lambda v, p: _list(v, p, _glob, empty=False), ("*",)),
        exempt_labels=get("exempt_labels", _labels, ()),
        paths=get("paths", _paths, ()),
    )


def _windows(value: Any, path: Path) -> tuple[FreezeWindow, ...]:
    if not isinstance(value, list):
        raise _Invalid(path, f"{where(path)} must be a list of windows")
    return tuple(_window(v, (*path, i)) for i, v in enumerate(value))


def _tree_rule(value: Any, path: Path) -> TreeRule:
    keys = _keys(value, ("branch", "contexts"), path)
    for required in ("branch", "contexts"):
        if required not in keys:
            raise _Invalid(path, f"{where(path)} needs {required!r}")
    branch_key, branch = keys["branch"]
    contexts_key, contexts = keys["contexts"]
    return TreeRule(_glob(branch, (*path, branch_key)),
                    _list(contexts, (*path, contexts_key), lambda v, p: _text(v, p, limit=255), empty=False))


def _tree_rules(value: Any, path: Path) -> tuple[TreeRule, ...]:
    if not isinstance(value, list):
        raise _Invalid(path, f"{where(path)} must be a list of {{branch, contexts}}")
    return tuple(_tree_rule(v, (*path, i)) for i, v in enumerate(value))


def _environments(value: Any, path: Path) -> tuple[str, ...]:
    return _list(value, path, lambda v, p: _text(v, p, limit=MAX_ENVIRONMENT))


_FIELDS: dict[str, Callable[[Any, Path], Any]] = {
    "hold_permission": _choice(PERMISSIONS),
    "author_can_hold": _bool,
    "lift_others_permission": _choice(PERMISSIONS),
    "shared_holds": _bool,
    "review_holds": _bool,
    "hold_label": _label,
    "held_state": _choice(HELD_STATES),
    "feedback": _feedback,
    "exempt_labels": _labels,
    "freeze_windows": _windows,
    "close_on_failure": _tree_rules,
    "freeze_mode": _choice(FREEZE_MODES),
    "queue_on_freeze": _choice(QUEUE_ON_FREEZE),
    "freeze_deployments": _environments,
    "deployments_on_freeze": _choice(DEPLOYMENT_MODES),
    "check_run": _bool,
}


def from_mapping(data: Any, *, source: str = CONFIG_PATH) -> RepoConfig:
    """Validate a parsed YAML document into a `RepoConfig`; `ConfigError` names what is wrong."""
    if data is None:
        return DEFAULT_CONFIG
    try:
        if not isinstance(data, dict):
            raise _Invalid((), "the top level must be a mapping of settings")
        keys = _keys(data, tuple(_FIELDS), ())
        values = {name: _FIELDS[name](raw, (written,)) for name, (written, raw) in keys.items()}
    except _Invalid as invalid:
        raise ConfigError(
            f"{source}: {invalid.detail}", path=invalid.path, at_key=invalid.at_key, detail=invalid.detail
        ) from None
    return RepoConfig(**values)


def to_mapping(config: RepoConfig) -> dict[str, Any]:
    """The config as a plain mapping (for storage); `from_mapping` reads it back to an equal config."""
    return {
        "hold_permission": config.hold_permission,
        "author_can_hold": config.author_can_hold,
        "lift_others_permission": config.lift_others_permission,
        "shared_holds": config.shared_holds,
        "review_holds": config.review_holds,
        "hold_label": config.hold_label,
        "held_state": config.held_state,
        "feedback": config.feedback,
        "exempt_labels": list(config.exempt_labels),
        "freeze_windows": [
            {
                "name": w.name,
                "days": list(w.days),
                "from": w.start,
                "to": w.end,
                "timezone": w.timezone,
                "branches": list(w.branches),
                "exempt_labels": list(w.exempt_labels),
                **({"paths": list(w.paths)} if w.paths else {}),
            }
            for w in config.freeze_windows
        ],
        "close_on_failure": [{"branch": r.branch, "contexts": list(r.contexts)} for r in config.close_on_failure],
        **({"freeze_mode": config.freeze_mode} if config.freeze_mode else {}),
        "queue_on_freeze": config.queue_on_freeze,
        "freeze_deployments": list(config.freeze_deployments),
        "deployments_on_freeze": config.deployments_on_freeze,
        "check_run": config.check_run,
    }
