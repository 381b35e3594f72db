"""Remotes and URL rewrites made inside the command (issue 26 item 5): ``git remote add``, ``set-url [--push]
[--add]``, ``rename``, ``remove``, ``git config remote.NAME.url`` / ``url.BASE.insteadOf`` / ``pushInsteadOf``,
``git -c …`` for one invocation, and the same settings in git's own files, are followed exactly as git follows
them before a push (`hook.detect.remotes`), and as gh follows them when it picks a repository. What cannot be
followed (an edit that may not run, a value pattern, a value only the run knows) is undetermined.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.detect_rows import CLEAN, DET, UND, judge, make_checkout

OTHER = "https://github.com/acme/other.git"

# (command, what it pushes: [(repo, target branch)], determined?)
ROWS: list[tuple[str, list[tuple[str, str]], str]] = [
    # a remote made here
    (f"git remote add gh {OTHER} && git push gh feature:main", [("acme/other", "main")], DET),
    ("git remote add up git@github.com:acme/other.git; git push up HEAD:main", [("acme/other", "main")], DET),
    (f"git remote add -f -t main --no-tags gh {OTHER} && git push gh feature:main", [("acme/other", "main")], DET),
    (f"git remote add --mirror=push mirror {OTHER} && git push mirror", [("acme/other", "*")], DET),
    (f"git config remote.y.url {OTHER} && git push y feature:main", [("acme/other", "main")], DET),
    (f"git config set remote.y.url {OTHER} && git push y feature:main", [("acme/other", "main")], DET),
    (f"git config --add remote.y.url {OTHER} && git push y feature:main", [("acme/other", "main")], DET),
    (f"git -c remote.x.url={OTHER} push x feature:main", [("acme/other", "main")], DET),
    (f"git -c remote.x.url={OTHER} -c remote.x.url=https://github.com/acme/widgets push x feature:main",
     [("acme/other", "main"), ("acme/widgets", "main")], DET),  # a key given twice has two values: both pushed
    (f"git -c remote.x.pushurl={OTHER} -c remote.x.url=https://github.com/acme/widgets push x feature:main",
     [("acme/other", "main")], DET),
    # the checkout's remote changed here
    (f"git remote set-url origin {OTHER} && git push origin feature:main", [("acme/other", "main")], DET),
    (f"git remote set-url --push origin {OTHER} && git push origin feature:main", [("acme/other", "main")], DET),
    (f"git remote set-url --add --push origin {OTHER} && git push origin feature:main", [("acme/other", "main")], DET),
    (f"git remote set-url --add origin {OTHER} && git push origin feature:main",
     [("acme/widgets", "main"), ("acme/other", "main")], DET),
    (f"git config remote.origin.pushurl {OTHER} && git push origin feature:main", [("acme/other", "main")], DET),
    (f"git -c remote.origin.url={OTHER} push origin feature:main", [("acme/widgets", "main"), ("acme/other", "main")],
     DET),  # -c adds a value: git pushes to both
    ("git remote rename origin up && git push up feature:main", [("acme/widgets", "main")], DET),
    # URL rewrites
    ("git -c url.https://github.com/acme/.insteadOf=foo: push foo:widgets feature:main", [("acme/widgets", "main")],
     DET),
    ("git -c url.https://github.com/acme/.pushInsteadOf=foo: push foo:other feature:main", [("acme/other", "main")],
     DET),
    ("git config url.https://github.com/acme/other.insteadOf https://github.com/acme/widgets && "
     "git push origin feature:main", [("acme/other", "main")], DET),
    ("git config --global url.git@github.com:acme/other.pushInsteadOf https://github.com/acme/widgets && "
     "git push origin feature:main", [("acme/other", "main")], DET),
    # not followed exactly: undetermined
    ('git remote add gh "$URL" && git push gh feature:main', [], UND),
    (f"[ -n \"$X\" ] && git remote set-url origin {OTHER}; git push origin feature:main", [], UND),
    (f"git remote set-url origin {OTHER} https://github.com/acme/widgets.git && git push origin feature:main", [], UND),
    ("git config --unset remote.origin.url 'widg.*' && git push origin feature:main", [], UND),
    ("git config -e && git push origin feature:main", [], UND),
    (f"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0={OTHER} git push origin feature:main",
     [], UND),
]

# gh picks the repository among the remotes as they are after the command's edits
GH_ROWS: list[tuple[str, str | None, str]] = [
    (f"git remote add upstream {OTHER} && gh pr merge 7", "acme/other", DET),
    (f"git remote set-url origin {OTHER} && gh pr merge 7", "acme/other", DET),
    (f"git remote add fork {OTHER} && gh pr merge 7", "acme/widgets", DET),
    (f"git remote add fork {OTHER} && gh repo set-default acme/other && gh pr merge 7", "acme/other", DET),
    (f"git remote add fork {OTHER} && gh repo set-default \"$R\" && gh pr merge 7", None, UND),
]

# look-alikes: remotes that are no GitHub repository, remotes gone
LOOK_ALIKES = [
    "git remote remove origin && git push origin feature:main",  # no remote of that name: git pushes nowhere
    "git push https://gitlab.com/acme/widgets.git feature:main",
    "git push git@codeberg.org:acme/widgets.git HEAD:main",
    "git push ssh://git@gitea.example.org/acme/widgets.git feature:main",
]


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path)


@pytest.mark.parametrize(("command", "pushes", "want"), ROWS, ids=[r[0][:70] for r in ROWS])
def test_a_push_follows_the_remotes_the_command_makes(command: str, pushes: list[tuple[str, str]], want: str,
                                                      checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == want, found
    if want == DET:
        assert sorted((m.repo, m.push_target) for m in found.gated) == sorted(pushes), found


@pytest.mark.parametrize(("command", "repo", "want"), GH_ROWS, ids=[r[0][:60] for r in GH_ROWS])
def test_gh_picks_the_repository_after_the_edits(command: str, repo: str | None, want: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == want, found
    assert [(m.repo, m.pr) for m in found.merges] == [(repo, 7)], found


@pytest.mark.parametrize("command", LOOK_ALIKES)
def test_pushes_to_other_places_are_no_github_act(command: str, checkout: Path) -> None:
    got, found = judge(command, checkout)
    assert got == CLEAN, found


def test_git_s_own_files_are_followed_too(tmp_path: Path) -> None:
    """The same settings in ~/.gitconfig and in the repository's config (a pushurl, a rewrite, an include)."""
    repo = make_checkout(tmp_path)
    home = tmp_path / "home"
    (home / ".gitconfig").write_text("[include]\n\tpath = rewrites.gitconfig\n")
    (home / "rewrites.gitconfig").write_text(f'[url "{OTHER.removesuffix(".git")}"]\n'
                                             "\tpushInsteadOf = https://github.com/acme/widgets\n")
    found = judge("git push origin feature:main", repo)[1]
    assert [(m.repo, m.push_target) for m in found.gated] == [("acme/other", "main")], found
    with (repo / ".git" / "config").open("a") as config:
        config.write('[remote "origin"]\n\tpushurl = https://github.com/acme/third.git\n')
    found = judge("git push origin feature:main", repo)[1]
    assert [(m.repo, m.push_target) for m in found.gated] == [("acme/third", "main")], found
    (home / "rewrites.gitconfig").write_text("")
    (home / ".gitconfig").write_text('[includeIf "gitdir:~/work/"]\n\tpath = work.gitconfig\n')
    (home / "work.gitconfig").write_text('[url "https://github.com/acme/x"]\n\tinsteadOf = https://github.com/acme/w\n')
    assert judge("git push origin feature:main", repo)[0] == UND  # a condition the reader does not evaluate


def test_a_rewrite_to_another_host_is_judged_as_the_github_url_it_rewrites(checkout: Path) -> None:
    """It may be a proxy or a mirror of GitHub: conservative, the push is judged where the URL pointed."""
    found = judge("git -c url.https://gitproxy.corp.example/gh/.insteadOf=https://github.com/ "
                  "push https://github.com/acme/x feature:main", checkout)[1]
    assert [(m.repo, m.push_target) for m in found.gated] == [("acme/x", "main")], found
