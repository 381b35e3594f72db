"""Where the guard reads verdicts: Redis through a read-only ACL user, or the service's JSON API.

Both answer the same two questions in one batch, so the guard makes one lookup per tool call:

- for a PR (by number, or by head branch through the server's head index): is the repo managed, which
  PR is it, and its verdict record (`core.verdict.verdict_record`; stored compact, `core.verdict_format`) if
  there is one;
- for a repo: is it managed, which of its PRs are held (``block-if-any-held``), each held PR's base, head
  SHA and status description (a ``git push`` onto a base branch; the SessionStart context), and the repo's
  branch freezes (`core.branch_freezes`: a push into a freeze).

Redis: the first round trip carries ``AUTH``/``SELECT`` and an ``MGET verdict managed`` per PR (plus
``GET managed``/``SMEMBERS held``/``HGETALL held-heads``/``GET branch-freezes`` per repo); PRs named by
branch need a second round trip, after their ``head`` index entries. HTTP: one ``GET`` per question over one
kept-alive connection (a repo's is ``/api/v1/repos/{owner}/{repo}/guard``).

Any failure to get an answer (refused, timed out, an error reply, an HTTP error status) raises
`Unreachable`; the decision then applies ``on_unknown``. Records are returned as decoded, unvalidated:
judging them is `hook.decide`'s job.
"""

from __future__ import annotations

import time

from core import keys
from core.verdict_format import expand_held_head, expand_verdict
from hook.fastjson import JSONError, loads
from hook.spec import Spec, SpecError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from hook.verdicts.redis_client import Connection


HOOK_EVENTS_MAXLEN = 100_000
"""The bound the API trims the hook-events stream to (`app.api.HOOK_EVENTS_MAXLEN`; Flask not imported)."""


class Unreachable(Exception):
    """The verdict source gave no usable answer within the budget."""


class PrQuery:
    __slots__ = ("branch", "number", "repo")

    def __init__(self, repo: str, number: int | None = None, branch: str | None = None) -> None:
        self.repo = repo
        self.number = number
        self.branch = branch


class PrAnswer:
    """``number`` is None when a branch has no PR in the head index; ``record`` None when no verdict.
    ``below``: the open PRs it is stacked on, nearest first (`hook.verdicts.stacks`), as (number, record);
    ``stack_problem`` why that chain could not be read to its end."""

    __slots__ = ("below", "managed", "number", "problem", "record", "stack_problem")

    def __init__(
        self, *, managed: bool, number: int | None, record: object = None, problem: str | None = None
    ) -> None:
        self.managed = managed
        self.number = number
        self.record = record
        self.problem = problem
        self.below: list[tuple[int, object]] = []
        self.stack_problem: str | None = None


class RepoAnswer:
    """``heads``: held PR number -> (base branch, head SHA, status description), for the ``git push`` rule
    (`core.keys.held_heads`). ``freezes``: the repo's branch freezes record as decoded, unvalidated (None when
    there is none; `hook.freezes` judges it)."""

    __slots__ = ("freezes", "heads", "held", "managed")

    def __init__(self, *, managed: bool, held: list[int],
                 heads: dict[int, tuple[str, str, str]] | None = None, freezes: object = None) -> None:
        self.managed = managed
        self.held = held
        self.heads = heads or {}
        self.freezes = freezes


def _freezes(raw: object) -> object:
    """The branch freezes record from ``GET`` (JSON text) or the API (an object); undecodable text is
    passed on as text, for `hook.freezes` to refuse (doubt, never "nothing frozen")."""
    if isinstance(raw, (bytes, str)):
        try:
            return loads(raw)
        except JSONError:
            return raw
    return raw


def _heads(raw: object) -> dict[int, tuple[str, str, str]]:
    """Held heads from ``HGETALL`` (a flat list of field, value) or the API (an object); bad entries dropped."""
    if isinstance(raw, list):
        pairs = list(zip(raw[::2], raw[1::2], strict=False))
    elif isinstance(raw, dict):
        pairs = [(str(k), v) for k, v in raw.items()]
    else:
        return {}
    heads: dict[int, tuple[str, str, str]] = {}
    for field, value in pairs:
        number = _number(field)
        if isinstance(value, (bytes, str)):
            try:
                value = loads(value)
            except JSONError:
                continue
        value = expand_held_head(value)
        if number is not None and value is not None:
            base, sha, description = value.get("base"), value.get("head_sha"), value.get("description")
            if isinstance(base, str) and isinstance(sha, str):
                heads[number] = (base, sha, description if isinstance(description, str) else "")
    return heads


