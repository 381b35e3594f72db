"""The check run `merge-hold / holds` (issue 29): what each PR's run last showed, whether an installation
refused runs, and the writer's own queue of releases before issue 31 (runs wait on the outbox now)."""

from __future__ import annotations

from core.keys.base import PREFIX, repo_prefix


def check_run_posted(repo: str, number: int) -> str:
    """JSON: the PR's run as last written — ``sha``, ``id`` (GitHub's check run id), ``digest`` of what it
    shows (`core.check_run.digest`), ``blocking``. Deleted when the PR closes."""
    return f"{repo_prefix(repo)}:pr:{number}:check-run"


def check_run_ids(repo: str) -> str:
    """Hash: check run id -> PR number, for a click on a run whose ``pull_requests`` GitHub left empty (a
    fork's head). Entries go with their PR's ``check_run_posted``."""
    return f"{repo_prefix(repo)}:check-run-ids"


def check_runs(bucket: str) -> str:
    """Sorted set of ``repo#number`` whose check run needs writing, at the pacer's lowest priority: answers
    to clicks (rank 0), then PRs held by their own holds (1), then PRs held only by freezes (2), by age.
    Written by releases before issue 31 only: runs wait on the outbox now (``run:repo#N``), and the old
    job moves these there."""
    return f"{PREFIX}:check-runs:{bucket}"


def check_runs_queued(bucket: str) -> str:
    """String, set while a job writing the installation's check runs is queued or scheduled (it is deleted
    when the job starts): changes noted meanwhile queue no second job. Expires as a backstop. Set by
    releases before issue 31 only."""
    return f"{PREFIX}:check-runs-queued:{bucket}"


def check_runs_refused(bucket: str) -> str:
    """String: why GitHub refuses the installation's check runs (no Checks: write); while set (an hour),
    no run goes on the outbox and merge-hold keeps to the status alone."""
    return f"{PREFIX}:check-runs-refused:{bucket}"
