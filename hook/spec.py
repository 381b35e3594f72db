"""The guard's spec file: where verdicts come from and what doubt costs (design §6).

A JSON file the user, or the engine that starts agent sessions, writes::

    {"spec_version": 1,
     "verdict_source": "redis://mh-hook:PASSWORD@redis.internal:6379/0",
     "token_file": null,
     "record_file": "/path/to/session-scratch/merge-hold-records.jsonl",
     "on_unknown": "block",
     "on_undetermined": "block-if-any-held",
     "timeout_ms": 800}

- ``verdict_source``: ``redis://`` or ``rediss://`` (a read-only ACL user, see `hook.tools.acl`), or
  ``redis+sentinel://[user:password@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]`` (``rediss+sentinel://``:
  the primary found through Sentinel, `hook.verdicts.sentinel`), or the service's ``http(s)://`` base
  URL, whose bearer token is read from ``token_file``.
- ``on_unknown`` (``block`` | ``allow``, default ``block``): what a detected merge of a PR on a managed
  repo gets when its verdict is missing, stale or unreachable.
- ``on_undetermined`` (``block`` | ``allow`` | ``block-if-any-held``, default ``block-if-any-held``):
  what a merge whose target the command does not reveal gets.
- ``on_lift`` (``block`` | ``allow``, default ``block``): what a tool call that would lift a hold on a
  held PR gets (removing the hold label, a comment or review carrying ``/unhold``, ``/hold cancel`` or
  ``/remove-hold``, dismissing a review): lifting is a person's act.
- ``on_tamper`` (``block-if-any-held`` | ``block`` | ``allow``, default ``block-if-any-held``): what a tool
  call that would weaken the gate gets (forging the ``merge-hold`` status or check run, changing or deleting
  branch protection, its required checks or a ruleset, suspending or uninstalling the App, writing
  ``.github/merge-hold.yml``): a person's act, blocked in a repo that has any hold.
- ``timeout_ms`` (default 800): a hard budget on the whole verdict lookup, connection included.
- Relative ``token_file`` and ``record_file`` paths are relative to the spec file's directory.

Unknown keys are ignored, so an older guard reads a newer engine's file. Anything else wrong raises
`SpecError`, and the guard then fails open with a one-line notice: the required status still decides.
This module avoids `json`, `os` and `dataclasses` at import: it runs on every tool call.
"""

from __future__ import annotations

SPEC_VERSION = 1
"""The only spec shape this guard reads; a different ``spec_version`` is refused, not guessed at."""

ON_UNKNOWN = ("block", "allow")
ON_LIFT = ("block", "allow")
DEFAULT_ON_LIFT = "block"
"""Lifting a hold is a person's act (design §6): an agent's lift is blocked like a merge."""
ON_UNDETERMINED = ("block", "allow", "block-if-any-held")
ON_TAMPER = ("block-if-any-held", "block", "allow")
DEFAULT_ON_TAMPER = "block-if-any-held"
"""Weakening the gate (forging ``merge-hold``, branch protection, rulesets, the App, ``.github/merge-hold.yml``)
is a person's act (design §6): an agent's is blocked in a repo that has any hold."""
DEFAULT_ON_UNKNOWN = "block"
"""Doubt about a managed repo's PR blocks: the hook is a gate, and the user can be asked."""
DEFAULT_ON_UNDETERMINED = "block-if-any-held"
"""An unreadable target blocks only where something is held, so agents on quiet repos are not nagged."""
DEFAULT_TIMEOUT_MS = 800
"""Well inside Claude Code's 10 s hook timeout, and long enough for a TLS handshake across a region."""
MAX_TIMEOUT_MS = 9000
"""Above this the hook's own 10 s timeout would fire first and turn a verdict into a hook error."""

SOURCE_SCHEMES = ("redis://", "rediss://", "redis+sentinel://", "rediss+sentinel://", "http://", "https://")


class SpecError(Exception):
    """The spec file is missing, unreadable or invalid."""


