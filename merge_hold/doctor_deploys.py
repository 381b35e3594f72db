"""The deployments half of `merge-hold doctor`: each environment a repo's config freezes
(`freeze_deployments`) and whether merge-hold's custom deployment protection rule is enabled on it.

GitHub asks the App about a deployment only where its rule is enabled (Settings → Environments →
the environment → Deployment protection rules): elsewhere a freeze would not stop the deploy, which is
what this check is for. The config is read from the default branch, as the workers read it.
"""

from __future__ import annotations

import base64
from typing import Any, NamedTuple, Protocol
from urllib.parse import quote

from core.repo_config import CONFIG_PATH, ConfigError


class Answer(Protocol):
    """`merge_hold.doctor_github.Answer`, as far as this module reads it."""

    @property
    def status(self) -> int: ...
    @property
    def body(self) -> Any: ...
    @property
    def message(self) -> str: ...


class Api(Protocol):
    """`merge_hold.doctor_github.Api` (its caller): named here so that neither module imports the other."""

    def call(self, method: str, path: str, auth: str, body: Any = None) -> Answer: ...


class Check(NamedTuple):
    """A finding, in `merge_hold.doctor_github.Check`'s fields (the caller turns it into one)."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def _config_text(api: Api, access: str, repo: str, branch: str) -> str | None:
    answer = api.call("GET", f"/repos/{repo}/contents/{CONFIG_PATH}?ref={quote(branch, safe='')}", access)
    if answer.status != 200 or not isinstance(answer.body, dict) or answer.body.get("type") != "file":
        return None
    return base64.b64decode(str(answer.body.get("content", ""))).decode("utf-8", "replace")


def _rule_of(answer: Any, app_id: int) -> dict[str, Any] | None:
    rules = (answer or {}).get("custom_deployment_protection_rules") if isinstance(answer, dict) else None
    return next((r for r in rules or [] if (r.get("app") or {}).get("id") == app_id), None)


def deploy_checks(api: Api, access: str, repo: str, branch: str, app_id: int) -> list[Check]:
    """One check per environment in the repo's `freeze_deployments`; none when it freezes no deploys."""
    from state.config_file import load_config  # YAML is parsed once, the way the workers read it

    try:
        config = load_config(_config_text(api, access, repo, branch))
    except ConfigError as exc:
        return [Check(f"{repo}: deployments", False, f"the repo config is invalid ({exc}): frozen deploys wait",
                      f"fix {CONFIG_PATH} on {branch}")]
    checks: list[Check] = []
    for environment in config.freeze_deployments:
        name = f"{repo}: deploys to {environment}"
        path = f"/repos/{repo}/environments/{quote(environment, safe='')}/deployment_protection_rules"
        answer = api.call("GET", path, access)
        fix = (f"enable merge-hold under Settings → Environments → {environment} → Deployment protection rules "
               f"in {repo}")
        if answer.status == 404:
            checks.append(Check(name, False, f"{repo} has no environment {environment}: nothing deploys there yet",
                                f"create the environment, then {fix[0].lower()}{fix[1:]}"))
        elif answer.status != 200:
            checks.append(Check(name, False, f"reading its protection rules answered {answer.status}: "
                                f"{answer.message or answer.body!r}", "grant the App Actions: read and "
                                "Deployments: write, and have each installation accept them"))
        else:
            rule = _rule_of(answer.body, app_id)
            if rule is not None and rule.get("enabled"):
                mode = config.deployments_on_freeze
                checks.append(Check(name, True, f"merge-hold's protection rule is enabled (frozen deploys {mode})"))
            else:
                state = "disabled" if rule is not None else "not enabled"
                checks.append(Check(name, False, f"merge-hold's protection rule is {state}: a freeze does not "
                                    "stop these deploys", fix))
    return checks
