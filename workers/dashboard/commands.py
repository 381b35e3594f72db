"""Holds and lifts made on a PR's dashboard page, applied like the webhook handlers apply a comment.

The app checks who may (for its answer on the page) and enqueues `dashboard_command_job`; the job
records the command in the PR's registers through `core.comment_rules.apply_dashboard` — the rules of
a comment by that user — with the same record-then-recompute step as `workers.events.dispatch`, and audits it.
The job's ``at`` is the server clock when the page was submitted (`core.comment_rules.dashboard_time` dates it).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from functools import partial
from typing import Any

from core.comment_rules import DASHBOARD_ORIGIN, apply_dashboard_command
from core.comments import CommentCommand
from core.holds import from_iso
from core.permissions import Permission
from core.prstate import DASHBOARD_REF
from core.repo_config import DEFAULT_CONFIG
from state import audit, store
from state.config_file import repo_config
from workers.events.handler_support import apply_rule
from workers.runtime import current


def command_from(data: dict[str, Any]) -> CommentCommand:
    """The job's command as the comment grammar would have parsed it (``hold`` or ``lift``)."""
    if data.get("kind") == "hold":
        seconds = data.get("seconds")
        return CommentCommand("hold", reason=str(data.get("reason", "")),
                              duration=timedelta(seconds=int(seconds)) if seconds else None)
    return CommentCommand("lift", target=data.get("target") or None)


def dashboard_command_job(repo: str, number: int, data: dict[str, Any]) -> str:
    """Apply one dashboard command: ``data`` has ``kind`` (hold/lift), ``actor``, ``permission`` (the
    actor's role as the app established it), ``is_author``, ``at`` (ISO, the server clock), ``ref``, and
    ``reason``/``seconds`` for a hold or ``target`` (a login or ``all``) and ``seen`` (the time of the hold the
    page showed, optional) for a lift. Returns the outcome."""
    rt = current()
    config = repo_config(store.load_repo(rt.redis, repo))[0] or DEFAULT_CONFIG
    command = command_from(data)
    submitted = from_iso(str(data["at"]))
    if submitted is None:
        raise ValueError(f"a dashboard command needs its time: {data.get('at')!r}")
    ref = str(data.get("ref") or f"{DASHBOARD_REF}{uuid.uuid4().hex}")
    # The rule of `core` dates the command against the state it is applied to, under the state's WATCH.
    rule = partial(apply_dashboard_command, command=command, actor=str(data["actor"]),
                   permission=Permission(int(data["permission"])), is_author=bool(data.get("is_author")),
                   submitted=submitted, seen=from_iso(str(data.get("seen") or "")), ref=ref, config=config)
    _before, outcome, changed = apply_rule(rt, repo, number, rule)
    audit.record(rt.redis, repo, f"hold.{outcome.kind}", number=number, actor=outcome.actor,
                 target=outcome.target, reason=outcome.reason, message=outcome.message, origin=DASHBOARD_ORIGIN)
    return f"{outcome.kind}, {'applied' if changed else 'unchanged'}"
