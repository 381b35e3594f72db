"""The rq side of merge-hold, one folder per responsibility (`docs/architecture.md`):

- `intake/`: the pump from the intake list to rq, the redelivery sweep;
- `events/`: one handler module per event family, the tamper watch, deployments;
- `publishing/`: the path from "this PR may have changed" to its status (outbox ← request ← write ←
  drain ← recompute), pacing, locks, merge groups, the freeze ruleset and marks, fan-outs and a scope's
  republish — entered only through its package body, its front door;
- `dashboard/`: holds and lifts placed from the dashboard (the job the web tier queues);
- `chat/`: the chat command job, notifications, exemption news;
- `github/`: the GitHub client (App auth, the dry-run gateway) and PR facts read from its payloads;
- `ops/`: the worker process, the scheduler, the watchdog, the reconcile.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """A job queued by the flat layout names ``workers.funnel.drain_job``: rq cannot import
    ``workers.funnel`` and asks this package for ``funnel.drain_job`` (`core.jobs.MOVED`)."""
    return moved_job(__name__, name)


def moved_job(package: str, name: str) -> Any:
    import importlib

    from core.jobs import moved

    row = moved(package, name)
    if row is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module, _, function = row.address.rpartition(".")
    return getattr(importlib.import_module(module), function)
