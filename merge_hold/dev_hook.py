"""The agent guard against `merge-hold dev`'s demo: what `merge-hold hook install --demo` registers.

A dry run on loopback keeps, in ``<data folder>/hook/``:

    spec.json     the guard's spec: verdicts from this server's HTTP API (``verdict_source`` its URL)
    token         the API token it reads them with (scope ``hook-events``: verdicts, and the session's
                  records folded in at its end), 0600, kept while its hash is in the tokens file
    records.jsonl where the guard's records go
    acme-widgets/ a demo checkout of acme/widgets (its ``origin`` is GitHub's acme/widgets), so that a bare
                  ``gh pr merge 42`` run there means acme/widgets#42, as ``gh`` would read it

`merge-hold hook install --demo` (`hook.tools.demo`) registers the guard with that spec for that
checkout (project scope), so an agent started there is blocked from merging the PR `simulate` holds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

HOOK_DIR = "hook"
"""Under the data folder; `hook.tools.demo` reads the same place (pinned by tests/test_dev_hook.py)."""
CHECKOUT = "acme-widgets"
DEMO_REPO = "acme/widgets"
TOKEN_NAME = "demo-hook"
SPEC = {
    "spec_version": 1,
    "token_file": "token",
    "record_file": "records.jsonl",
    "on_unknown": "block",
    "on_undetermined": "block-if-any-held",
    "timeout_ms": 800,
}
"""The spec's fixed part (relative files are relative to the spec); ``verdict_source`` is the server's URL."""
GIT_CONFIG = f"""[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
[remote "origin"]
\turl = https://github.com/{DEMO_REPO}.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
"""


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def kept_token(tokens_file: Path, token_file: Path, name: str, scope: str) -> str:
    """The token kept in ``token_file`` while its hash is still ``name``'s in the tokens file, else a new
    one (any older ``name`` revoked first)."""
    import contextlib

    from app.token_store import parse_grants, token_hash
    from merge_hold.tokens import create, revoke

    with contextlib.suppress(FileNotFoundError):
        token = token_file.read_text(encoding="utf-8").strip()
        stored = parse_grants(tokens_file.read_text(encoding="utf-8")) if tokens_file.exists() else {}
        grant = stored.get(name)
        if token and grant is not None and grant.digest == token_hash(token) and grant.scope == scope:
            return token
    revoke(tokens_file, name)
    token = create(tokens_file, name, scope)
    _write_private(token_file, token + "\n")
    return token


def _checkout(root: Path) -> None:
    """An empty git repository whose origin is acme/widgets (what `git init` and `git remote add` leave)."""
    git = root / ".git"
    for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git / sub).mkdir(parents=True, exist_ok=True)
    head = git / "HEAD"
    if not head.exists():
        head.write_text("ref: refs/heads/main\n", encoding="utf-8")
    (git / "config").write_text(GIT_CONFIG, encoding="utf-8")


def prepare(folder: Path, url: str, tokens_file: Path) -> Path:
    """Write the demo guard's files for the server at ``url``; returns the spec's path."""
    where = folder / HOOK_DIR
    where.mkdir(parents=True, exist_ok=True)
    kept_token(tokens_file, where / "token", TOKEN_NAME, "hook-events")
    spec = where / "spec.json"
    spec.write_text(json.dumps({**SPEC, "verdict_source": url}, indent=1) + "\n", encoding="utf-8")
    _checkout(where / CHECKOUT)
    return spec
