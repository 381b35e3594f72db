"""The status merge-hold last posted, as remembered in Redis: one writer and one reader of its form.

A PR's head (`core.keys.posted`) and a merge group's commit (`core.keys.group_posted`) each keep the
JSON of the last status posted there, keys sorted, with the commit's SHA beside the status body (and,
on a drained merge group's commit, the `merge-hold/freeze` mark posted with it). The fenced write
(`workers.publishing.write`) compares these bytes with the wanted status' form to skip a write that would
change nothing; the dashboard, the forged-status watch and the incident reader parse them back here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from redis import Redis

from core import keys
from core.status import CONTEXT


def wanted_status(record: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]] | None:
    """The head SHA and status body a verdict record asks for; None when there is nothing to post."""
    if record is None or not record.get("head_sha"):
        return None
    status = {"state": record["state"], "description": record["description"], "context": CONTEXT}
    if record.get("target_url"):
        status["target_url"] = record["target_url"]
    return str(record["head_sha"]), status


def form(sha: str, status: Mapping[str, Any], mark: Mapping[str, Any] | None = None) -> bytes:
    """How a status posted on ``sha`` is remembered (with the freeze ``mark`` posted beside it, if any)."""
    return json.dumps({"sha": sha, **status, **({"mark": mark} if mark else {})}, sort_keys=True).encode()


def parse(raw: bytes | str | None) -> dict[str, Any] | None:
    """A remembered status read back; None when there is none, or it is not this form's JSON object."""
    if not raw:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def on_pr(redis: Redis, repo: str, number: int) -> dict[str, Any] | None:
    """The status last posted on PR ``number``'s head."""
    return parse(redis.get(keys.posted(repo, number)))


def on_group(redis: Redis, repo: str, sha: str) -> dict[str, Any] | None:
    """The status last posted on merge group commit ``sha``."""
    return parse(redis.get(keys.group_posted(repo, sha)))


def shows(posted: Mapping[str, Any] | None, record: Mapping[str, Any] | None) -> bool:
    """Whether the remembered status ``posted`` is the one verdict ``record`` asks for (its commit,
    state and description)."""
    return posted is not None and record is not None and (
        posted.get("sha"), posted.get("state"), posted.get("description")) == (
        record.get("head_sha"), record.get("state"), record.get("description"))
