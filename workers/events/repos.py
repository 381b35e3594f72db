"""Repos the App manages: a delivery's repo meta and config, first sight and config reloads (the
bootstrap on installation is `workers.events.bootstrap`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.events import installation_id
from core.repo_config import CONFIG_PATH, DEFAULT_CONFIG, RepoConfig
from state import branch_freezes, store
from state.config_file import repo_config
from workers.runtime import Runtime


def pr_meta(rt: Runtime, repo: str, payload: dict[str, Any]) -> tuple[store.RepoMeta, RepoConfig]:
    """The repo's meta and config as a delivery finds them (the config read from GitHub the first time)."""
    repository = payload.get("repository") or {}
    meta = ensure_repo(rt, repo, installation_id=installation_id(payload),
                       default_branch=repository.get("default_branch"), private=bool(repository.get("private")))
    config, _error = repo_config(meta)
    # Commands are recorded under the defaults while the config is invalid; the verdict is `error`
    # until it is fixed, so nothing merges on the strength of a guess.
    return meta, config or DEFAULT_CONFIG


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
