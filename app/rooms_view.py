"""What `/rooms` shows beside its tables (`app.dashboard_actions.rooms`): this week's freezes and freeze
windows as a picture, which PR holds wait for a PR merge-hold has not seen, and — for a user who may
not act — what would let them (the rules themselves are `app.dashboard_actions`')."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from redis import Redis

from app import timeline
from core import keys
from core.holds import Hold
from core.repo_config import RepoConfig


def extras(redis: Redis, holds: list[Hold], configs: dict[str, RepoConfig], now: datetime, *,
           github_login: str | None, may_freeze_any: bool, may_lift_any: bool) -> dict[str, Any]:
    windows = [(repo, window) for repo, config in configs.items() for window in config.freeze_windows]
    freezes = [h.to_dict() for h in holds if "#" not in h.scope]
    pr_holds = [h for h in holds if "#" in h.scope]
    pipe = redis.pipeline(transaction=False)
    for hold in pr_holds:
        repo, _, number = hold.scope.partition("#")
        pipe.exists(keys.verdict(repo, int(number)))
    unseen = {hold.id for hold, seen in zip(pr_holds, pipe.execute(), strict=True) if not seen}
    rights = []
    if github_login is None:
        rights.append("Freezing needs Sign in with GitHub: a freeze is held by a GitHub user, as from chat.")
    elif not may_freeze_any:
        rights.append("Freezing needs admin access to the repository (for an org, to each of its repositories "
                      "merge-hold manages), or your GitHub login linked to a chat admin's chat user "
                      "(/hold link, in chat).")
    if holds and not may_lift_any:
        rights.append("Lifting another's room hold needs maintain access to its repository (the repo config's "
                      "lift_others_permission); an org-wide one, its holder or an admin token.")
    return {"week": timeline.week_chart(windows, freezes, now) if windows or freezes else None,
            "unseen": unseen, "rights": rights}
