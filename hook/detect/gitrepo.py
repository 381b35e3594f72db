"""Which GitHub repository and branch a directory is in, read from ``.git`` files the way ``gh`` would.

No git subprocess (a fork costs more than the guard's whole budget, design §7): the git directory is
found by walking up from ``cwd`` (``.git`` may be a ``gitdir:`` file, as in worktrees and
submodules), ``config`` is read from the common directory and ``HEAD`` from the worktree's own.
Repository choice follows gh: ``GH_REPO``, else the remote ``gh repo set-default`` marked
(``remote.<name>.gh-resolved``), else ``upstream``, then ``github``, then ``origin``, then the first.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

GITHUB = "github.com"
_REMOTE_PRIORITY = {"upstream": 3, "github": 2, "origin": 1}
_MAX_CONFIG_BYTES = 1 << 20
MAX_INCLUDES = 10
"""``include.path`` nested deeper than this is not followed (the reader then says it cannot know)."""


def resolve_repo(cwd: str | None, env: Mapping[str, str]) -> str | None:
    """``owner/name`` as gh would pick it: ``GH_REPO`` first, else the git remote of ``cwd``."""
    found = resolve_remote(cwd, env)
    return found[1] if found else None


def resolve_remote(cwd: str | None, env: Mapping[str, str]) -> tuple[str | None, str] | None:
    """``(host, owner/name)``; host is None for github.com (GitHub Enterprise hosts are named)."""
    given = env.get("GH_REPO")
    if given:
        return parse_repo_arg(given)
    config = read_config(cwd)
    if config is None:
        return None
    return choose_remote(remote_urls(config), {name: v for (s, name, k), v in config.items()
                                               if s == "remote" and k == "gh-resolved"})


def choose_remote(urls: list[tuple[str, str]], resolved: Mapping[str, str]) -> tuple[str | None, str] | None:
    """gh's choice among ``[(remote name, URL)]``: the one ``gh repo set-default`` marked (``resolved``: its
    ``gh-resolved`` values), else by name (``upstream``, ``github``, ``origin``), else the first."""
    remotes = [(name, url) for name, url in urls if parse_remote_url(url)]
    for name, url in remotes:
        mark = resolved.get(name)
        parsed = parse_remote_url(url)
        if mark == "base":
            return parsed
        if mark and mark.count("/") == 1 and parsed:  # older gh stored the chosen owner/name
            return parsed[0], mark
    if not remotes:
        return None
    order = sorted(range(len(remotes)), key=lambda i: (-_REMOTE_PRIORITY.get(remotes[i][0], 0), i))
    return parse_remote_url(remotes[order[0]][1])


def current_branch(cwd: str | None) -> str | None:
    """The checked-out branch of ``cwd``'s repository; None when detached or not a repository."""
    dirs = git_dirs(cwd)
    if dirs is None:
        return None
    head = read_file(os.path.join(dirs[0], "HEAD"))
    if head is None or not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


def default_branch(cwd: str | None) -> str | None:
    """The remote's default branch as ``git clone`` recorded it (``refs/remotes/origin/HEAD``)."""
    dirs = git_dirs(cwd)
    head = read_file(os.path.join(dirs[1], "refs", "remotes", "origin", "HEAD")) if dirs else None
    prefix = "ref: refs/remotes/origin/"
    return head.strip()[len(prefix) :] if head and head.startswith(prefix) else None


def git_dirs(cwd: str | None) -> tuple[str, str] | None:
    """``(git_dir, common_dir)`` of the repository holding ``cwd``, walking up to the root."""
    if not cwd:
        return None
    path = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(path, ".git")
        git_dir: str | None = None
        if os.path.isdir(dot_git):
            git_dir = dot_git
        elif os.path.isfile(dot_git):
            text = read_file(dot_git) or ""
            if text.startswith("gitdir:"):
                git_dir = os.path.normpath(os.path.join(path, text[7:].strip()))
        if git_dir is not None:
            common = read_file(os.path.join(git_dir, "commondir"))
            common_dir = os.path.normpath(os.path.join(git_dir, common.strip())) if common else git_dir
            return git_dir, common_dir
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def read_config(cwd: str | None) -> dict[tuple[str, str, str], str] | None:
    """The repository's ``config`` as ``{(section, subsection, key): value}`` (last value wins)."""
    dirs = git_dirs(cwd)
    if dirs is None:
        return None
    text = read_file(os.path.join(dirs[1], "config"))
    return parse_config(text) if text is not None else None


