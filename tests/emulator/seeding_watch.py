"""Seeding for what the tamper watch and the incidents read: gates weakened the ways people weaken them,
and pull requests merged by someone.

GitHub's own shapes: removing branch protection leaves ``GET …/branches/{b}`` with ``protected: false``
and an empty ``required_status_checks``; a required check's source is its ``app_id`` (``null``: any);
``GET …/rules/branches/{b}`` lists only the rules of *active* rulesets ("Rules in rulesets with
"evaluate" or "disabled" enforcement statuses are not returned"), so disabling a ruleset takes its rules
off every branch until it is enabled again. The rulesets API itself (CRUD, the merge endpoint) is not
modelled here: tests seed the world, then send the webhook GitHub would send.
"""

from __future__ import annotations

from typing import Any

from tests.emulator.state import Store, iso, parse_time

When = str | float | None


class WatchSeeding(Store):
    def _disabled(self) -> dict[int, list[tuple[tuple[str, str], dict[str, Any]]]]:
        """Rules of disabled rulesets, by ruleset id, with the (repo, branch) each applied to."""
        found: dict[int, list[tuple[tuple[str, str], dict[str, Any]]]] = self.__dict__.setdefault(
            "disabled_rulesets", {})
        return found

    def unprotect_branch(self, repo: str, branch: str) -> None:
        """Branch protection deleted (``DELETE …/branches/{b}/protection``)."""
        with self.lock:
            self.protections.pop((self.require_repo(repo).full_name.lower(), branch), None)

    def drop_required_check(self, repo: str, branch: str, context: str = "merge-hold") -> None:
        """The protection stays; ``context`` is no longer among its required checks."""
        with self.lock:
            checks = self._required_checks(repo, branch)
            checks["checks"] = [c for c in checks.get("checks") or [] if c.get("context") != context]
            checks["contexts"] = [c for c in checks.get("contexts") or [] if c != context]

    def unpin_required_check(self, repo: str, branch: str, context: str = "merge-hold") -> None:
        """``context`` stays required, from any source: the App pin (``app_id``) is dropped."""
        with self.lock:
            for check in self._required_checks(repo, branch).get("checks") or []:
                if check.get("context") == context:
                    check["app_id"] = None

    def _required_checks(self, repo: str, branch: str) -> dict[str, Any]:
        protection = self.protections.get((self.require_repo(repo).full_name.lower(), branch))
        if protection is None:
            raise KeyError(f"{repo}@{branch} is not protected: protect_branch() first")
        found: dict[str, Any] = protection["required_status_checks"]
        return found

    def unpin_ruleset_check(self, repo: str, ruleset_id: int, context: str = "merge-hold") -> None:
        """A ruleset's required check on ``context`` loses its ``integration_id`` (any source)."""
        with self.lock:
            for (name, _branch), rules in self.rules.items():
                if name != self.require_repo(repo).full_name.lower():
                    continue
                for rule in rules:
                    if rule.get("ruleset_id") != ruleset_id:
                        continue
                    for check in (rule.get("parameters") or {}).get("required_status_checks") or []:
                        if check.get("context") == context:
                            check.pop("integration_id", None)

    def disable_ruleset(self, repo: str, ruleset_id: int) -> int:
        """Enforcement ``disabled``: the ruleset's rules leave every branch; returns how many rules."""
        with self.lock:
            name = self.require_repo(repo).full_name.lower()
            moved = 0
            for (owner_repo, branch), rules in self.rules.items():
                if owner_repo != name:
                    continue
                keep = [r for r in rules if r.get("ruleset_id") != ruleset_id]
                for rule in rules:
                    if rule.get("ruleset_id") == ruleset_id:
                        self._disabled().setdefault(ruleset_id, []).append(((owner_repo, branch), rule))
                        moved += 1
                rules[:] = keep
            return moved

    def enable_ruleset(self, ruleset_id: int) -> None:
        """Enforcement ``active`` again: the disabled ruleset's rules are back on their branches."""
        with self.lock:
            for where, rule in self._disabled().pop(ruleset_id, []):
                self.rules.setdefault(where, []).append(rule)

    def delete_ruleset(self, repo: str, ruleset_id: int) -> int:
        """The ruleset is deleted: its rules leave every branch for good."""
        moved = self.disable_ruleset(repo, ruleset_id)
        with self.lock:
            self._disabled().pop(ruleset_id, None)
        return moved

    def merge_pull(self, repo: str, number: int, *, by: str, at: When = None) -> str:
        """The PR is merged by ``by`` (``merged_by``), now or at ``at``; returns ``merged_at`` as GitHub
        writes it. GitHub's times have one-second precision: unless ``at`` is given, the merge is put at
        least a second after the PR's last update, so it is the PR's newest snapshot."""
        with self.lock:
            pull = self.require_pull(repo, number)
            when = parse_time(at, max(self.clock(), float(int(pull.updated_at)) + 1))
            pull.state, pull.closed_at, pull.merged_at, pull.merged_by = "closed", when, when, by
            pull.updated_at = max(pull.updated_at, when)
            return iso(when)
