"""Repository and branch resolution from ``.git`` files, as gh does it: real directories on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from hook.detect.gitrepo import (
    current_branch,
    default_branch,
    parse_remote_url,
    parse_repo_arg,
    resolve_remote,
    resolve_repo,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/o/r.git", (None, "o/r")),
        ("https://github.com/o/r", (None, "o/r")),
        ("https://github.com/o/r/", (None, "o/r")),
        ("http://www.github.com/o/r.git", (None, "o/r")),
        ("https://x-access-token:s3cret@github.com/o/r.git", (None, "o/r")),
        ("git@github.com:o/r.git", (None, "o/r")),
        ("git@github.com:o/r", (None, "o/r")),
        ("ssh://git@github.com/o/r.git", (None, "o/r")),
        ("ssh://git@ssh.github.com:443/o/r.git", (None, "o/r")),
        ("git://github.com/o/r.git", (None, "o/r")),
        ("https://ghe.corp.example/o/r.git", ("ghe.corp.example", "o/r")),
        ("git@ghe.corp.example:o/r.git", ("ghe.corp.example", "o/r")),
        ("ssh://git@GHE.Corp.Example:2222/o/r", ("ghe.corp.example", "o/r")),
        ("https://github.com/o.dot/r-dash.name.git", (None, "o.dot/r-dash.name")),
        ("/srv/git/r.git", None),
        ("file:///srv/git/o/r.git", None),
        ("../sibling", None),
        ("https://github.com/only-owner", None),
    ],
)
def test_remote_urls(url: str, expected: tuple[str | None, str] | None) -> None:
    assert parse_remote_url(url) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("o/r", (None, "o/r")), ("ghe.corp.example/o/r", ("ghe.corp.example", "o/r")),
     ("https://github.com/o/r", (None, "o/r")), ("just-a-name", None), ("a/b/c/d", None), ("/o/", None)],
)
def test_repo_arguments(value: str, expected: tuple[str | None, str] | None) -> None:
    assert parse_repo_arg(value) == expected


def make_repo(root: Path, config: str, head: str = "ref: refs/heads/main\n") -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(config)
    (root / ".git" / "HEAD").write_text(head)
    return root


def remotes(*pairs: tuple[str, str], extra: str = "") -> str:
    return "".join(f'[remote "{name}"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/{name}/*\n'
                   for name, url in pairs) + extra


ORIGIN = ("origin", "git@github.com:me/fork.git")
UPSTREAM = ("upstream", "https://github.com/them/project.git")
GITHUB = ("github", "https://github.com/gh/mirror")
OTHER = ("zzz", "https://github.com/z/z")


@pytest.mark.parametrize(
    ("config", "env", "expected"),
    [
        (remotes(ORIGIN), {}, "me/fork"),
        (remotes(ORIGIN, UPSTREAM), {}, "them/project"),  # upstream beats origin, whatever the order
        (remotes(UPSTREAM, ORIGIN), {}, "them/project"),
        (remotes(ORIGIN, GITHUB), {}, "gh/mirror"),
        (remotes(OTHER, ORIGIN), {}, "me/fork"),
        (remotes(OTHER), {}, "z/z"),
        (remotes(ORIGIN, UPSTREAM, extra='[remote "origin"]\n\tgh-resolved = base\n'), {}, "me/fork"),
        (remotes(ORIGIN, UPSTREAM, extra='[remote "upstream"]\n\tgh-resolved = chosen/repo\n'), {}, "chosen/repo"),
        (remotes(ORIGIN), {"GH_REPO": "env/wins"}, "env/wins"),
        (remotes(("origin", "gh:me/short")) + '[url "git@github.com:"]\n\tinsteadOf = gh:\n', {}, "me/short"),
        ('[remote "origin"]\n  url = "https://github.com/quoted/value.git" ; comment\n', {}, "quoted/value"),
        ('[Remote "origin"]\n\tURL = https://github.com/case/insensitive\n', {}, "case/insensitive"),
        # git reads a key on its section header's line too.
        ('[remote "origin"] url = https://github.com/one/line\n', {}, "one/line"),
        (remotes(ORIGIN, extra='[remote "upstream"] url = https://github.com/one/upstream\n'), {}, "one/upstream"),
        (remotes(("origin", "/local/path.git")), {}, None),
        ("[core]\n\tbare = false\n", {}, None),
    ],
)
def test_resolve_repo_follows_gh(tmp_path: Path, config: str, env: dict[str, str], expected: str | None) -> None:
    make_repo(tmp_path, config)
    assert resolve_repo(str(tmp_path), env) == expected


def test_enterprise_remote_keeps_its_host(tmp_path: Path) -> None:
    make_repo(tmp_path, remotes(("origin", "https://ghe.corp.example/o/r.git")))
    assert resolve_remote(str(tmp_path), {}) == ("ghe.corp.example", "o/r")


def test_subdirectory_walks_up(tmp_path: Path) -> None:
    make_repo(tmp_path, remotes(ORIGIN), "ref: refs/heads/feature/deep\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert resolve_repo(str(deep), {}) == "me/fork"
    assert current_branch(str(deep)) == "feature/deep"


def test_worktree_reads_its_own_head_and_the_common_config(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", remotes(UPSTREAM), "ref: refs/heads/main\n")
    gitdir = main / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/topic\n")
    (gitdir / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {gitdir}\n")
    assert resolve_repo(str(tree), {}) == "them/project"
    assert current_branch(str(tree)) == "topic"
    assert current_branch(str(main)) == "main"


def test_submodule_gitdir_is_relative(tmp_path: Path) -> None:
    modules = tmp_path / ".git" / "modules" / "sub"
    modules.mkdir(parents=True)
    (modules / "config").write_text(remotes(("origin", "https://github.com/sub/module")))
    (modules / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n")
    assert resolve_repo(str(sub), {}) == "sub/module"
    assert current_branch(str(sub)) is None  # detached


def test_default_branch_is_what_clone_recorded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, remotes(ORIGIN))
    assert default_branch(str(repo)) is None
    (repo / ".git" / "refs" / "remotes" / "origin").mkdir(parents=True)
    (repo / ".git" / "refs" / "remotes" / "origin" / "HEAD").write_text("ref: refs/remotes/origin/trunk\n")
    assert default_branch(str(repo)) == "trunk"


@pytest.mark.parametrize("cwd", [None, "", "/nonexistent/dir"])
def test_no_repository(cwd: str | None) -> None:
    assert resolve_repo(cwd, {}) is None
    assert current_branch(cwd) is None
    assert resolve_repo(cwd, {"GH_REPO": "o/r"}) == "o/r"


def test_plain_directory_outside_any_repository(tmp_path: Path) -> None:
    assert resolve_repo(str(tmp_path), {}) is None
    assert current_branch(str(tmp_path)) is None
