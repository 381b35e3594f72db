"""Webhook events, one handler module per event family; `dispatch.py` is the delivery job and its table."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """The flat layout's delivery job was ``workers.events.handle_delivery``, and this package now
    stands at that path: rq finds it here (`core.jobs.MOVED`)."""
    from workers import moved_job

    return moved_job(__name__, name)