class Spec:
    """A validated spec. A plain class: `dataclasses` costs 20 ms of start-up (it imports `inspect`)."""

    __slots__ = (
        "on_lift",
        "on_tamper",
        "on_undetermined",
        "on_unknown",
        "path",
        "record_file",
        "spec_version",
        "timeout_ms",
        "token_file",
        "verdict_source",
    )

    def __init__(
        self,
        *,
        path: str,
        verdict_source: str,
        token_file: str | None = None,
        record_file: str | None = None,
        on_unknown: str = DEFAULT_ON_UNKNOWN,
        on_undetermined: str = DEFAULT_ON_UNDETERMINED,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        on_lift: str = DEFAULT_ON_LIFT,
        on_tamper: str = DEFAULT_ON_TAMPER,
    ) -> None:
        self.spec_version = SPEC_VERSION
        self.path = path
        self.verdict_source = verdict_source
        self.token_file = token_file
        self.record_file = record_file
        self.on_unknown = on_unknown
        self.on_undetermined = on_undetermined
        self.timeout_ms = timeout_ms
        self.on_lift = on_lift
        self.on_tamper = on_tamper

    @property
    def is_http(self) -> bool:
        return self.verdict_source.startswith(("http://", "https://"))

    def __repr__(self) -> str:
        # The source URL may carry a password: never print it.
        return f"Spec(path={self.path!r}, on_unknown={self.on_unknown!r}, timeout_ms={self.timeout_ms})"


def _relative_to(spec_path: str, value: str) -> str:
    if value.startswith("~"):
        import os.path

        return os.path.expanduser(value)
    if value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        return value
    cut = max(spec_path.rfind("/"), spec_path.rfind("\\"))
    return value if cut < 0 else spec_path[: cut + 1] + value


def _optional_path(data: dict[str, object], key: str, spec_path: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise SpecError(f"{key} must be a non-empty string or null")
    return _relative_to(spec_path, value)


def _choice(data: dict[str, object], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if value is None:
        return default
    if value not in allowed:
        raise SpecError(f"{key} must be one of {', '.join(allowed)} (got {value!r})")
    return str(value)


def parse_spec(data: object, path: str) -> Spec:
    """Validate a decoded spec document."""
    if not isinstance(data, dict):
        raise SpecError("the spec must be a JSON object")
    version = data.get("spec_version")
    if version != SPEC_VERSION or isinstance(version, bool):
        raise SpecError(f"unsupported spec_version {version!r} (this guard reads {SPEC_VERSION})")
    source = data.get("verdict_source")
    if not isinstance(source, str) or not source.startswith(SOURCE_SCHEMES):
        raise SpecError("verdict_source must be a redis://, rediss://, redis+sentinel://, rediss+sentinel://, "
                        "http:// or https:// URL")
    timeout = data.get("timeout_ms", DEFAULT_TIMEOUT_MS)
    if timeout is None:
        timeout = DEFAULT_TIMEOUT_MS
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 0 < timeout <= MAX_TIMEOUT_MS:
        raise SpecError(f"timeout_ms must be an integer from 1 to {MAX_TIMEOUT_MS}")
    spec = Spec(
        path=path,
        verdict_source=source,
        token_file=_optional_path(data, "token_file", path),
        record_file=_optional_path(data, "record_file", path),
        on_unknown=_choice(data, "on_unknown", ON_UNKNOWN, DEFAULT_ON_UNKNOWN),
        on_undetermined=_choice(data, "on_undetermined", ON_UNDETERMINED, DEFAULT_ON_UNDETERMINED),
        timeout_ms=timeout,
        on_lift=_choice(data, "on_lift", ON_LIFT, DEFAULT_ON_LIFT),
        on_tamper=_choice(data, "on_tamper", ON_TAMPER, DEFAULT_ON_TAMPER),
    )
    if spec.is_http and spec.token_file is None:
        raise SpecError("an http(s) verdict_source needs a token_file (the API requires a bearer token)")
    return spec


def load_spec(path: str) -> Spec:
    """Read and validate the spec file at ``path``."""
    from hook.fastjson import JSONError, loads

    try:
        with open(path, "rb") as handle:
            raw = handle.read(1 << 20)
    except OSError as exc:
        raise SpecError(f"cannot read spec {path}: {exc.strerror or exc}") from None
    try:
        data = loads(raw)
    except JSONError as exc:
        raise SpecError(f"spec {path} is not valid JSON: {exc}") from None
    return parse_spec(data, path)
