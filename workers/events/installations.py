"""`installation` and `installation_repositories`: the App arrives (bootstrap every repo), is suspended
or leaves (the repos' state goes, recorded first), and gains or loses repos."""

from __future__ import annotations

from typing import Any

from core import keys
from core.events import installation_id
from core.outbox import bucket as outbox_bucket
from state import audit
from state.decoding import as_text
from workers.events import uninstalls
from workers.events.bootstrap import bootstrap
from workers.events.tamper import after_installation, forget_gates, on_suspend
from workers.runtime import Runtime


def on_installation(rt: Runtime, payload: dict[str, Any]) -> str:
    action = payload.get("action")
    inst = installation_id(payload)
    if inst is None:
        return "ignored"
    if action == "new_permissions_accepted":
        # A token minted before says the old permissions (Checks: write for the check run, say): mint anew.
        rt.redis.delete(keys.installation_token(inst), keys.check_runs_refused(outbox_bucket(inst)))
    if action in ("created", "unsuspend", "new_permissions_accepted"):
        repos = payload.get("repositories") or rt.github.installation_repos(inst)
        outcome = f"bootstrapped {_bootstrap_all(rt, repos, inst)}"
        # The gates may have changed meanwhile, or be readable now (`workers.events.tamper`).
        return outcome if action == "created" else f"{outcome}; gates: {after_installation(rt, payload)}"
    if action == "suspend":
        on_suspend(rt, payload)  # recorded before the repos' keys go (`workers.events.tamper`)
    if action in ("deleted", "suspend"):
        names = {item["full_name"] for item in payload.get("repositories") or []}
        names |= {as_text(r) for r in rt.redis.smembers(keys.installation_repos(inst))}
        for name in sorted(names):
            uninstalls.forget_repo(rt.redis, name, inst)
            audit.record(rt.redis, name, "repo.dropped", installation_id=inst, action=action)
        if action == "deleted":
            uninstalls.forget_installation(rt.redis, inst, [])
            forget_gates(rt, names)
        return f"dropped {len(names)}"
    return "ignored"


def on_installation_repositories(rt: Runtime, payload: dict[str, Any]) -> str:
    inst = installation_id(payload)
    if inst is None:
        return "ignored"
    added = _bootstrap_all(rt, payload.get("repositories_added") or [], inst)
    for item in payload.get("repositories_removed") or []:
        uninstalls.forget_repo(rt.redis, item["full_name"], inst)
        audit.record(rt.redis, item["full_name"], "repo.dropped", installation_id=inst)
        forget_gates(rt, [item["full_name"]])
    return f"added {added}, removed {len(payload.get('repositories_removed') or [])}"


def _bootstrap_all(rt: Runtime, repos: list[dict[str, Any]], inst: int) -> int:
    for item in repos:
        uninstalls.readopt(rt.redis, item["full_name"])
    return bootstrap(rt, inst, repos)  # one job per repo on the installation's bulk queue
