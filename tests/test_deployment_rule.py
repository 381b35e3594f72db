"""The deployment protection answer (`core.deployments`), pure: which freezes cover a deployment, and what
merge-hold answers. A row per case; the end-to-end tests drive the same rule through GitHub's callback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.deployments import APPROVE, MAX_COMMENT, REJECT, WAIT, branch_of, decide, next_change
from core.holds import Hold, Source
from core.repo_config import FreezeWindow, RepoConfig

REPO = "acme/widgets"
NOW = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)  # a Friday
FRIDAY = FreezeWindow("friday", ("fri",), "10:00", "14:00", "UTC", ("main", "release/*"), ("hotfix",))
FROZEN = RepoConfig(freeze_deployments=("production",))


def room(scope: str, *, holder: str = "alice", reason: str = "incident 4711", minutes: int | None = None) -> Hold:
    return Hold(id=f"room:slack:T:{holder}:{scope}", source=Source.ROOM, scope=scope, holder=holder, reason=reason,
                created_at=NOW - timedelta(hours=1),
                expires_at=NOW + timedelta(minutes=minutes) if minutes is not None else None, origin="slack:#ops")


ROWS = [
    # name, config, ref, holds, environment, action, part of the comment
    ("a repo hold", FROZEN, "refs/heads/main", [room(REPO)], "production", WAIT,
     "Waiting: `main` is frozen by @alice: incident 4711. merge-hold approves the deployment to production"),
    ("an org hold, case-insensitive", FROZEN, "refs/heads/main", [room("ACME")], "production", WAIT, "@alice"),
    ("a branch glob that matches", FROZEN, "refs/heads/release/2", [room(f"{REPO}@release/*")], "production",
     WAIT, "`release/2` is frozen"),
    ("a branch glob that does not", FROZEN, "refs/heads/main", [room(f"{REPO}@release/*")], "production",
     APPROVE, "No freeze covers `main`"),
    ("a PR hold", FROZEN, "refs/heads/main", [room(f"{REPO}#5")], "production", APPROVE, "No freeze covers"),
    ("an expired hold", FROZEN, "refs/heads/main", [room(REPO, minutes=-1)], "production", APPROVE, "No freeze"),
    ("two holds", FROZEN, "refs/heads/main", [room(REPO), room("acme", holder="bob")], "production", WAIT,
     "frozen by @alice: incident 4711 (+1 more)"),
    ("a freeze window (exempt labels pass PRs, not deploys)", RepoConfig(freeze_deployments=("production",),
     freeze_windows=(FRIDAY,)), "refs/heads/main", [], "production", WAIT,
     "frozen by friday: freeze friday until Fri 14:00 UTC"),
    ("a freeze window on other branches", RepoConfig(freeze_deployments=("production",), freeze_windows=(FRIDAY,)),
     "refs/heads/dev", [], "production", APPROVE, "No freeze covers `dev`"),
    ("a tag: only a freeze of every branch covers it", FROZEN, "refs/tags/v1.2", [room(f"{REPO}@main")],
     "production", APPROVE, "`refs/tags/v1.2`"),
    ("a tag under a repo hold", FROZEN, "refs/tags/v1.2", [room(REPO)], "production", WAIT, "frozen by @alice"),
    ("no ref: every freeze of the repo covers it", FROZEN, None, [room(f"{REPO}@release/*")], "production", WAIT,
     "this deployment is frozen"),
    ("no ref, a freeze window", RepoConfig(freeze_deployments=("production",), freeze_windows=(FRIDAY,)), None,
     [], "production", WAIT, "frozen by friday"),
    ("reject mode", RepoConfig(freeze_deployments=("production",), deployments_on_freeze="reject"),
     "refs/heads/main", [room(REPO)], "production", REJECT, "Rejected by merge-hold: `main` is frozen by @alice"),
    ("reject mode, unfrozen", RepoConfig(freeze_deployments=("production",), deployments_on_freeze="reject"),
     "refs/heads/dev", [room(f"{REPO}@main")], "production", APPROVE, "No freeze covers"),
    ("an environment not listed", FROZEN, "refs/heads/main", [room(REPO)], "staging", APPROVE,
     "merge-hold does not freeze deployments to staging"),
    ("environment names are exact", FROZEN, "refs/heads/main", [room(REPO)], "Production", APPROVE, "does not"),
    ("a config that cannot be read waits", None, "refs/heads/main", [], "production", WAIT,
     "cannot read this repo's config (bad yaml)"),
]


@pytest.mark.parametrize(("config", "ref", "holds", "environment", "action", "comment"), [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_decide(config: RepoConfig | None, ref: str | None, holds: list[Hold], environment: str, action: str,
                comment: str) -> None:
    decision = decide(config, environment, branch_of(ref), holds, NOW, repo=REPO, config_error="bad yaml")
    assert decision.action == action
    assert comment in decision.comment and len(decision.comment) <= MAX_COMMENT
    assert bool(decision.holds) is (action in (WAIT, REJECT) and config is not None)


def test_an_approval_after_waiting_says_the_freeze_lifted() -> None:
    decision = decide(FROZEN, "production", "main", [], NOW, repo=REPO, waited=True)
    assert decision.comment == "The freeze lifted: merge-hold approves the deployment to production."


def test_a_long_reason_is_cut_to_githubs_limit() -> None:
    decision = decide(FROZEN, "production", "main", [room(REPO, reason="x" * 3000)], NOW, repo=REPO)
    assert decision.action == WAIT and len(decision.comment) == MAX_COMMENT and decision.comment.endswith("…")


def test_the_next_change_is_the_first_expiry_or_window_edge() -> None:
    windowed = RepoConfig(freeze_deployments=("production",), freeze_windows=(FRIDAY,))
    holds = [room(REPO, minutes=30), room("acme", minutes=300)]
    assert next_change(FROZEN, holds, NOW) == NOW + timedelta(minutes=30)
    assert next_change(windowed, holds[1:], NOW) == datetime(2026, 3, 6, 14, 0, tzinfo=UTC)
    assert next_change(FROZEN, [room(REPO)], NOW) is None  # lifted by hand: the fan-out after it re-checks