def parse_config(text: str) -> dict[tuple[str, str, str], str]:
    """A config file's keys as ``{(section, subsection, key): value}`` (last wins), a key on its section
    header's line (``[remote "x"] url = …``, which git reads) included."""
    values: dict[tuple[str, str, str], str] = {}
    for header, line in config_lines(text):
        section, subsection = split_header(header)
        key, eq, value = line.partition("=")
        values[(section, subsection, key.strip().lower())] = config_value(value) if eq else "true"
    return values


def config_lines(text: str) -> Iterator[tuple[str, str]]:
    """Every key line of a config file's text, in order, as (header, line): ``header`` the text between the
    brackets of the section it is in ("" before any), ``line`` stripped; a key after a header on the same
    line (``[alias] m = …``) is one too. Blank lines and comments are skipped."""
    header = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line[1 : line.find("]")] if "]" in line else line[1:]
            line = line[line.find("]") + 1 :].strip() if "]" in line else ""
            if not line or line[0] in "#;":
                continue
        yield header, line


def split_header(header: str) -> tuple[str, str]:
    """A section header's text (between the brackets) -> (section, subsection): ``remote "origin"`` (the
    subsection as written, ``\\"`` unescaped) or the old ``remote.origin``; the section lower case."""
    if '"' in header:
        section = header[: header.find('"')].strip().lower()
        return section, header[header.find('"') + 1 : header.rfind('"')].replace('\\"', '"')
    section, _, subsection = header.strip().partition(".")
    return section.lower(), subsection


def config_files(cwd: str | None, env: Mapping[str, str]) -> list[str]:
    """The files git reads its configuration from in ``cwd``, in git's order (a later value wins): the
    system file (unless ``GIT_CONFIG_NOSYSTEM``), the global ones (``$XDG_CONFIG_HOME/git/config``,
    ``~/.gitconfig``), the repository's ``config`` and the worktree's ``config.worktree``."""
    home = env.get("HOME") or ""
    files = [] if env.get("GIT_CONFIG_NOSYSTEM") else ["/etc/gitconfig"]
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    if xdg:
        files.append(os.path.join(xdg, "git", "config"))
    if home:
        files.append(os.path.join(home, ".gitconfig"))
    dirs = git_dirs(cwd)
    if dirs is not None:
        files += [os.path.join(dirs[1], "config"), os.path.join(dirs[0], "config.worktree")]
    return files


def include_path(target: str, including: str, env: Mapping[str, str]) -> str:
    """Where ``include.path = TARGET`` in the file ``including`` points: ``~/`` is the home, a relative path
    is relative to the including file's directory."""
    if target.startswith("~/"):
        return os.path.join(env.get("HOME") or "~", target[2:])
    return os.path.join(os.path.dirname(including), target)


def remote_urls(config: Mapping[tuple[str, str, str], str]) -> list[tuple[str, str]]:
    """``[(remote name, url)]`` in file order, ``url.<base>.insteadOf`` rewrites applied."""
    rewrites = sorted(
        ((prefix, sub) for (section, sub, key), prefix in config.items() if section == "url" and key == "insteadof"),
        key=lambda pair: -len(pair[0]),
    )
    out = []
    for (section, name, key), url in config.items():
        if section == "remote" and key == "url":
            for prefix, base in rewrites:
                if url.startswith(prefix):
                    url = base + url[len(prefix) :]
                    break
            out.append((name, url))
    return out


