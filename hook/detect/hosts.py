"""Which URLs address GitHub's API (design §6: a request to another host is no GitHub act).

GitHub's hosts are ``github.com`` and ``api.github.com``, GitHub Enterprise Cloud with data residency
(``api.SUBDOMAIN.ghe.com``), any host whose path has GitHub Enterprise Server's API shape (REST under
``/api/v3``, GraphQL at ``/api/graphql``), and the hosts this machine is configured for: ``GH_HOST``,
``GITHUB_API_URL``/``GITHUB_SERVER_URL`` (GitHub Actions), the hosts ``gh auth login`` wrote to gh's
``hosts.yml``, and the hosts of the current directory's git remotes. A host only the run knows may be any of
them. Anything else — ``http://localhost:3000/api/…``, another forge whose paths look alike (Gitea's
``/api/v1/repos/{o}/{r}/pulls/{n}/merge``) — is not GitHub, and a request there lands nothing the gate
guards. Used for the raw HTTP clients (curl, wget, httpie, PowerShell) and program code; ``gh`` talks to
GitHub by construction.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    class Ctx(Protocol):
        """What this module reads of the detection context (hook/detect/context.py, which calls it back)."""

        env: Mapping[str, str]
        cwd: str | None
        github_hosts: frozenset[str] | None

_GITHUB = frozenset({"github.com", "api.github.com", "www.github.com", "uploads.github.com"})
_ENV_URLS = ("GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_GRAPHQL_URL")
_MAX_HOSTS_BYTES = 1 << 16


def split(url: str) -> tuple[str, list[str]]:
    """``(host, path segments)`` of a URL as an HTTP client reads it: without a scheme, the first segment is
    the host (``curl api.github.com/repos/…``); the host lower case, without credentials or port."""
    _, sep, rest = url.partition("://")
    text = rest if sep else url
    hostpart, _, path = text.partition("/")
    host = hostpart.rsplit("@", 1)[-1].lower()
    if not host.startswith("["):
        host = host.split(":", 1)[0]
    return host, [s for s in path.split("?", 1)[0].split("#", 1)[0].split("/") if s]


def is_github(ctx: Ctx, url: str) -> bool:
    """Whether ``url`` may address GitHub's API (see the module's docstring)."""
    host, segments = split(url)
    if not host or DYN in host or host in _GITHUB or host.endswith(".ghe.com"):
        return True
    if segments[:2] in (["api", "v3"], ["api", "graphql"]):
        return True
    return host in configured(ctx)


def is_git_host(ctx: Ctx, host: str | None) -> bool:
    """Whether a git remote's host (``None``: github.com, as `hook.detect.gitrepo.normalize_host` gives it) is
    GitHub's: github.com, a ``ghe.com`` tenant, or a configured host."""
    return host is None or DYN in host or host.endswith(".ghe.com") or host in _GITHUB or host in configured(ctx)


def configured(ctx: Ctx) -> frozenset[str]:
    """The GitHub hosts this machine is set up for (read once per tool call)."""
    if ctx.github_hosts is not None:
        return ctx.github_hosts
    found: set[str] = set()
    for name in ("GH_HOST", "GH_ENTERPRISE_HOST", *_ENV_URLS):
        value = ctx.env.get(name) or ""
        if value:
            found.add(split(value)[0] if "://" in value else value.lower().split(":", 1)[0])
    found.update(_gh_hosts(ctx))
    found.update(_remote_hosts(ctx.cwd))
    hosts = frozenset(h for h in found if h) | frozenset("api." + h for h in found if h)
    ctx.github_hosts = hosts
    return hosts


def _gh_hosts(ctx: Ctx) -> set[str]:
    """The top-level keys of gh's ``hosts.yml`` (``GH_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/gh``, else
    ``~/.config/gh``)."""
    env = ctx.env
    base = env.get("GH_CONFIG_DIR") or (env.get("XDG_CONFIG_HOME", "") + "/gh" if env.get("XDG_CONFIG_HOME") else (
        env.get("HOME", "") + "/.config/gh" if env.get("HOME") else ""))
    if not base:
        return set()
    try:
        with open(base + "/hosts.yml", "rb") as handle:
            text = handle.read(_MAX_HOSTS_BYTES).decode("utf-8", "replace")
    except OSError:
        return set()
    return {line.split(":", 1)[0].strip().strip("'\"").lower() for line in text.splitlines()
            if line[:1] not in ("", " ", "\t", "#", "-") and ":" in line}


def _remote_hosts(cwd: str | None) -> set[str]:
    """The hosts of the current directory's git remotes, as its config file names them (before this command)."""
    from hook.detect import gitrepo

    config = gitrepo.read_config(cwd) if cwd is not None else None
    hosts = set()
    for _, url in gitrepo.remote_urls(config or {}):
        parsed = gitrepo.parse_remote_url(url)
        if parsed is not None and parsed[0]:
            hosts.add(parsed[0])
    return hosts
