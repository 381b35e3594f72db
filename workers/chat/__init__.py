"""Chat: the slash command job (room holds, freezes, subscriptions), notifications, exemption news."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """The dashboard's command job was ``workers.chat.dashboard_holds.dashboard_command_job`` until issue 31
    moved it to `workers.dashboard.commands`: rq, given a job that names the old address, imports this
    package and asks it for ``dashboard_holds.dashboard_command_job`` (`core.jobs.MOVED`)."""
    from workers import moved_job

    return moved_job(__name__, name)