def parse_remote_url(url: str) -> tuple[str | None, str] | None:
    """``(host, owner/name)`` from an https, ssh (``git@host:o/r.git``, ``ssh://``) or git URL."""
    url = url.strip()
    if "://" in url:
        scheme, _, rest = url.partition("://")
        if scheme.lower() == "file":
            return None
        hostpart, _, path = rest.partition("/")
    elif ":" in url and "/" not in url.split(":", 1)[0]:  # scp-like user@host:path
        hostpart, _, path = url.partition(":")
    else:
        return None
    host = hostpart.rsplit("@", 1)[-1].split(":", 1)[0].lower()
    segments = [s for s in path.split("?")[0].split("/") if s]
    if not host or len(segments) < 2:
        return None
    owner, name = segments[-2], segments[-1]
    if name.endswith(".git"):
        name = name[:-4]
    if not owner or not name:
        return None
    return normalize_host(host), f"{owner}/{name}"


def parse_repo_arg(value: str) -> tuple[str | None, str] | None:
    """A ``-R``/``GH_REPO`` value as gh reads it (``ghrepo.FromFullName``): ``OWNER/REPO``,
    ``HOST/OWNER/REPO`` or a repository URL; None for anything that is not plausibly one."""
    if "://" in value or value.startswith("git@"):
        parsed = parse_remote_url(value)
        return parsed if parsed is not None and plausible_repo(parsed[1]) else None
    segments = value.split("/")
    if len(segments) == 2 and plausible_repo(value):
        return None, value
    if len(segments) == 3 and plausible_host(segments[0]) and plausible_repo("/".join(segments[1:])):
        return normalize_host(segments[0].lower()), "/".join(segments[1:])
    return None


_OWNER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_NAME_CHARS = _OWNER_CHARS | frozenset("._")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.:")
_BRANCH_CHARS = _NAME_CHARS | frozenset("/+@=,")


def plausible_owner(owner: str) -> bool:
    """A GitHub login or organisation: letters, digits and hyphens, not starting with a hyphen."""
    return 0 < len(owner) <= 39 and owner[0] != "-" and all(c in _OWNER_CHARS for c in owner)


def plausible_repo(full_name: str) -> bool:
    """``owner/name`` as GitHub spells repositories (anything else: the guard cannot say which)."""
    owner, sep, name = full_name.partition("/")
    return (bool(sep) and plausible_owner(owner) and 0 < len(name) <= 100 and name not in (".", "..")
            and all(c in _NAME_CHARS for c in name))


def plausible_host(host: str) -> bool:
    return 0 < len(host) <= 253 and "." in host and all(c in _HOST_CHARS for c in host) and host[0] not in ".-:"


def plausible_branch(branch: str) -> bool:
    """A branch name git accepts and gh passes through unchanged (a conservative subset)."""
    return (0 < len(branch) <= 255 and branch[0] in _OWNER_CHARS and branch[0] != "-"
            and not branch.endswith((".lock", "/", ".")) and ".." not in branch and "//" not in branch
            and "@{" not in branch
            and all(c in _BRANCH_CHARS for c in branch))


def normalize_host(host: str) -> str | None:
    if host.startswith("www."):
        host = host[4:]
    if host.startswith("api."):
        host = host[4:]
    if host in (GITHUB, "ssh.github.com"):
        return None
    return host


def config_value(value: str) -> str:
    """A raw git-config value as git reads it: quotes dropped, escapes resolved, a trailing comment cut
    (also `hook.detect.gitconfig`'s, which follows includes)."""
    value = value.strip()
    if not any(c in value for c in '"\\#;'):
        return value  # nothing the loop below would change (most values: URLs, refs, names)
    out, quoted, i = [], False, 0
    while i < len(value):
        c = value[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(value):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(value[i], value[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def read_file(path: str) -> str | None:
    """A git file's text, capped; None when unreadable (also `hook.detect.gitconfig`'s)."""
    # Bytes, then decoded: a text-mode file object costs more than the read (start-up budget); every
    # caller splits lines with splitlines() or strips, so "\r\n" needs no translation.
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
