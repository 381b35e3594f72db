"""Repos the App manages: first sight, bootstrap on installation, config reloads, removal."""

from __future__ import annotations

from datetime import UTC, datetime

from core import keys
from core.repo_config import CONFIG_PATH
from state import audit, branch_freezes, store
from workers.github.pulls import facts_from_pull
from workers.publishing.request import RecomputeRequest, request_recompute
from workers.runtime import Runtime


def ensure_repo(
    rt: Runtime, repo: str, *, installation_id: int | None = None, default_branch: str | None = None,
    private: bool = False,
) -> store.RepoMeta:
    """The repo's metadata, reading its config from GitHub the first time the repo is seen."""
    meta = store.load_repo(rt.redis, repo)
    if meta is not None and meta.config_loaded:
        return meta
    return load_repo_config(rt, repo, installation_id=installation_id, default_branch=default_branch,
                            private=private, previous=meta)


def load_repo_config(
    rt: Runtime, repo: str, *, installation_id: int | None = None, default_branch: str | None = None,
    private: bool = False, previous: store.RepoMeta | None = None, ref: str | None = None,
) -> store.RepoMeta:
    inst = installation_id or (previous.installation_id if previous else None)
    if inst is None:
        inst = rt.github.installation_for(repo)
    branch = default_branch or (previous.default_branch if previous else "main")
    text = rt.github.get_file(repo, CONFIG_PATH, ref=ref or branch)
    meta = store.RepoMeta(installation_id=inst, default_branch=branch, config_text=text, config_loaded=True,
                          private=private or (previous.private if previous else False))
    store.save_repo(rt.redis, repo, meta)
    branch_freezes.publish(rt.redis, repo, datetime.now(UTC))  # its windows, for the hook (design §6)
    return meta


def bootstrap(rt: Runtime, repo: str, installation_id: int, *, default_branch: str | None = None,
              private: bool = False) -> int:
    """Adopt a repo: read its config, list its open PRs (paginated) and publish each one's verdict."""
    from core.prstate import record_facts

    load_repo_config(rt, repo, installation_id=installation_id, default_branch=default_branch,
                     private=private, previous=store.load_repo(rt.redis, repo))
    count = 0
    for pull in rt.github.list_open_pulls(repo):
        number = int(pull["number"])
        facts = facts_from_pull(pull)
        rt.redis.sadd(keys.open_prs(repo), number)
        # The facts and the PR's recompute in one EXEC (or, unchanged, the recompute alone).
        _, changed = store.update_pull(rt.redis, repo, number, lambda s, f=facts: record_facts(s, f),  # type: ignore[misc]
                                       request=RecomputeRequest(rt.queue, repo, number))
        if not changed:
            request_recompute(rt, repo, number)
        count += 1
    audit.record(rt.redis, repo, "repo.bootstrapped", open_prs=count, installation_id=installation_id)
    return count

