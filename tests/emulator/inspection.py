"""The inspecting half of the emulator's Python API, plus the knobs for faults and limits."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tests.emulator.rulesets import blocked_pulls, merge_blockers
from tests.emulator.state import Fault, RequestRecord, Store


class Inspection(Store):
    @property
    def requests(self) -> list[RequestRecord]:
        """Every request answered since start (or reset_log()), oldest first."""
        with self.lock:
            return list(self.log)

    def count(self, method: str | None, path_regex: str) -> int:
        """Requests whose method matches (None or "*": any) and whose path `re.search`es path_regex."""
        pattern = re.compile(path_regex)
        with self.lock:
            return sum(1 for r in self.log
                       if method in (None, "*", r.method) and pattern.search(r.path) is not None)

    def statuses(self, repo: str, sha: str, context: str | None = None) -> list[dict[str, Any]]:
        """Statuses on one commit, newest first (what GET …/commits/{sha}/statuses lists)."""
        with self.lock:
            found = [s for s in self.all_statuses if s.repo.lower() == repo.lower() and s.sha == sha
                     and context in (None, s.context)]
            return [s.as_dict() for s in reversed(found)]

    def latest_status(self, repo: str, sha: str, context: str = "merge-hold") -> dict[str, Any] | None:
        newest = self.statuses(repo, sha, context)
        return newest[0] if newest else None

    def status_posts(self, context: str | None = "merge-hold") -> list[dict[str, Any]]:
        """Statuses created through the API (not add_status()), oldest first; context None: all."""
        with self.lock:
            return [s.as_dict() for s in self.all_statuses if s.via_api and context in (None, s.context)]

    def statuses_between_ruleset_writes(self, context: str, since: float, *, after: int = 0) -> int:
        """API statuses of ``context`` created between the first and the last ruleset write (create or
        update) at or after ``since`` (the emulator's clock): what a writer that gives way to the
        rulesets must not post. ``after``: from the ruleset write after that many, so that a status
        already on its way when the first was written does not count. 0 when none was written."""
        with self.lock:
            written = sorted(r["updated_at"] for r in self.rulesets.values() if r["updated_at"] >= since)
            if len(written) <= after:
                return 0
            first, last = written[after], written[-1]
            return sum(1 for s in self.all_statuses
                       if s.via_api and s.context == context and first <= s.created_at <= last)

    def merge_blockers(self, repo: str, number: int) -> list[str]:
        """Why GitHub would not merge this PR now (its required checks, by protection and active
        rulesets); empty when it is mergeable."""
        with self.lock:
            return merge_blockers(self, repo, number)

    def mergeable(self, repo: str, number: int) -> bool:
        return not self.merge_blockers(repo, number)

    def unmergeable(self, pulls: Iterable[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        """Of these (repo, number) PRs, the ones GitHub would not merge now, with `merge_blockers`'
        reasons; one pass over the statuses for all of them."""
        with self.lock:
            return blocked_pulls(self, pulls)

    def ruleset(self, ruleset_id: int) -> dict[str, Any] | None:
        with self.lock:
            found = self.rulesets.get(ruleset_id)
            return None if found is None else dict(found)

    def token_mints(self, installation_id: int) -> int:
        with self.lock:
            return self.mints.get(installation_id, 0)

    def redelivered(self) -> list[int]:
        """Delivery ids asked for again through POST /app/hook/deliveries/{id}/attempts, in order."""
        with self.lock:
            return list(self.redeliveries)

    def reset_log(self) -> None:
        """Forget the request log, token-mint counts and redelivery requests (state stays)."""
        with self.lock:
            self.log.clear()
            self.mints.clear()
            self.redeliveries.clear()

    # --- faults and limits -------------------------------------------------------------------------

    def inject(self, method: str, path_regex: str, status: int, *, headers: dict[str, str] | None = None,
               body: Any = None, times: int | None = 1) -> None:
        """The next `times` requests (None: all) matching method ("*": any) and path get this answer,
        before authentication. body None: GitHub's `{"message", "documentation_url"}` for the status."""
        if times is not None and times < 1:
            raise ValueError(f"times must be at least 1 (or None for every request), got {times}")
        with self.lock:
            self.faults.append(Fault(method.upper(), re.compile(path_regex), status,
                                     {k.lower(): v for k, v in (headers or {}).items()}, body, times))

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def secondary_limit(self, writes_per_minute: int | None, writes_per_hour: int | None = None, *,
                        installation_id: int | None = None) -> None:
        """Pace content-creating requests (POST/PATCH/PUT/DELETE outside /app) like GitHub's secondary
        limit, per installation: beyond this many in any 60 s (or any hour) they get 403 with
        retry-after. None switches a window off. GitHub's own figures: 80 a minute, 500 an hour. With
        ``installation_id``: that installation's own windows (the others keep theirs), its count afresh."""
        with self.lock:
            if installation_id is not None:
                self.write_limits[installation_id] = (writes_per_minute, writes_per_hour)
                self.recent_writes.pop(installation_id, None)
                self.refused_by.pop(installation_id, None)
                return
            self.writes_per_minute = writes_per_minute
            self.writes_per_hour = writes_per_hour
            self.write_limits.clear()
            self.recent_writes.clear()
            self.refused_writes = 0
            self.refused_by.clear()

    def writes_in_window(self, installation_id: int | None) -> int:
        """Content-creating requests one installation made in its current hour (counted while a
        secondary limit is on)."""
        with self.lock:
            now = self.clock()
            return sum(1 for t in self.recent_writes.get(installation_id, ()) if t > now - 3600)

    def refused_writes_of(self, installation_id: int | None) -> int:
        with self.lock:
            return self.refused_by.get(installation_id, 0)

    def rate_limit(self, limit: int, *, installation_id: int | None = None) -> None:
        """Each principal's hourly primary budget (default 5000); starts every window afresh. With
        ``installation_id``: that installation's tokens' budget only."""
        with self.lock:
            if installation_id is not None:
                self.rate_limits[f"installation:{installation_id}"] = limit
                self.buckets.pop(f"installation:{installation_id}", None)
                return
            self.rate_limit_per_hour = limit
            self.rate_limits.clear()
            self.buckets.clear()
