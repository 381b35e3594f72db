"""Path scope (`core.paths`): gitignore-style globs read as git's PATTERN FORMAT documents them, each row
checked against git itself (`git ls-files --others --ignored`) when git is installed; the one deliberate
difference (an exclude inside a matched directory works) is marked and checked to differ."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from core.paths import ChangedFiles, PathsError, check, describe, from_listing, matches, split_list, touches

MIGRATIONS = ["db/migrations/**", "!db/migrations/README.md"]

# (patterns, path, matched, git differs on purpose)
ROWS: list[tuple[list[str], str, bool, bool]] = [
    # "hello.*" matches any file or directory whose name begins with hello., at any depth...
    (["hello.*"], "hello.txt", True, False),
    (["hello.*"], "a/hello.java", True, False),
    # ...and "/hello.*" only at the root.
    (["/hello.*"], "hello.c", True, False),
    (["/hello.*"], "a/hello.java", False, False),
    # "foo/" matches a directory foo and paths underneath it, not a regular file foo.
    (["foo/"], "foo/x.txt", True, False),
    (["foo/"], "a/foo/x.txt", True, False),
    (["foo/"], "foo", False, False),
    # "doc/frotz" and "/doc/frotz" have the same effect: a middle slash anchors at the root.
    (["doc/frotz"], "doc/frotz", True, False),
    (["/doc/frotz"], "doc/frotz/notes.txt", True, False),
    (["doc/frotz"], "a/doc/frotz", False, False),
    # "foo/*" matches foo/test.json and the directory foo/bar, so foo/bar/hello.c is in scope through it.
    (["foo/*"], "foo/test.json", True, False),
    (["foo/*"], "foo/bar/hello.c", True, False),
    (["foo/*"], "foox/test.json", False, False),
    # A leading "**/" matches in all directories; a trailing "/**" everything inside; "/**/" zero or more.
    (["**/foo"], "foo", True, False),
    (["**/foo"], "x/y/foo/bar.c", True, False),
    (["**/foo/bar"], "x/foo/bar", True, False),
    (["abc/**"], "abc/x/y.txt", True, False),
    (["abc/**"], "x/abc/y.txt", False, False),
    (["a/**/b"], "a/b", True, False),
    (["a/**/b"], "a/x/y/b", True, False),
    (["a/**/b"], "a/x/c", False, False),
    (["**"], "any/thing.md", True, False),
    # Other consecutive asterisks are regular asterisks: they do not cross a "/".
    (["foo**bar"], "fooxxbar", True, False),
    (["foo**bar"], "foo/bar", False, False),
    # "?" and brackets, never across "/"; case-sensitive.
    (["?.txt"], "a.txt", True, False),
    (["?.txt"], "ab.txt", False, False),
    (["[a-c].txt"], "b.txt", True, False),
    (["[!a-c].txt"], "b.txt", False, False),
    (["[!a-c].txt"], "d.txt", True, False),
    (["[[:digit:]]*.sql"], "db/001_init.sql", True, False),
    (["*.SQL"], "db/a.sql", False, False),
    # Quoting: "\!" and "\#" for a leading ! or #, "\ " for a trailing space; other trailing spaces dropped.
    (["\\!important!.txt"], "!important!.txt", True, False),
    (["\\#notes"], "#notes", True, False),
    (["notes.txt   "], "notes.txt", True, False),
    (["notes\\ "], "notes ", True, False),
    # "!" excludes what came before; the last pattern that matches decides.
    (["*.sql", "!keep.sql"], "db/a.sql", True, False),
    (["*.sql", "!keep.sql"], "db/keep.sql", False, False),
    (MIGRATIONS, "db/migrations/001_add_users.sql", True, False),
    (MIGRATIONS, "db/migrations/README.md", False, False),
    (MIGRATIONS, "db/seeds.sql", False, False),
    (["*.txt", "!test1/"], "test1/a.txt", True, False),  # the file's own match beats its directory's
    (["/*", "!/docs/"], "docs/guide.md", False, False),  # git's idiom for "everything but docs"
    (["/*", "!/docs/"], "src/main.py", True, False),
    (["*", "!docs/"], "docs/guide.md", True, False),  # as in git: "*" matches the file itself
    # Deliberately unlike git: an exclude inside a matched directory works (git never looks inside).
    (["db/", "!db/README.md"], "db/README.md", False, True),
    (["db/**", "!db/migrations/*.md"], "db/migrations/notes.md", False, True),
    (["*", "!docs/**"], "docs/guide.md", False, True),
]


@pytest.mark.parametrize(("patterns", "path", "matched", "_differs"), ROWS)
def test_patterns_read_as_gitignore_documents(patterns: list[str], path: str, matched: bool, _differs: bool) -> None:
    assert matches(patterns, path) is matched


def git_ignores(folder: Path, patterns: list[str], path: str) -> bool:
    """Whether git, with ``patterns`` as the root's .gitignore, ignores the untracked file ``path``."""
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")
    (folder / ".gitignore").write_text("".join(f"{p}\n" for p in patterns))
    listed = subprocess.run(["git", "-C", str(folder), "-c", "core.ignoreCase=false", "ls-files", "--others",
                             "--ignored", "--exclude-standard", "-z"], check=True, capture_output=True, text=True)
    return path in listed.stdout.split("\0")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: the rows stand on the docs alone")
@pytest.mark.parametrize(("patterns", "path", "matched", "differs"), ROWS)
def test_each_row_is_what_git_says_unless_marked(tmp_path: Path, patterns: list[str], path: str, matched: bool,
                                                 differs: bool) -> None:
    assert git_ignores(tmp_path, patterns, path) is (matched != differs)


@pytest.mark.parametrize(("files", "held"), [
    (ChangedFiles(("db/migrations/002.sql", "app/models.py")), True),
    (ChangedFiles(("db/migrations/README.md", "docs/schema.md")), False),
    (ChangedFiles(()), False),
    (ChangedFiles.unknown("more than 3,000 files"), True),  # never success on doubt
])
def test_a_pr_is_in_scope_when_one_changed_file_matches_or_the_files_are_unknown(files: ChangedFiles,
                                                                                  held: bool) -> None:
    assert touches(MIGRATIONS, files) is held


def test_a_rename_counts_under_both_names() -> None:
    listing = [{"filename": "archive/001.sql", "previous_filename": "db/migrations/001.sql", "status": "renamed"},
               {"filename": "README.md", "status": "modified"}, {"filename": "README.md", "status": "modified"}]
    files = from_listing(listing)
    assert files == ("archive/001.sql", "db/migrations/001.sql", "README.md")
    assert touches(MIGRATIONS, ChangedFiles(files))


@pytest.mark.parametrize(("patterns", "problem"), [
    ([], "at least one pattern"),
    (["!docs/**"], "only `!` excludes match nothing"),
    (["  "], "non-empty string"),
    (["#todo"], "would be a comment"),
    (["db/\nx"], "control character"),
    (["!"], "matches nothing"),
    (["[z-a]"], "matches nothing"),
    (["x" * 256], "at most 255"),
    ([f"dir{i}/" for i in range(51)], "at most 50"),
])
def test_unusable_pattern_lists_are_refused_with_the_reason(patterns: list[str], problem: str) -> None:
    with pytest.raises(PathsError, match=problem):
        check(patterns)


def test_lists_are_split_and_described() -> None:
    assert split_list("db/migrations/**, !db/migrations/README.md,,") == MIGRATIONS
    assert check([*MIGRATIONS, MIGRATIONS[0]]) == tuple(MIGRATIONS)
    assert describe(MIGRATIONS) == "db/migrations/** (not db/migrations/README.md)"
