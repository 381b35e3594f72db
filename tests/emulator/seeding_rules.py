"""Seeding for what `merge-hold doctor` and the PR feedback read: the App's own settings, branch
protection, rulesets' active rules, and the App-manifest conversion codes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tests.emulator.identity import APP_ID
from tests.emulator.state import Store

MERGE_QUEUE_PARAMETERS = {"check_response_timeout_minutes": 60, "grouping_strategy": "ALLGREEN",
                          "max_entries_to_build": 5, "max_entries_to_merge": 5, "merge_method": "MERGE",
                          "min_entries_to_merge": 1, "min_entries_to_merge_wait_minutes": 5}
"""A `merge_queue` rule's parameters as GitHub's rules API documents them."""


class RuleSeeding(Store):
    def set_app(self, *, permissions: dict[str, str] | None = None, events: Iterable[str] | None = None) -> None:
        """What `GET /app` says the App asks for (installations keep their own accepted copy)."""
        with self.lock:
            if permissions is not None:
                self.app_permissions = dict(permissions)
            if events is not None:
                self.app_events = list(events)

    def set_installation_permissions(self, installation_id: int, permissions: dict[str, str],
                                     events: Iterable[str] | None = None) -> None:
        """What an installation accepted; its tokens may do only this (403 otherwise)."""
        with self.lock:
            inst = self.installations[installation_id]
            inst.permissions = dict(permissions)
            if events is not None:
                inst.events = list(events)

    def protect_branch(self, repo: str, branch: str, *, checks: Iterable[tuple[str, int | None]] = (),
                       contexts: Iterable[str] = ()) -> None:
        """Classic branch protection requiring status checks: `checks` as (context, app_id or None for
        any source), `contexts` the legacy list without a source."""
        with self.lock:
            found = self.require_repo(repo)
            pairs = [{"context": c, "app_id": a} for c, a in checks]
            pairs += [{"context": c, "app_id": None} for c in contexts]
            names = list(dict.fromkeys(p["context"] for p in pairs))
            self.protections[(found.full_name.lower(), branch)] = {
                "enabled": True,
                "required_status_checks": {"enforcement_level": "non_admins", "contexts": names, "checks": pairs},
            }

    def add_rule(self, repo: str, branch: str, rule_type: str, parameters: dict[str, Any] | None = None, *,
                 ruleset_id: int | None = None, source: str | None = None) -> int:
        """An active ruleset rule on `branch` (as `GET …/rules/branches/{branch}` lists it); returns the
        ruleset id. `source` defaults to the repository itself (an org ruleset names the org)."""
        with self.lock:
            found = self.require_repo(repo)
            rid = ruleset_id if ruleset_id is not None else self.next_id()
            rule: dict[str, Any] = {"type": rule_type,
                                    "ruleset_source_type": "Organization" if source and "/" not in source
                                    else "Repository",
                                    "ruleset_source": source or found.full_name, "ruleset_id": rid}
            if parameters is not None:
                rule["parameters"] = parameters
            self.rules.setdefault((found.full_name.lower(), branch), []).append(rule)
            return rid

    def require_check_in_ruleset(self, repo: str, branch: str, context: str = "merge-hold",
                                 integration_id: int | None = APP_ID) -> int:
        """A `required_status_checks` rule naming `context`, sourced by `integration_id` (None: any)."""
        check: dict[str, Any] = {"context": context}
        if integration_id is not None:
            check["integration_id"] = integration_id
        return self.add_rule(repo, branch, "required_status_checks", {
            "strict_required_status_checks_policy": False, "do_not_enforce_on_create": False,
            "required_status_checks": [check]})

    def enable_merge_queue(self, repo: str, branch: str) -> int:
        return self.add_rule(repo, branch, "merge_queue", dict(MERGE_QUEUE_PARAMETERS))

    def add_manifest_code(self, code: str, answer: dict[str, Any]) -> None:
        """`POST /app-manifests/{code}/conversions` answers `answer` once (GitHub's codes are single-use
        and expire within an hour)."""
        with self.lock:
            self.manifest_conversions[code] = dict(answer)

    def add_issue(self, repo: str, number: int, *, title: str = "", user: str = "octocat",
                  state: str = "open") -> None:
        """A plain issue (not a PR): what `/hold-for` may wait on."""
        with self.lock:
            found = self.require_repo(repo)
            now = self.clock()
            self.issues[(found.full_name.lower(), number)] = {
                "repo": found.full_name, "number": number, "id": self.next_id(), "title": title or f"Issue {number}",
                "user": user, "state": state, "created_at": now, "updated_at": now,
                "closed_at": now if state == "closed" else None}

    def close_issue(self, repo: str, number: int) -> None:
        with self.lock:
            issue = self.issues[(self.require_repo(repo).full_name.lower(), number)]
            issue.update(state="closed", closed_at=self.clock(), updated_at=self.clock())