class VerdictSource:
    def lookup(
        self, prs: Sequence[PrQuery], repos: Sequence[str]
    ) -> tuple[list[PrAnswer], list[RepoAnswer]]:
        raise NotImplementedError

    def send_events(self, events: list[dict[str, Any]]) -> int:
        """Append ``hook.gate.fired`` events to the server's audit log; returns how many were stored."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def _decode_record(raw: object, repo: str, number: int) -> tuple[object, str | None]:
    """A stored verdict (`core.verdict_format`) in the API shape the judgement reads; a record in a format this
    guard does not know is a problem (``on_unknown``), never free."""
    if raw is None:
        return None, None
    try:
        data = loads(raw if isinstance(raw, (bytes, str)) else b"")
    except JSONError:
        return None, "the verdict record is not valid JSON"
    record = expand_verdict(data, repo, number)
    if record is None:
        return None, "the verdict record is in an unknown format"
    return record, None


def _is_managed(raw: object) -> bool:
    # '1' by contract; anything else present but '0' counts as managed, so doubt enforces.
    return raw not in (None, b"", b"0")


def _number(raw: object) -> int | None:
    try:
        number = int(raw) if isinstance(raw, (bytes, str)) else None
    except ValueError:
        return None
    return number if number is not None and number > 0 else None


def _held_numbers(raw: object) -> list[int]:
    numbers = [_number(item) for item in raw] if isinstance(raw, list) else []
    return sorted(n for n in numbers if n is not None)


class RedisSource(VerdictSource):
    def __init__(self, url: str, *, timeout_s: float) -> None:
        self.budget_ms = round(timeout_s * 1000)
        self.connection: Connection
        if url.partition("://")[0].lower() in ("redis+sentinel", "rediss+sentinel"):
            from hook.verdicts.sentinel import SentinelConnection, parse_sentinel_url

            self.connection = SentinelConnection(parse_sentinel_url(url), timeout_s=timeout_s)
        else:
            from hook.verdicts.redis_client import connect

            self.connection = connect(url, timeout_s=timeout_s)

    def _run(self, commands: list[list[str | bytes | int]]) -> list[object]:
        from hook.verdicts.redis_client import RedisError, ReplyError

        try:
            replies = self.connection.pipeline(commands)
        except TimeoutError:
            raise Unreachable(f"Redis did not answer within the {self.budget_ms} ms time budget") from None
        except (OSError, RedisError) as exc:
            raise Unreachable(f"Redis: {exc}") from None
        for reply in replies:
            if isinstance(reply, ReplyError):
                raise Unreachable(f"Redis refused a read: {reply.message}")
        return replies

    def lookup(
        self, prs: Sequence[PrQuery], repos: Sequence[str]
    ) -> tuple[list[PrAnswer], list[RepoAnswer]]:
        first: list[list[str | bytes | int]] = []
        for query in prs:
            if query.number is not None:
                first.append(["MGET", keys.verdict(query.repo, query.number), keys.managed(query.repo)])
            else:
                first.append(["MGET", keys.head_index(query.repo, query.branch or ""), keys.managed(query.repo)])
        for repo in repos:
            first += [["GET", keys.managed(repo)], ["SMEMBERS", keys.held_prs(repo)],
                      ["HGETALL", keys.held_heads(repo)], ["GET", keys.branch_freezes(repo)]]
        replies = self._run(first)
        answers: list[PrAnswer] = []
        second: list[list[str | bytes | int]] = []
        waiting: list[tuple[PrAnswer, str]] = []
        for query, reply in zip(prs, replies, strict=False):
            value, managed_raw = reply if isinstance(reply, list) and len(reply) == 2 else (None, None)
            if query.number is not None:
                record, problem = _decode_record(value, query.repo, query.number)
                answers.append(PrAnswer(managed=_is_managed(managed_raw), number=query.number,
                                        record=record, problem=problem))
                continue
            answer = PrAnswer(managed=_is_managed(managed_raw), number=_number(value))
            if value is not None and answer.number is None:
                answer.problem = "the head index entry is not a PR number"
            if answer.number is not None and answer.managed:
                second.append(["GET", keys.verdict(query.repo, answer.number)])
                waiting.append((answer, query.repo))
            answers.append(answer)
        rest = replies[len(prs):]
        repo_answers = [
            RepoAnswer(managed=_is_managed(rest[4 * i]), held=_held_numbers(rest[4 * i + 1]),
                       heads=_heads(rest[4 * i + 2]), freezes=_freezes(rest[4 * i + 3]))
            for i in range(len(repos))
        ]
        if second:
            for (answer, repo), value in zip(waiting, self._run(second), strict=True):
                answer.record, answer.problem = _decode_record(value, repo, answer.number or 0)
        return answers, repo_answers

    def send_events(self, events: list[dict[str, Any]]) -> int:
        import json

        commands: list[list[str | bytes | int]] = [
            ["XADD", keys.HOOK_EVENTS, "MAXLEN", "~", HOOK_EVENTS_MAXLEN, "*", "event", "hook.gate.fired",
             "data", json.dumps(event, separators=(",", ":"), sort_keys=True)]
            for event in events
        ]
        return len(self._run(commands)) if commands else 0

    def close(self) -> None:
        self.connection.close()


class HttpSource(VerdictSource):
    """The service's ``/api/v1`` (see `app/api.py`), with ``Authorization: Bearer`` from ``token_file``."""

    def __init__(self, base_url: str, token: str, *, timeout_s: float) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        if not parts.hostname:
            raise SpecError("verdict_source has no host")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.token = token
        self.deadline = time.monotonic() + timeout_s
        self._conn: Any = None

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Unreachable("the verdict API did not answer within the time budget")
        return left

    def _request(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        import http.client
        import json

        if self._conn is None:
            kind = http.client.HTTPSConnection if self.tls else http.client.HTTPConnection
            self._conn = kind(self.host, self.port, timeout=self._left())
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                   "User-Agent": "merge-hold-hook"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            if self._conn.sock is not None:
                self._conn.sock.settimeout(self._left())
            else:
                self._conn.timeout = self._left()
            self._conn.request(method, self.prefix + path, body=data, headers=headers)
            sock = self._conn.sock  # kept: the connection drops it on "Connection: close"
            sock.settimeout(self._left())
            response = self._conn.getresponse()
            sock.settimeout(self._left())
            payload = response.read()
        except TimeoutError:
            self.close()
            raise Unreachable("the verdict API did not answer within the time budget") from None
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise Unreachable(f"verdict API: {exc or type(exc).__name__}") from None
        try:
            decoded = loads(payload) if payload else None
        except JSONError:
            decoded = None
        return response.status, decoded

    def _get(self, path: str) -> dict[str, Any]:
        status, body = self._request("GET", path)
        if status not in (200, 404) or not isinstance(body, dict):
            raise Unreachable(f"verdict API answered {status} on {path}")
        if status == 404 and "managed" not in body:
            raise Unreachable(f"verdict API answered 404 without 'managed' on {path}")
        body["_status"] = status
        return body

    @staticmethod
    def _repo_path(repo: str) -> str:
        from urllib.parse import quote

        owner, _, name = repo.partition("/")
        return f"{quote(owner, safe='')}/{quote(name, safe='')}"

    def lookup(
        self, prs: Sequence[PrQuery], repos: Sequence[str]
    ) -> tuple[list[PrAnswer], list[RepoAnswer]]:
        from urllib.parse import quote

        answers: list[PrAnswer] = []
        for query in prs:
            base = f"/api/v1/verdicts/{self._repo_path(query.repo)}"
            if query.number is not None:
                body = self._get(f"{base}/{query.number}")
            else:
                body = self._get(f"{base}/branches/{quote(query.branch or '', safe='')}")
            found = body.pop("_status") == 200
            managed = bool(body.get("managed", True)) if found else bool(body.get("managed"))
            number = query.number if query.number is not None else _number(str(body.get("number", "")))
            # a 404 may name the PR the head index found (no verdict recorded for it yet)
            if found and number is None:
                answers.append(PrAnswer(managed=managed, number=None,
                                        problem="the verdict record names no PR number"))
                continue
            answers.append(PrAnswer(managed=managed, number=number, record=body if found else None))
        repo_answers = []
        for repo in repos:
            body = self._get(f"/api/v1/repos/{self._repo_path(repo)}/guard")
            held = body.get("held")
            repo_answers.append(RepoAnswer(
                managed=bool(body.get("managed")),
                held=_held_numbers([str(n) for n in held] if isinstance(held, list) else None),
                heads=_heads(body.get("heads")),
                freezes=_freezes(body.get("freezes")),
            ))
        return answers, repo_answers

    def send_events(self, events: list[dict[str, Any]]) -> int:
        status, body = self._request("POST", "/api/v1/hook-events", {"events": events})
        if status not in (200, 201, 202):
            raise Unreachable(f"verdict API answered {status} to the hook events")
        stored = body.get("stored") if isinstance(body, dict) else None
        return stored if isinstance(stored, int) else len(events)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def read_token(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read token_file {path}: {exc}") from None
    if not token or any(c in token for c in "\r\n"):
        raise SpecError(f"token_file {path} must hold one bearer token")
    return token


def open_source(spec: Spec, *, timeout_s: float | None = None) -> VerdictSource:
    """The source a spec names; ``timeout_s`` overrides the spec's budget (the fold is not in a hurry)."""
    budget = spec.timeout_ms / 1000 if timeout_s is None else timeout_s
    if spec.is_http:
        return HttpSource(spec.verdict_source, read_token(spec.token_file or ""), timeout_s=budget)
    from hook.verdicts.redis_client import RedisError

    try:
        return RedisSource(spec.verdict_source, timeout_s=budget)
    except RedisError as exc:
        raise SpecError(f"verdict_source: {exc}") from None
