"""A repo whose App may write check runs, PRs held through real deliveries, and clicks delivered as GitHub
sends them (the emulator's `click`): what tests/test_check_runs*.py share."""

from __future__ import annotations

from typing import Any

from redis import Redis

from core.check_run import NAME
from state.queueing import all_queues
from tests.e2e_support import Service, fixture, service_settings
from tests.emulator import APP_ID, PRIVATE_KEY_PEM, GitHubEmulator
from tests.emulator.seeding import DEFAULT_PERMISSIONS

REPO = "acme/widgets"
HEAD = "5" * 40
INSTALLATION = 3
CHECKS = {**DEFAULT_PERMISSIONS, "issues": "write", "checks": "write"}
RUN_WRITES = r"/check-runs(/\d+)?$"


def start(emu: GitHubEmulator, redis_url: str, *, checks: bool = True, roles: dict[str, str] | None = None,
          config: str | None = None, pulls: int = 1, **overrides: Any) -> Service:
    """acme/widgets (private: a stranger reads nothing) managed through a real installation event, with
    PR #5 (head `HEAD`) and ``pulls - 1`` more; ``checks``: the installation accepted Checks: write."""
    emu.add_installation(INSTALLATION, "acme")
    emu.set_installation_permissions(INSTALLATION, CHECKS if checks else {**DEFAULT_PERMISSIONS, "issues": "write"})
    emu.add_repo(REPO, installation_id=INSTALLATION, private=True)
    emu.add_pull(REPO, 5, head_sha=HEAD, head_ref="feature/login", user="octocat")
    for number in range(6, 5 + pulls):
        emu.add_pull(REPO, number, head_sha=f"{number:040x}", head_ref=f"topic-{number}", user="octocat")
    for login, role in (roles or {}).items():
        emu.set_permission(REPO, login, role)
    if config is not None:
        emu.set_file(REPO, ".github/merge-hold.yml", config)
    svc = Service.start(service_settings(redis_url, emu.url, APP_ID, PRIVATE_KEY_PEM, emu.app_slug, **overrides))
    added = fixture("installation_repositories", "added.payload.json")
    added["installation"]["id"] = INSTALLATION
    added["repositories_added"] = [{"full_name": REPO, "private": True}]
    svc.deliver("installation_repositories", added)
    settle(svc)
    return svc


def comment(svc: Service, login: str, body: str, *, comment_id: int, at: str, number: int = 5,
            association: str = "COLLABORATOR") -> None:
    payload = fixture("issue_comment", "created.payload.json")
    payload["repository"] = {**payload["repository"], "full_name": REPO, "private": True}
    payload["issue"].update(number=number, pull_request={"url": "x"})
    payload["comment"].update(body=body, author_association=association, created_at=at, id=comment_id)
    payload["comment"]["user"] = {**payload["comment"]["user"], "login": login}
    payload["installation"] = {"id": INSTALLATION}
    assert svc.deliver("issue_comment", payload).status_code == 202
    settle(svc)


def settle(svc: Service, rounds: int = 200) -> None:
    """Run every job, the scheduled ones too (a drain that waits for a run's slot, or for urgent writes to
    end, goes on later: here, at once), until nothing is left."""
    for _ in range(rounds):
        svc.drain()
        due = [(queue, job_id) for queue in all_queues(svc.rt.queue)  # the writer's bulk queue too
               for job_id in queue.scheduled_job_registry.get_job_ids()]
        if not due:
            return
        for queue, job_id in due:
            job = queue.fetch_job(job_id)
            queue.scheduled_job_registry.remove(job_id)
            if job is not None:
                queue.enqueue_job(job)
    raise AssertionError("jobs kept scheduling more jobs")


def run_on(emu: GitHubEmulator, sha: str = HEAD) -> dict[str, Any] | None:
    return emu.check_run_shown(REPO, sha, NAME)


def click(svc: Service, emu: GitHubEmulator, identifier: str, login: str, sha: str = HEAD) -> None:
    shown = run_on(emu, sha)
    assert shown is not None, "no run to click on"
    payload = emu.click(REPO, int(shown["id"]), identifier, login)
    assert svc.deliver("check_run", payload).status_code == 202
    settle(svc)


def run_writes(emu: GitHubEmulator) -> tuple[int, int]:
    """(creates, updates) of check runs the emulator took."""
    return emu.count("POST", r"/check-runs$"), emu.count("PATCH", r"/check-runs/\d+$")


def audit_events(redis: Redis, repo: str = REPO) -> list[tuple[str, dict[str, Any]]]:
    import json

    from core import keys

    found = []
    for _id, fields in redis.xrange(keys.history(repo)) or []:
        text = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
                for k, v in (fields or {}).items()}
        found.append((str(text["event"]), json.loads(text["data"])))
    return found
