"""Reading verdict records and held sets: the one reader, for the API, the dashboard, chat, the workers
and the CLI alike (the agent hook keeps its own raw-socket read for its start-up budget).

A leaf: Redis and `core` only, so the web tier can use it without importing the worker stack. The
records are written by the recompute (`workers/publishing/recompute.py`), stored compact by `core.verdict_format`;
the shape read back is `core.verdict.verdict_record`. A record that is missing, unreadable or in an
unknown format reads as None — unknown, which every caller treats as "not established", never as free.
"""

from __future__ import annotations

from typing import Any

from redis import Redis

from core import keys, verdict_format
from state.decoding import as_text

Record = dict[str, Any]


def parse(raw: Any, repo: str, number: int) -> Record | None:
    """The value of ``keys.verdict(repo, number)`` (`core.verdict_format`, either format) in the API shape, or
    None when absent, unreadable or in an unknown format."""
    return verdict_format.decode_verdict(raw, repo, number)


def load(r: Redis, repo: str, number: int) -> Record | None:
    """The verdict record of ``repo#number``."""
    return parse(r.get(keys.verdict(repo, number)), repo, number)


def held_numbers(r: Redis, repo: str) -> list[int]:
    """The PR numbers in the repo's held set, ascending."""
    return sorted(int(n) for n in r.smembers(keys.held_prs(repo)) if as_text(n).isdigit())


def held_records(r: Redis, repos: list[str]) -> list[tuple[str, int, Record | None]]:
    """(repo, number, record or None) for every PR in the held sets of ``repos`` (named as given), by
    repo then number; two round trips whatever the count."""
    pipe = r.pipeline(transaction=False)
    for name in repos:
        pipe.smembers(keys.held_prs(name))
    prs = sorted(
        (name, int(n))
        for name, members in zip(repos, pipe.execute(), strict=True)
        for n in members
        if as_text(n).isdigit()
    )
    pipe = r.pipeline(transaction=False)
    for name, number in prs:
        pipe.get(keys.verdict(name, number))
    return [(name, number, parse(raw, name, number)) for (name, number), raw in zip(prs, pipe.execute(), strict=True)]
