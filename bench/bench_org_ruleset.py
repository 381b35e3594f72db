"""An org freeze of 240 repositories through one organisation ruleset (design §7 row "org freeze beyond
GitHub's minute"): the installation has Organization administration and the org's plan has org
rulesets, so ``/hold ORG`` is one write to ``/orgs/{org}/rulesets`` and ``/unhold ORG`` another. Per
repository the same freeze would be 240 ruleset writes, more than three of GitHub's minutes.

Measured at the GitHub emulator with GitHub's two secondary write windows enforced (80 a minute, 500 an
hour), `main` of every repo requiring ``merge-hold`` from the App, the pacer at its defaults and two
`merge-hold worker` processes running (the freeze's descriptions are written meanwhile, low priority):
seconds from the chat command until every PR is unmergeable, then from ``/unhold`` until every PR is
mergeable again (budget 15 s each way), the ruleset writes each way (budget 1), and refused writes (0).
Mergeability is the emulator's own reading of active rulesets. ``BENCH_ORG_SMALL=1``: 20 repos.
Redis: ``REDIS_URL`` if set (own queues, orgs and keys, removed afterwards), else a throwaway one.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from bench.bench_freeze import ADMIN, GITHUB_HOUR, GITHUB_MINUTE, Org, Writes, _all, _cleanup, _seed, _timed, _workers
from bench.loadgen import redis_url
from bench.timing import Row
from core.chat_grammar import ChatCommand

REPOS, PER_REPO = 240, 5
SMALL = (20, 3)
BUDGET_SECONDS = 15.0


def _org_mode(emulator: object, org: Org, workdir: Path) -> list[Row]:
    from tests.emulator import GitHubEmulator

    assert isinstance(emulator, GitHubEmulator)
    n, size = len(org.repos), f"{len(org.repos)} repos, {len(org.pulls)} PRs"
    emulator.set_installation_permissions(org.installation, {**ADMIN, "organization_administration": "write"})
    emulator.secondary_limit(GITHUB_MINUTE, GITHUB_HOUR)
    with _workers(org, workdir):
        emulator.reset_log()
        froze, reply = _timed(org, ChatCommand("hold", org.name, reason="incident 4711"), _all(emulator, org, True))
        freeze = Writes.read(emulator)
        if f"org ruleset active over {n} repos" not in reply.text:
            raise RuntimeError(f"unexpected freeze reply: {reply.text}")
        time.sleep(2.0)  # the fan-out's descriptions under way when the thaw comes
        emulator.reset_log()
        thawed, reply = _timed(org, ChatCommand("unhold", org.name), _all(emulator, org, False))
        thaw = Writes.read(emulator)
        refused = emulator.refused_writes
    if "org ruleset disabled" not in reply.text:
        raise RuntimeError(f"unexpected thaw reply: {reply.text}")
    return [
        (f"org freeze, org-ruleset mode, {size}: s until every PR unmergeable", froze, BUDGET_SECONDS,
         f"{freeze.text()}"),
        ("org freeze, org-ruleset mode: ruleset writes", float(freeze.rulesets), 1.0,
         f"per repo it would be {n}"),
        (f"org thaw, org-ruleset mode, {size}: s until every PR mergeable", thawed, BUDGET_SECONDS,
         f"{thaw.text()}"),
        ("org thaw, org-ruleset mode: ruleset writes", float(thaw.rulesets), 1.0, f"per repo it would be {n}"),
        ("org freeze and thaw, org-ruleset mode: writes GitHub refused", float(refused), 0.0,
         f"GitHub's windows: {GITHUB_MINUTE}/min, {GITHUB_HOUR}/h"),
    ]


def run(small: bool | None = None) -> list[Row]:
    from tests.emulator import GitHubEmulator

    if small is None:
        small = os.environ.get("BENCH_ORG_SMALL") == "1"
    repos, per_repo = SMALL if small else (REPOS, PER_REPO)
    tag = uuid.uuid4().hex[:8]
    base = 950_000_000 + int(tag[:5], 16)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        url = stack.enter_context(redis_url(Path(tmp)))
        emulator = stack.enter_context(GitHubEmulator())
        org = _seed(emulator, url, tag, "ruleset", base, repos, per_repo)
        try:
            return _org_mode(emulator, org, Path(tmp))
        finally:
            _cleanup(org.rt.redis, org)


if __name__ == "__main__":
    for row in run("--small" in sys.argv[1:]):
        print(row)
