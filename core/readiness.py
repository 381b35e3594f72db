"""What a working installation needs, and how to read GitHub's answers against it (`merge-hold doctor`).

Pure: the doctor fetches the App, the branch and the branch's rules, and hands the JSON here. The
requirements are design §4's events and the permissions the features use; the gate is real only when
the default branch requires the `merge-hold` status *from this App* (policy-bot's README makes the same
point: a required context any integration may post is a gate anyone with write access can open).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.events import EVENTS
from core.status import CONTEXT

LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}

REQUIRED_PERMISSIONS: dict[str, tuple[str, str]] = {
    "metadata": ("read", "repositories and their rules"),
    "contents": ("read", "the repo config file and the default branch"),
    "pull_requests": ("read", "PR heads, bases and labels"),
    "issues": ("write", "answers on the PR (reactions, replies) and the hold label"),
    "statuses": ("write", "the merge-hold status"),
    "merge_queues": ("read", "merge_group events"),
    "checks": ("write", "the check run merge-hold / holds and its buttons (without it: the status alone), "
                        "and check runs for the tree closer"),
    "administration": ("read", "branch protection and ruleset events for the tamper watch"),
    "deployments": ("write", "answering deployment protection requests (freeze_deployments)"),
    "actions": ("read", "the workflow runs whose deployments merge-hold approves"),
}
"""permission -> (level, what for). Every feature's need; the manifest asks for the same."""

REQUIRED_EVENTS: dict[str, str] = {
    name: row.subscribe_for for name, row in EVENTS.items() if row.subscribe_for is not None}
"""event -> what for: the rows of the event table (`core.events`) the App must subscribe to
(`installation*` events reach every App without a subscription)."""


PERMISSION_NAMES = {"metadata": "Metadata", "contents": "Contents", "pull_requests": "Pull requests",
                    "issues": "Issues", "statuses": "Commit statuses", "merge_queues": "Merge queues",
                    "administration": "Administration", "checks": "Checks",
                    "deployments": "Deployments", "actions": "Actions"}
"""GitHub's labels for permissions, as the App settings page shows them."""


def permission_label(name: str, level: str) -> str:
    """``("issues", "write")`` -> ``Issues: write`` (how the App settings page says it)."""
    return f"{PERMISSION_NAMES.get(name, name)}: {level}"


RULESET_ADMINISTRATION = ("write", "merge-hold's freeze ruleset (freeze_mode: ruleset) and the tamper watch")


def required_permissions(freeze_mode: str = "statuses") -> dict[str, tuple[str, str]]:
    """What the App needs: in ``ruleset`` freeze mode it writes its own ruleset (Administration: write);
    otherwise reading rulesets and protection is enough, and an App should ask for no more than it uses."""
    if freeze_mode != "ruleset":
        return dict(REQUIRED_PERMISSIONS)
    return {**REQUIRED_PERMISSIONS, "administration": RULESET_ADMINISTRATION}


def missing_permissions(granted: Mapping[str, str], freeze_mode: str = "statuses") -> list[str]:
    """The required permissions `granted` lacks or grants below the needed level, as labels."""
    found: list[str] = []
    for name, (level, why) in required_permissions(freeze_mode).items():
        have = LEVELS.get(str(granted.get(name, "none")), 0)
        if have < LEVELS[level]:
            found.append(f"{permission_label(name, level)} ({why})")
    return found


def missing_events(subscribed: Sequence[str]) -> list[str]:
    return [f"{name} ({why})" for name, why in REQUIRED_EVENTS.items() if name not in subscribed]


@dataclass(frozen=True)
class Requirement:
    """One place that requires the `merge-hold` context: ``source`` is the App id it must come from
    (None: any source), ``where`` names the branch protection or the ruleset."""

    where: str
    source: int | None


def from_branch(branch: Mapping[str, Any]) -> list[Requirement]:
    """Requirements in `GET /repos/{o}/{r}/branches/{b}`'s ``protection.required_status_checks``:
    ``checks[]`` carries the source (``app_id``; null or -1 for any), the legacy ``contexts[]`` none."""
    checks = (((branch.get("protection") or {}).get("required_status_checks")) or {})
    found: list[Requirement] = []
    pinned_contexts: set[str] = set()
    for check in checks.get("checks") or []:
        if check.get("context") == CONTEXT:
            app_id = check.get("app_id")
            found.append(Requirement("branch protection", app_id if isinstance(app_id, int) and app_id > 0 else None))
            pinned_contexts.add(CONTEXT)
    if CONTEXT in (checks.get("contexts") or []) and CONTEXT not in pinned_contexts:
        found.append(Requirement("branch protection", None))
    return found


def from_rules(rules: Sequence[Mapping[str, Any]]) -> list[Requirement]:
    """Requirements in `GET /repos/{o}/{r}/rules/branches/{b}`: rules of type ``required_status_checks``
    whose ``parameters.required_status_checks[]`` name the context, sourced by ``integration_id``."""
    found: list[Requirement] = []
    for rule in rules:
        if rule.get("type") != "required_status_checks":
            continue
        where = f"ruleset {rule.get('ruleset_id', '?')}" + (
            f" ({rule['ruleset_source']})" if rule.get("ruleset_source") else "")
        for check in (rule.get("parameters") or {}).get("required_status_checks") or []:
            if check.get("context") == CONTEXT:
                source = check.get("integration_id")
                found.append(Requirement(where, source if isinstance(source, int) and source > 0 else None))
    return found


def merge_queue_on(rules: Sequence[Mapping[str, Any]]) -> bool:
    return any(rule.get("type") == "merge_queue" for rule in rules)


@dataclass(frozen=True)
class GateFinding:
    ok: bool
    detail: str
    fix: str = ""


def judge_gate(requirements: Sequence[Requirement], app_id: int, branch: str) -> GateFinding:
    """Pinned anywhere -> ok (every requirement must pass, so one pinned to us makes the gate real);
    required but from any source or another App -> a problem; not required -> a problem."""
    pinned = [r for r in requirements if r.source == app_id]
    if pinned:
        places = ", ".join(sorted({r.where for r in pinned}))
        return GateFinding(True, f"{branch} requires {CONTEXT} from this App ({places})")
    if requirements:
        loose = "; ".join(f"{r.where}: " + ("any source" if r.source is None else f"App {r.source}")
                          for r in requirements)
        return GateFinding(False, f"{branch} requires {CONTEXT} but not from this App ({loose}): "
                                  "anyone who can post a status can open the gate",
                           f"pin the required check's source to this App (app id {app_id}) in the "
                           "branch protection or ruleset")
    return GateFinding(False, f"nothing on {branch} requires {CONTEXT}",
                       f"add a ruleset (or branch protection) on {branch} requiring the status check "
                       f"{CONTEXT} with this App (app id {app_id}) as its source")
